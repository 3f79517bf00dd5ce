/* setjmp_entry.c — setjmp in the first block of main (as in GCC's
   gcov-7.c): the block holding the setjmp call is entered from ENTRY, so
   gcov adds no fake ENTRY edge for its second returns and its counts are
   not a circulation ("edge 2->1 would need a negative count").  ballarus
   adds that fake ENTRY edge to its own model (not to GCC's CFG), so the
   longjmp re-entries are counted there and verify passes; the line counts
   stay gcov's.  */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static int val;

static void bounce(int v) {
  if (v < 3)
    longjmp(env, v + 1); /* count(2) */
  val += 100;            /* count(1) */
}

int main(void) {
  int retval;
  if ((retval = setjmp(env))) {
    val += retval;       /* count(2) */
  }
  bounce(val);           /* count(3) */
  printf("val=%d\n", val); /* count(1) */
  return 0;
}
