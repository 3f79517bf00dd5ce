/* trace_host.c — a program and its shared library (trace_lib.c), each
   linked with its own copy of the trace runtime, tracing from the
   environment (BALLARUS_TRACE):
     trace_host N
   main writes stream 0 (trace_seq(0, i), i < N) in turns of 50 words, the
   even turns itself, the odd ones through the library; then a thread
   does the same with stream 1.  */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_buffer.h"
#include "runtime/trace_events.h"

void trace_lib_words(uint32_t k, uint32_t from, uint32_t to);

static uint32_t n_words;

static void *run(void *arg) {
  uint32_t k = (uint32_t)(uintptr_t)arg;
  __ballarus_trace_site(0);
  for (uint32_t at = 0; at < n_words; at += 50) {
    uint32_t to = at + 50 < n_words ? at + 50 : n_words;
    if (at / 50 % 2)
      trace_lib_words(k, at, to);
    else
      for (uint32_t i = at; i < to; i++) ballarus_trace_witness(trace_seq(k, i));
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  n_words = (uint32_t)strtoul(argv[1], NULL, 10);
  run((void *)0);
  pthread_t th;
  if (pthread_create(&th, NULL, run, (void *)1) != 0) return 3;
  pthread_join(th, NULL);
  return 0;
}
