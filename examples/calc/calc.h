/* calc.h — a tiny line-oriented calculator: the ballarus example program.

   Each input line is a statement:
     let NAME = EXPR     assign a variable
     print EXPR          print a value
     EXPR                print a value too
     # ...               comment (also blank lines)
     quit                stop reading (the early-exit path)
   EXPR has + - * / % with the usual precedence, unary minus, parentheses,
   integer literals, variables and the builtins fib(n), fact(n), gcd(a, b).

   calc.c holds the lexer and the recursive-descent evaluator; main.c reads
   the lines.  The mix of loops, a switch, recursion and error exits gives
   the profiler something to count.  */
#ifndef CALC_H
#define CALC_H

enum { CALC_MAX_VARS = 32, CALC_NAME_LEN = 16 };

struct calc {
  int n_vars;
  char names[CALC_MAX_VARS][CALC_NAME_LEN];
  long values[CALC_MAX_VARS];
};

/* Outcome of one statement. */
enum calc_status { CALC_OK, CALC_VALUE, CALC_ERROR, CALC_QUIT };

/* Runs one line.  On CALC_VALUE *value is the result; on CALC_ERROR `err`
   (errlen bytes) says what went wrong.  */
enum calc_status calc_run_line(struct calc *c, const char *line, long *value,
                               char *err, int errlen);

long calc_fib(long n);

#endif
