/* calc.c — lexer and recursive-descent evaluator of the example calculator
   (grammar in calc.h).  Errors unwind through `p->failed`: every parse
   function returns early once it is set.  */
#include "calc.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum tok { T_END, T_NUM, T_NAME, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT,
           T_LPAREN, T_RPAREN, T_COMMA, T_ASSIGN, T_BAD };

struct parser {
  struct calc *c;
  const char *s;      /* next unread character */
  enum tok tok;       /* current token */
  long num;           /* its value if T_NUM */
  char name[CALC_NAME_LEN];
  int failed;
  char *err;
  int errlen;
};

static void fail(struct parser *p, const char *what) {
  if (!p->failed) snprintf(p->err, p->errlen, "%s", what);
  p->failed = 1;
}

static void next(struct parser *p) {
  while (*p->s == ' ' || *p->s == '\t') p->s++;
  char ch = *p->s;
  if (ch == '\0' || ch == '\n' || ch == '#') {
    p->tok = T_END;
    return;
  }
  p->s++;
  switch (ch) {
    case '+': p->tok = T_PLUS; break;
    case '-': p->tok = T_MINUS; break;
    case '*': p->tok = T_STAR; break;
    case '/': p->tok = T_SLASH; break;
    case '%': p->tok = T_PERCENT; break;
    case '(': p->tok = T_LPAREN; break;
    case ')': p->tok = T_RPAREN; break;
    case ',': p->tok = T_COMMA; break;
    case '=': p->tok = T_ASSIGN; break;
    default:
      if (isdigit((unsigned char)ch)) {
        long v = ch - '0';
        while (isdigit((unsigned char)*p->s)) v = v * 10 + (*p->s++ - '0');
        p->num = v;
        p->tok = T_NUM;
      } else if (isalpha((unsigned char)ch) || ch == '_') {
        int n = 0;
        p->name[n++] = ch;
        while (isalnum((unsigned char)*p->s) || *p->s == '_') {
          if (n < CALC_NAME_LEN - 1) p->name[n++] = *p->s;
          p->s++;
        }
        p->name[n] = '\0';
        p->tok = T_NAME;
      } else {
        p->tok = T_BAD;
      }
  }
}

long calc_fib(long n) { return n < 2 ? n : calc_fib(n - 1) + calc_fib(n - 2); }

static long fact(long n) { return n <= 1 ? 1 : n * fact(n - 1); }

static long gcd(long a, long b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    long t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int lookup(const struct calc *c, const char *name) {
  for (int i = 0; i < c->n_vars; i++)
    if (strcmp(c->names[i], name) == 0) return i;
  return -1;
}

static long expr(struct parser *p);

static void expect(struct parser *p, enum tok t, const char *what) {
  if (p->failed) return;
  if (p->tok != t) {
    fail(p, what);
    return;
  }
  next(p);
}

/* NAME(args) for the builtins; p->tok is the '(' after the name. */
static long call(struct parser *p, const char *fn) {
  long args[2] = {0, 0};
  int n = 0;
  next(p);
  for (;;) {
    long v = expr(p);
    if (p->failed) return 0;
    if (n == 2) {
      fail(p, "too many arguments");
      return 0;
    }
    args[n++] = v;
    if (p->tok != T_COMMA) break;
    next(p);
  }
  expect(p, T_RPAREN, "expected ')' after arguments");
  if (p->failed) return 0;
  if (strcmp(fn, "fib") == 0 && n == 1) {
    if (args[0] < 0 || args[0] > 40) fail(p, "fib: argument out of range 0..40");
    return p->failed ? 0 : calc_fib(args[0]);
  }
  if (strcmp(fn, "fact") == 0 && n == 1) {
    if (args[0] < 0 || args[0] > 20) fail(p, "fact: argument out of range 0..20");
    return p->failed ? 0 : fact(args[0]);
  }
  if (strcmp(fn, "gcd") == 0 && n == 2) return gcd(args[0], args[1]);
  fail(p, "unknown function or wrong number of arguments");
  return 0;
}

static long primary(struct parser *p) {
  if (p->failed) return 0;
  switch (p->tok) {
    case T_NUM: {
      long v = p->num;
      next(p);
      return v;
    }
    case T_NAME: {
      char name[CALC_NAME_LEN];
      memcpy(name, p->name, sizeof name);
      next(p);
      if (p->tok == T_LPAREN) return call(p, name);
      int i = lookup(p->c, name);
      if (i < 0) {
        fail(p, "undefined variable");
        return 0;
      }
      return p->c->values[i];
    }
    case T_MINUS:
      next(p);
      return -primary(p);
    case T_LPAREN: {
      next(p);
      long v = expr(p);
      expect(p, T_RPAREN, "expected ')'");
      return v;
    }
    case T_END:
      fail(p, "unexpected end of line");
      return 0;
    default:
      fail(p, "unexpected character");
      return 0;
  }
}

static long term(struct parser *p) {
  long v = primary(p);
  while (!p->failed && (p->tok == T_STAR || p->tok == T_SLASH || p->tok == T_PERCENT)) {
    enum tok op = p->tok;
    next(p);
    long r = primary(p);
    if (p->failed) break;
    if (op == T_STAR) {
      v *= r;
    } else if (r == 0) {
      fail(p, "division by zero");
    } else {
      v = op == T_SLASH ? v / r : v % r;
    }
  }
  return v;
}

static long expr(struct parser *p) {
  long v = term(p);
  while (!p->failed && (p->tok == T_PLUS || p->tok == T_MINUS)) {
    enum tok op = p->tok;
    next(p);
    long r = term(p);
    v = op == T_PLUS ? v + r : v - r;
  }
  return v;
}

static int starts_word(const char *s, const char *w) {
  size_t n = strlen(w);
  return strncmp(s, w, n) == 0 && !isalnum((unsigned char)s[n]) && s[n] != '_';
}

enum calc_status calc_run_line(struct calc *c, const char *line, long *value,
                               char *err, int errlen) {
  struct parser p = {.c = c, .s = line, .err = err, .errlen = errlen};
  while (*p.s == ' ' || *p.s == '\t') p.s++;
  if (starts_word(p.s, "quit")) return CALC_QUIT;
  if (starts_word(p.s, "let")) {
    p.s += 3;
    next(&p);
    if (p.tok != T_NAME) {
      fail(&p, "expected a name after 'let'");
      return CALC_ERROR;
    }
    char name[CALC_NAME_LEN];
    memcpy(name, p.name, sizeof name);
    next(&p);
    expect(&p, T_ASSIGN, "expected '=' after the name");
    long v = expr(&p);
    if (!p.failed && p.tok != T_END) fail(&p, "unexpected text after the expression");
    if (p.failed) return CALC_ERROR;
    int i = lookup(c, name);
    if (i < 0) {
      if (c->n_vars == CALC_MAX_VARS) {
        fail(&p, "too many variables");
        return CALC_ERROR;
      }
      i = c->n_vars++;
      memcpy(c->names[i], name, sizeof name);
    }
    c->values[i] = v;
    return CALC_OK;
  }
  if (starts_word(p.s, "print")) p.s += 5;
  next(&p);
  if (p.tok == T_END) return CALC_OK; /* blank line or comment */
  *value = expr(&p);
  if (!p.failed && p.tok != T_END) fail(&p, "unexpected text after the expression");
  return p.failed ? CALC_ERROR : CALC_VALUE;
}
