/* goto_loops.c — path mode's loop entry cuts and computed-goto targets
   (plugin/path_plan.cc): a bytecode interpreter whose handlers hold loops
   whose iterations take one path, one of its labels also entered by a
   plain `goto` from another handler (so it is entered otherwise than by
   the computed goto), loops at a function's very start (`bits`; `halve`,
   whose header is the first block at -O0: its entry edge leaves ENTRY), a
   one-path loop whose body calls a function that may not return, and
   loops that run zero times on some entries.  The program is fixed, so
   every line's count is known.  */
#include <stdio.h>
#include <stdlib.h>

enum { OP_FILL, OP_SUM, OP_TWICE, OP_SHIFT, OP_JNZ, OP_HALT };

static long cells[64];

__attribute__((noinline)) static int bits(unsigned v) {
  int n = 0;
  do {          /* the loop starts the function: its header is entered from ENTRY */
    n++;        /* count(46) */
    v >>= 1;
  } while (v);  /* count(46) */
  return n;     /* count(6) */
}

__attribute__((noinline)) static void halve(unsigned *p) {
  do { *p >>= 1; } while (*p); /* count(10) */
}

__attribute__((noinline)) static void check(long v) {
  if (v < 0) exit(9); /* count(21) */
}

__attribute__((noinline)) static long checked_sum(int n) {
  long s = 0;
  for (int i = 0; i < n; i++) { /* count(27) */
    check(cells[i]);            /* count(21) */
    s += cells[i];
  }
  return s; /* count(6) */
}

static long run(const int *code) {
  static void *dispatch[] = {&&op_fill, &&op_sum, &&op_twice,
                             &&op_shift, &&op_jnz, &&op_halt};
  long acc = 0, k = 3;
  int pc = 0, i, n;
  goto *dispatch[code[pc]];
op_fill:
  n = code[pc + 1];   /* count(6) */
  i = 0;
  while (i < n) {     /* count(21) */
    cells[i] = i + k; /* count(15) */
    i++;
  }
  pc += 2;            /* count(6) */
  goto *dispatch[code[pc]];
op_sum:
  n = code[pc + 1];   /* count(6) */
  for (i = 0; i < n; i++) acc += cells[i]; /* count(21) */
  pc += 2;            /* count(6) */
  if (acc & 1) {       /* count(6) */
    pc -= 1;           /* op_shift steps over one word */
    goto op_shift;
  }
  goto *dispatch[code[pc]];
op_twice:
  acc *= 2;           /* count(3) */
  pc += 1;
  goto *dispatch[code[pc]];
op_shift:             /* entered by the computed goto and by op_sum's goto */
  acc += bits((unsigned)acc) + checked_sum((int)(acc & 7)); /* count(6) */
  pc += 1;
  goto *dispatch[code[pc]];
op_jnz:
  pc = --k ? code[pc + 1] : pc + 2; /* count(3) */
  goto *dispatch[code[pc]];
op_halt:
  return acc;         /* count(1) */
}

int main(void) {
  /* top: fill 5; sum 5; twice; shift; fill 0; sum 0; jnz top; halt */
  static const int program[] = {OP_FILL, 5, OP_SUM, 5, OP_TWICE, OP_SHIFT,
                                OP_FILL, 0, OP_SUM, 0, OP_JNZ,   0,
                                OP_HALT};
  unsigned h = 1000;
  halve(&h);
  printf("result=%ld %u\n", run(program), h); /* count(1) */
  return 0;
}
