/* trace_lib.c — the shared library of trace_host, linked with its own copy
   of the trace runtime: writes words of a stream for its caller.  */
#include <stdint.h>

#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_buffer.h"
#include "runtime/trace_events.h"

/* trace_seq(k, i) for i in [from, to).  */
void trace_lib_words(uint32_t k, uint32_t from, uint32_t to) {
  __ballarus_trace_site(0); /* links this module's hooks and constructor */
  for (uint32_t i = from; i < to; i++) ballarus_trace_witness(trace_seq(k, i));
}
