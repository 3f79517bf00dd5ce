/* main.c — calls into libshape.so a known number of times.  */
#include <stdio.h>

#include "shape.h"

int main(void) {
  long total = 0;
  for (int i = 0; i < 12; i++)
    total += shape_area(i % 3, i + 1, i + 2); /* count(12) */
  printf("total=%ld calls=%d\n", total, shape_calls());
  return 0;
}
