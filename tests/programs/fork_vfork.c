/* fork_vfork.c — processes that return twice.  fork() in a helper: each
   child returns from spawn() into main and leaves through exit(), so the
   child's counts (which start from zero, as with gcov's __gcov_fork)
   continue activations of spawn() and main() that began in the parent:
   ballarus counts the child's return from fork as a re-entry, and its
   profile and the merged one stay flow-conserving.  vfork(): the child
   runs in the parent's memory until _exit(), then vfork returns a second
   time, in the parent, like setjmp.  Each child exits before its parent
   goes on (waitpid), so the output is deterministic.  */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += i * i; /* count(12) */
  return s;
}

static pid_t spawn(void) {
  fflush(stdout);
  pid_t pid = fork(); /* count(3) */
  return pid;         /* count(6) */
}

int main(void) {
  int total = 0;
  for (int round = 0; round < 3; round++) {
    pid_t pid = spawn(); /* count(3) */
    if (pid == 0) {      /* count(6) */
      printf("child %d: %d\n", round, child_work(round + 3)); /* count(3) */
      fflush(stdout);
      exit(round); /* count(3) */
    }
    int st = 0;
    waitpid(pid, &st, 0);    /* count(3) */
    total += WEXITSTATUS(st);
  }
  fflush(stdout);
  pid_t v = vfork(); /* gcov: 1; ballarus also counts the second return */
  if (v == 0)        /* count(2) */
    _exit(7);        /* count(1) */
  int st = 0;
  waitpid(v, &st, 0);
  printf("total %d vfork %d\n", total, WEXITSTATUS(st)); /* count(1) */
  return 0;
}
