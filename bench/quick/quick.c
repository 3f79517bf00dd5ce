/* quick.c — the tiny bundled workload of `bench/run.sh --quick` (and of the
 * //bench:quick_test smoke test): no download, compiles in a fraction of a
 * second, runs in about 0.1 s, and still exercises loops, recursion,
 * switches, sorting and string handling so every profiler has branches to
 * count.
 *
 *   quick [SCALE]          SCALE (default 1) multiplies the work
 *
 * Prints checksums only; the output is deterministic (integer arithmetic,
 * a fixed-seed generator) and must be the same for every build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 88172645463325252ULL;
static unsigned next(void) { /* xorshift64 (Marsaglia 2003) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 32);
}

static unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int cmp_uint(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

static unsigned sieve(unsigned n) {
  char *composite = calloc(n + 1, 1);
  unsigned primes = 0;
  for (unsigned i = 2; i <= n; ++i) {
    if (composite[i]) continue;
    ++primes;
    for (unsigned long j = (unsigned long)i * i; j <= n; j += i) composite[j] = 1;
  }
  free(composite);
  return primes;
}

/* A little stack machine: a switch in a loop, like an interpreter. */
static long run_program(unsigned steps) {
  static const unsigned char code[] = {0, 1, 2, 0, 3, 1, 4, 2, 5, 0, 1, 3};
  long stack[64] = {0};
  int sp = 1;
  for (unsigned pc = 0; pc < steps; ++pc) {
    switch (code[pc % sizeof code]) {
      case 0: stack[sp < 63 ? sp++ : sp] = (long)(pc & 255); break;
      case 1: if (sp > 1) { --sp; stack[sp - 1] += stack[sp]; } break;
      case 2: if (sp > 1) { --sp; stack[sp - 1] ^= stack[sp] * 3; } break;
      case 3: stack[sp - 1] = stack[sp - 1] % 1000003; break;
      case 4: if (stack[sp - 1] & 1) stack[sp - 1] = -stack[sp - 1]; break;
      default: stack[sp - 1] >>= 1; break;
    }
  }
  return stack[0] + stack[sp - 1];
}

static unsigned long hash_words(unsigned n) {
  char buf[64];
  unsigned long h = 5381;
  for (unsigned i = 0; i < n; ++i) {
    int len = snprintf(buf, sizeof buf, "w%u-%x", next() % 1000, i);
    for (int k = 0; k < len; ++k) h = h * 33 + (unsigned char)buf[k];
    if (strchr(buf, '7')) h ^= h >> 11;
  }
  return h;
}

int main(int argc, char **argv) {
  unsigned scale = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  if (scale == 0) scale = 1;
  unsigned n = 200000 * scale;
  unsigned *a = malloc(n * sizeof *a);
  for (unsigned i = 0; i < n; ++i) a[i] = next() % 1000000;
  qsort(a, n, sizeof *a, cmp_uint);
  unsigned long sorted_sum = 0;
  for (unsigned i = 0; i < n; i += 97) sorted_sum += a[i];
  free(a);
  printf("fib %u\n", fib(24));
  printf("sorted %lu\n", sorted_sum);
  printf("primes %u\n", sieve(2000000 * scale));
  printf("program %ld\n", run_program(3000000 * scale));
  printf("hash %lu\n", hash_words(100000 * scale));
  return 0;
}
