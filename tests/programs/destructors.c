/* destructors.c — code that runs after main returns: atexit handlers and
   __attribute__((destructor)) functions, with and without a priority.
   gcov dumps from a destructor of reserved priority (100) that runs after
   all of them; ballarus' exit dump must run after them too, or their
   counts are lost.  Each prints, so a build that skips one is caught by its
   output.  */
#include <stdio.h>
#include <stdlib.h>

static int squares;

static int sum_to(int n) {
  int s = 0;
  for (int i = 1; i <= n; i++)
    s += i; /* count(24) */
  return s;
}

static void at_exit_handler(void) {
  printf("atexit %d\n", sum_to(5)); /* count(1) */
}

__attribute__((constructor)) static void early(void) {
  squares = 1; /* count(1) */
}

__attribute__((destructor)) static void late(void) {
  for (int i = 0; i < 4; i++)
    squares += i * i; /* count(4) */
  printf("destructor %d %d\n", squares, sum_to(6)); /* count(1) */
}

__attribute__((destructor(101))) static void later(void) {
  printf("destructor(101) %d\n", sum_to(10) + squares); /* count(1) */
  fflush(stdout); /* count(1) */
}

__attribute__((destructor(200))) static void between(void) {
  if (squares > 10)
    printf("destructor(200) %d\n", squares); /* count(1) */
  else
    printf("destructor(200) small\n"); /* count(0) */
}

int main(void) {
  atexit(at_exit_handler);
  printf("main %d\n", sum_to(3)); /* count(1) */
  return 0;
}
