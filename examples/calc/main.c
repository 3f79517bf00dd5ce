/* main.c — reads statements from a file (or stdin) and runs them; see
   calc.h.  Exit status: 0 if every statement ran, 1 if any failed, 2 if the
   input cannot be read.  `quit` stops early: later lines are not run.  */
#include <stdio.h>
#include <string.h>

#include "calc.h"

int main(int argc, char **argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: calc [FILE]\n");
    return 2;
  }
  FILE *in = stdin;
  if (argc == 2 && strcmp(argv[1], "-") != 0) {
    in = fopen(argv[1], "r");
    if (!in) {
      perror(argv[1]);
      return 2;
    }
  }
  struct calc c = {0};
  char line[512];
  int lineno = 0, errors = 0;
  while (fgets(line, sizeof line, in)) {
    lineno++;
    long value = 0;
    char err[128];
    enum calc_status st = calc_run_line(&c, line, &value, err, sizeof err);
    if (st == CALC_QUIT) break;
    if (st == CALC_VALUE) {
      printf("%ld\n", value);
    } else if (st == CALC_ERROR) {
      fprintf(stderr, "line %d: %s\n", lineno, err);
      errors++;
    }
  }
  if (in != stdin) fclose(in);
  printf("%d lines, %d errors, %d variables\n", lineno, errors, c.n_vars);
  return errors ? 1 : 0;
}
