/* vfork_exec.c — vfork() then exec, three times: the children of rounds 0
   and 2 exec /bin/true, the child of round 1 fails to exec and leaves by
   _exit(9).  Each child runs in the parent's memory (its counts are the
   parent's) until exec or _exit; its path ends there, the parent goes on
   from vfork's second return.  Not in MANIFEST: e2e_test's VforkExec
   builds it in the path modes and checks its paths by hand.  */
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int total = 0;
  for (int round = 0; round < 3; round++) {
    const char* prog = round == 1 ? "/nonexistent/true" : "/bin/true";
    fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0) {
      execl(prog, "true", (char*)0);
      _exit(9);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    total += WEXITSTATUS(st);
  }
  printf("total %d\n", total);
  return 0;
}
