/* varies.c — a program whose counts differ between inputs, for the HTML
   report of a combined profile (tests/combined_html_test.cc).  `varies N`
   runs work(N) (a loop whose branch alternates) and, only when N >= 500,
   calls rare() N times: with N = 2, 3, 10, 600, 1000 the loop calling
   rare is hot in two runs and never entered in three. */
#include <stdlib.h>

static int rare(int x) { return x % 7; }

static int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0)
      s += i;
    else
      s -= 1;
  }
  return s;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  int s = work(n);
  if (n >= 500)
    for (int k = 0; k < n; ++k)
      s += rare(k);
  return s == -12345 ? 1 : 0;
}
