#include "shapes.h"

#include <string.h>

int shape_known(const char *kind) {
  return strcmp(kind, "square") == 0 || strcmp(kind, "circle") == 0 ||
         strcmp(kind, "triangle") == 0;
}

long shape_area(const char *kind, long size) {
  if (strcmp(kind, "square") == 0) return size * size;
  if (strcmp(kind, "circle") == 0) {
    long a = 0;
    for (long i = 0; i < size * size; i++) a += 3;
    return a;
  }
  if (strcmp(kind, "triangle") == 0) return size * size / 2;
  return -1;
}
