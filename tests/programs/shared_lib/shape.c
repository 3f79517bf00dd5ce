/* shape.c — the shared library (built -shared -fPIC and instrumented too):
   its counters live in the library's own module and must reach the profile
   alongside the executable's.  */
#include "shape.h"

static int calls;

long shape_area(int kind, int a, int b) {
  calls++; /* count(12) */
  switch (kind) {
    case 0:
      return (long)a * a; /* count(4) */
    case 1:
      return (long)a * b; /* count(4) */
    default:
      return (long)a * b / 2; /* count(4) */
  }
}

int shape_calls(void) { return calls; }
