/* computed_goto.c — a tiny bytecode interpreter dispatching with GNU C's
   labels as values (`goto *p`).  The program is fixed, so every opcode's
   execution count is known.  */
#include <stdio.h>

enum { OP_PUSH, OP_ADD, OP_DEC, OP_JNZ, OP_HALT };

static long run(const int *code) {
  static void *dispatch[] = {&&op_push, &&op_add, &&op_dec, &&op_jnz,
                             &&op_halt};
  long stack[8];
  int sp = 0;
  int pc = 0;
  long acc = 0;
  goto *dispatch[code[pc]];
op_push:
  stack[sp++] = code[pc + 1]; /* count(2) */
  pc += 2;
  goto *dispatch[code[pc]];
op_add:
  acc += stack[sp - 1] * stack[sp - 2]; /* count(12) */
  pc += 1;
  goto *dispatch[code[pc]];
op_dec:
  stack[sp - 1]--; /* count(12) */
  pc += 1;
  goto *dispatch[code[pc]];
op_jnz:
  pc = stack[sp - 1] ? code[pc + 1] : pc + 2; /* count(12) */
  goto *dispatch[code[pc]];
op_halt:
  return acc * 100 + sp; /* count(1) */
}

int main(void) {
  /* push 7; push 12; loop: add; dec; jnz loop; halt */
  static const int program[] = {OP_PUSH, 7,      OP_PUSH, 12, OP_ADD,
                                OP_DEC,  OP_JNZ, 4,       OP_HALT};
  printf("result=%ld\n", run(program));
  return 0;
}
