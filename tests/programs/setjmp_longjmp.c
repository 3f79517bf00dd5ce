/* setjmp_longjmp.c — longjmp across several frames back into a setjmp in
   main, repeatedly.  GCC models the return from setjmp as an abnormal edge;
   gcov replaces it by a fake ENTRY edge, which is what this program
   exercises.  */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static int unwound;

static void thrower(int depth, int code) {
  if (depth == 0)
    longjmp(env, code); /* count(4) */
  thrower(depth - 1, code); /* count(10) */
  unwound++;                /* count(0) */
}

static int work(int i) {
  if (i % 2 == 0)
    thrower(i / 2 + 1, i + 1); /* count(4) */
  return i * i; /* count(4) */
}

int main(void) {
  volatile int i = 0;
  volatile long total = 0;
  volatile int jumps = 0;
  int code = setjmp(env);
  if (code != 0) {
    jumps++; /* count(4) */
    total += code * 100;
  }
  while (i < 8) {
    int k = i++;
    total += work(k);
  }
  printf("total=%ld jumps=%d unwound=%d\n", (long)total, (int)jumps, unwound);
  return 0;
}
