#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  int n=atoi(argv[1]); size_t sz=n*4096L;
  int fd=open("/tmp/pf2.dat",O_RDWR|O_CREAT|O_TRUNC,0600);
  char*src=malloc(sz); memset(src,7,sz); write(fd,src,sz);
  for(int rep=0;rep<5;rep++){
  double t0=now();
  char*p=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  pread(fd,p,sz,0);
  double t1=now();
  char*q=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0);
  pread(fd,q,sz,0);
  double t2=now();
  char*r=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  for(size_t i=0;i<sz;i+=4096)r[i]=1;
  double t3=now();
  char*s=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0);
  double t4=now();
  char*w=malloc(65536); double t5=now();
  for(size_t o=0;o<sz;o+=65536)pread(fd,w,65536,o);
  double t6=now();
  printf("pread fresh %.2f  pread populated %.2f  touch %.2f  populate only %.2f  window64k %.2f us/page\n",(t1-t0)/n,(t2-t1)/n,(t3-t2)/n,(t4-t3)/n,(t6-t5)/n);
  munmap(p,sz);munmap(q,sz);munmap(r,sz);munmap(s,sz);}
}
