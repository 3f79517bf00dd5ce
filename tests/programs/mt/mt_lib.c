/* mt_lib.c — the library mt.c's dlopen scenario opens and closes.  */
#define NOIPA __attribute__((noipa))

#ifdef __cplusplus
extern "C" {
#endif

NOIPA unsigned long lib_work(unsigned long x) {
  if (x & 1) return 3 * x + 1;
  return x / 2;
}

unsigned long lib_loop(unsigned long seed, unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; i++) s += lib_work(seed + i);
  return s;
}

#ifdef __cplusplus
}
#endif
