/* runtime_fuzzer.c — libFuzzer target (clang-14, -fsanitize=fuzzer,
   address,undefined): arbitrary bytes as the existing profile a program's
   dump reads, validates, merges into and replaces -- the runtime itself
   (its C sources, hidden visibility as in libballarus_rt.a), with two
   hand-made TUs (rt_test_tus.h: alpha, and "paths" with two hashed path
   tables), dumping with __ballarus_dump() into $BALLARUS_PROFILE.

   What must hold for every input, besides no crash, hang, leak or
   undefined behaviour: every line the runtime prints is one message
   ("ballarus: ..."), and the file at the profile's path afterwards is
   either the input, untouched (written beside, or set aside and the set
   aside failed), or a profile ballarus-reconstruct's parser accepts.
   tests/fuzz/runtime_fuzz_test.sh builds and runs it for a bounded time on
   the CLI's corpus (tests/fuzz/corpus/) and a profile of its own TUs.  */

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ballarus.h"
#include "runtime/profile_io.h"
#include "runtime/testdata/rt_test_tus.h"

static ballarus_path_hash paths_hashes[2] = {{RT_PATHS_FN0, NULL},
                                             {RT_PATHS_FN1, NULL}};
RT_DEFINE_TU_WITH_PATHS(paths, "paths", RT_PATHS_BODY, RT_PATHS_N,
                        paths_hashes, 2)
RT_DEFINE_TU(alpha, RT_ALPHA_BODY, RT_ALPHA_N)

static const char *profile; /* $BALLARUS_PROFILE */
static char dir[4096], messages[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  profile = getenv("BALLARUS_PROFILE");
  if (profile == NULL || profile[0] != '/' || strrchr(profile, '/') == profile)
    __builtin_trap(); /* set by the script, an absolute path in a directory */
  snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(profile, '/') - profile),
           profile);
  snprintf(messages, sizeof messages, "%s.messages", dir);
  /* A seed of this program's own TUs: counted once, written at exit.  */
  if (getenv("RUNTIME_FUZZER_SEED") != NULL) {
    for (int j = 0; j < RT_ALPHA_N; j++) alpha_counters[j] = (uint64_t)j + 1;
    paths_counters[0] = 3;
    exit(0);
  }
  return 0;
}

/* Removes everything in the profile's directory (beside and corrupt files
   of the previous input).  */
static void clear_dir(void) {
  DIR *d = opendir(dir);
  if (d == NULL) __builtin_trap();
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      unlinkat(dirfd(d), e->d_name, 0);
  closedir(d);
}

static int write_file(const char *path, const uint8_t *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int ok = size == 0 || write(fd, data, size) == (ssize_t)size;
  return close(fd) == 0 && ok ? 0 : -1;
}

/* The whole file, malloc'd (*size bytes), or NULL if it does not exist.  */
static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  unsigned char *b = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap * 2 + 4096;
      unsigned char *nb = realloc(b, cap);
      if (nb == NULL) __builtin_trap();
      b = nb;
    }
    size_t r = fread(b + n, 1, cap - n, f);
    n += r;
    if (r == 0) break;
  }
  fclose(f);
  *size = n;
  return b;
}

/* Every line the dump printed is one "ballarus: " message.  */
static void check_messages(void) {
  size_t n;
  unsigned char *m = read_all(messages, &n);
  if (m == NULL) __builtin_trap();
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    if (m[i] != '\n') continue;
    if (i - start < 10 || memcmp(m + start, "ballarus: ", 10) != 0)
      __builtin_trap();
    start = i + 1;
  }
  if (start != n) __builtin_trap(); /* a message without its newline */
  free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  clear_dir();
  if (write_file(profile, data, size) != 0) __builtin_trap();
  alpha_counters[size % RT_ALPHA_N] += 1; /* something to dump */
  paths_counters[0] += 1;
  int saved = dup(2);
  int out = open(messages, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (saved < 0 || out < 0 || dup2(out, 2) < 0) __builtin_trap();
  close(out);
  __ballarus_dump();
  dup2(saved, 2);
  close(saved);
  check_messages();
  size_t n = 0;
  unsigned char *now = read_all(profile, &n);
  if (now == NULL) __builtin_trap(); /* the profile vanished */
  if (!(n == size && (size == 0 || memcmp(now, data, size) == 0))) {
    ballarus_profile p;
    char err[512];
    if (ballarus_profile_read_file(profile, &p, err, sizeof err) != 0)
      __builtin_trap(); /* replaced by something the parser rejects */
    ballarus_profile_free(&p);
  }
  free(now);
  return 0;
}
