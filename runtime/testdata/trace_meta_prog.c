/* trace_meta_prog.c — a program with two hand-built TUs (alpha, beta:
   rt_test_tus.h) linked with the whole runtime (:ballarus_rt), tracing
   from the environment (BALLARUS_TRACE):
     trace_meta_prog ok N     N witnesses (trace_seq(0, i)), exit 0
     trace_meta_prog segv N   N witnesses, then a null dereference  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/testdata/rt_test_tus.h"
#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_buffer.h"
#include "runtime/trace_events.h"

RT_DEFINE_TU(alpha, RT_ALPHA_BODY, RT_ALPHA_N)
RT_DEFINE_TU(beta, RT_BETA_BODY, RT_BETA_N)

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  uint32_t n = (uint32_t)strtoul(argv[2], NULL, 10);
  __ballarus_trace_site(0); /* links the hooks and their start */
  for (uint32_t i = 0; i < n; i++) ballarus_trace_witness(trace_seq(0, i));
  if (strcmp(argv[1], "segv") == 0) {
    volatile int *null = NULL;
    return *null;
  }
  return 0;
}
