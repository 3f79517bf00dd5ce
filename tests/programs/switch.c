/* switch.c — a dense switch (a jump table at -O2) and a sparse switch
   (a compare tree), each driven over 0..99 so every count is known.  */
#include <stdio.h>

static int dense(int v) {
  switch (v % 8) {
    case 0:
      return 3; /* count(13) */
    case 1:
      return 5; /* count(13) */
    case 2:
      return 7; /* count(13) */
    case 3:
      return 11; /* count(13) */
    case 4:
      return 13; /* count(12) */
    case 5:
      return 17; /* count(12) */
    case 6:
      return 19; /* count(12) */
    default:
      return 23; /* count(12) */
  }
}

static int sparse(int v) {
  int r = 0;
  switch (v) {
    case 1:
      r = 1; /* count(1) */
      break;
    case 10:
      r = 2; /* count(1) */
      /* fall through */
    case 77:
      r += 40; /* count(2) */
      break;
    case 1000:
      r = 9; /* never reached */
      break;
    case 64:
    case 65:
      r = 6; /* count(2) */
      break;
    default:
      r = -1; /* count(95) */
  }
  return r;
}

int main(void) {
  long sum = 0;
  for (int v = 0; v < 100; v++) {
    sum = sum * 3 + dense(v) + 7 * sparse(v);
    sum %= 1000003;
  }
  printf("switch sum=%ld\n", sum);
  return 0;
}
