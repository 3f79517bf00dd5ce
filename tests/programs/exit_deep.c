/* exit_deep.c — exit() called four frames deep; functions on the call
   chain never return, so their tails must count 0 while their heads count
   once.  The exit status (3) is part of the expected behaviour.  */
#include <stdio.h>
#include <stdlib.h>

static int depth_reached;

static void level3(int v) {
  depth_reached = 3;
  if (v > 40) {
    printf("exiting at depth %d with v=%d\n", depth_reached, v); /* count(1) */
    fflush(stdout);
    exit(3);
  }
  printf("level3 returned normally\n"); /* count(0) */
}

static void level2(int v) {
  for (int i = 0; i < 5; i++)
    v += i; /* count(5) */
  level3(v * 2);
  printf("level2 tail\n"); /* count(0) */
}

static void level1(int v) {
  depth_reached = 1;
  level2(v + 1); /* count(1) */
  printf("level1 tail\n"); /* count(0) */
}

int main(void) {
  int calls = 0;
  for (int i = 0; i < 3; i++)
    calls += i; /* count(3) */
  level1(calls + 10);
  printf("main tail\n"); /* count(0) */
  return 0;
}
