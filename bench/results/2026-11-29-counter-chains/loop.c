#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) long scan(const unsigned char *p, long n, unsigned char c) {
  long k = 0;
  for (long i = 0; i < n; i++) { if (p[i] == c) k++; }
  return k;
}
__attribute__((noinline)) long match(const unsigned char *a, const unsigned char *b, long n) {
  long i = 0;
  while (i < n && a[i] == b[i]) i++;
  return i;
}
int main(int argc, char **argv) {
  long n = 1 << 20; unsigned char *a = malloc(n), *b = malloc(n);
  for (long i = 0; i < n; i++) a[i] = b[i] = (unsigned char)(i * 7 >> 3);
  a[n-1] = 1; b[n-1] = 2;
  long s = 0;
  for (int r = 0; r < 300; r++) { s += scan(a, n, (unsigned char)r); s += match(a, b, n); }
  printf("%ld\n", s);
  return 0;
}
