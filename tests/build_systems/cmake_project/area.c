#include <stdio.h>
#include <stdlib.h>

#include "shapes.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: area KIND SIZE\n");
    return 2;
  }
  if (!shape_known(argv[1])) {
    fprintf(stderr, "unknown shape %s\n", argv[1]);
    return 1;
  }
  printf("area %ld\n", shape_area(argv[1], atol(argv[2])));
  return 0;
}
