/* hot.c — input-dependent counts for the report tests (reports_tools_test).
   `hot N` classifies 0..N-1 by remainder mod 3; every count below is
   derived from N by hand in the test.  A second build adds the
   REBUILT block to main only, so classify's CFG stays the same. */
#include <stdio.h>
#include <stdlib.h>

static int classify(int v) {
  if (v % 3 == 0)
    return 0;
  if (v % 3 == 1)
    return 1;
  return 2;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 9;
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < n; i++)
    counts[classify(i)]++;
#ifdef REBUILT
  if (counts[0] > 100)
    puts("many");
#endif
  printf("%d %d %d\n", counts[0], counts[1], counts[2]);
  return 0;
}
