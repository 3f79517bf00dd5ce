/* page-fault-cost.c — the cost of a page fault on this machine: writes one
 * byte to each of N fresh anonymous pages, then reads one byte of each of N
 * others, and prints microseconds per page for both (docs/performance.md,
 * "Runtime dump: copies and page faults").
 *
 * usage: gcc -O2 bench/tools/page-fault-cost.c -o pf && taskset -c 1 ./pf 1000
 */
#include <stdlib.h>
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s PAGES\n", argv[0]); return 2; }
  int n = atoi(argv[1]);
  struct timespec a, b;
  char *p = mmap(0, n * 4096L, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  clock_gettime(CLOCK_MONOTONIC, &a);
  volatile long s = 0;
  for (int i = 0; i < n; i++) p[i * 4096L] = 1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  char *q = mmap(0, n * 4096L, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  struct timespec c;
  for (int i = 0; i < n; i++) s += q[i * 4096L];
  clock_gettime(CLOCK_MONOTONIC, &c);
  printf("write fault %.2f us/page, read fault %.2f us/page\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/1e3/n, ((c.tv_sec-b.tv_sec)*1e9+(c.tv_nsec-b.tv_nsec))/1e3/n);
}
