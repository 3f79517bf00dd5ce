/* rt_host.c — an executable with its own TU (host) that dlopens rt_lib.c's
   shared library.  Built twice: rt_host exports __ballarus_master (as the
   compiler wrapper links executables), rt_host_noexport does not.

     rt_host LIB dlclose N   host[j] += N*(j+1); dlopen LIB, rt_lib_work(N),
                             dlclose; copy PROFILE to PROFILE.after_dlclose;
                             exit
     rt_host LIB dump N      host count N; dlopen, rt_lib_work(N);
                             __ballarus_dump(); copy PROFILE to
                             PROFILE.after_dump; rt_lib_work(N); dlclose;
                             exit
     rt_host LIB exit N      host count N; dlopen, rt_lib_work(N); exit
                             (the library still loaded)

   PROFILE is $BALLARUS_PROFILE.  Exit status 0, or 3 on an error.  */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ballarus.h"
#include "runtime/testdata/rt_test_tus.h"

RT_DEFINE_TU(host, RT_HOST_BODY, RT_HOST_N)

static int copy_file(const char *from, const char *suffix) {
  char to[4096];
  snprintf(to, sizeof to, "%s%s", from, suffix);
  FILE *in = fopen(from, "rb");
  if (in == NULL) return 0; /* absent: the test sees no copy */
  FILE *out = fopen(to, "wb");
  if (out == NULL) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  return fclose(out) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 4) return 3;
  const char *profile = getenv("BALLARUS_PROFILE");
  if (profile == NULL) return 3;
  long n = atol(argv[3]);
  for (long i = 0; i < n; i++)
    for (int j = 0; j < RT_HOST_N; j++) host_counters[j] += (uint64_t)j + 1;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "rt_host: %s\n", dlerror());
    return 3;
  }
  void (*work)(long) = (void (*)(long))dlsym(h, "rt_lib_work");
  if (work == NULL) return 3;
  work(n);
  if (strcmp(argv[2], "dump") == 0) {
    __ballarus_dump();
    if (copy_file(profile, ".after_dump") != 0) return 3;
    work(n);
  } else if (strcmp(argv[2], "exit") == 0) {
    return 0;
  } else if (strcmp(argv[2], "dlclose") != 0) {
    return 3;
  }
  if (dlclose(h) != 0) return 3;
  if (strcmp(argv[2], "dlclose") == 0 &&
      copy_file(profile, ".after_dlclose") != 0)
    return 3;
  return 0;
}
