#include <stdlib.h>
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
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
