/* goto_recursion.c — backward and forward goto, direct and mutual
   recursion, and early returns.  */
#include <stdio.h>

static int fib(int n) {
  if (n < 2)
    return n; /* count(89) */
  return fib(n - 1) + fib(n - 2); /* count(88) */
}

static int is_odd(int n);
static int is_even(int n) {
  if (n == 0)
    return 1; /* count(1) */
  return is_odd(n - 1); /* count(5) */
}
static int is_odd(int n) {
  if (n == 0)
    return 0;
  return is_even(n - 1); /* count(5) */
}

/* Returns the index of the first multiple of `k` in a[0..n), or -1;
   several early returns.  */
static int find(const int *a, int n, int k) {
  if (n <= 0)
    return -1; /* count(1) */
  if (k == 0)
    return -2; /* count(1) */
  for (int i = 0; i < n; i++)
    if (a[i] % k == 0)
      return i; /* count(2) */
  return -1; /* count(1) */
}

static int gcd_goto(int a, int b) {
  int steps = 0;
again:
  steps++;
  if (b == 0)
    goto done; /* count(1) */
  {
    int t = a % b;
    a = b;
    b = t;
  }
  goto again;
done:
  return a * 1000 + steps; /* count(1) */
}

int main(void) {
  static const int a[] = {3, 5, 7, 9, 10, 11};
  int r1 = fib(10);
  int r2 = is_even(10);
  int r3 = find(a, 6, 5) * 100 + find(a, 6, 2) * 10 + find(a, 0, 3) +
           find(a, 6, 0) + find(a, 6, 13);
  int r4 = gcd_goto(1071, 462);
  printf("fib=%d even=%d find=%d gcd=%d\n", r1, r2, r3, r4);
  return 0;
}
