#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
long ctr[16] __attribute__((aligned(64)));
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 300000000L
int main(int argc,char**argv){
  int which=atoi(argv[1]);
  syscall(SYS_arch_prctl, ARCH_SET_GS, which==5?0UL:(unsigned long)ctr);
  double t0=now();
  long *p=ctr;
  switch(which){
  case 0: for(long i=0;i<N;i++) __asm__ volatile("addq $1, ctr+8(%%rip)":::"memory"); break;
  case 1: for(long i=0;i<N;i++) __asm__ volatile("addq $1, 8(%0)"::"r"(p):"memory"); break;
  case 2: for(long i=0;i<N;i++) __asm__ volatile("addq $1, %%gs:8":::"memory"); break;
  case 3: for(long i=0;i<N;i++) __asm__ volatile("movq ctr+8(%%rip),%%rax; addq $1,%%rax; movq %%rax,ctr+8(%%rip)":::"rax","memory"); break;
  case 4: for(long i=0;i<N;i++) __asm__ volatile("movq 8(%0),%%rax; addq $1,%%rax; movq %%rax,8(%0)"::"r"(p):"rax","memory"); break;
  case 6: for(long i=0;i<N;i++) __asm__ volatile("addq $1, %%gs:8(%0)"::"r"(0L):"memory"); break;
  case 5: for(long i=0;i<N;i++) __asm__ volatile("addq $1, %%gs:ctr+8(%%rip)"::: "memory"); break;
  }
  printf("%d %.3f s  %ld\n",which,now()-t0, ctr[1]+ *(long*)((char*)ctr+8));
  return 0;
}
