/* trace_seq.h — the witness sequences trace_prog writes and the
   runtime's trace tests expect: witness i of stream k.  Mixes runs of small
   deltas (1-byte varints) with large jumps (5-byte varints).  */
#ifndef BALLARUS_RUNTIME_TESTDATA_TRACE_SEQ_H
#define BALLARUS_RUNTIME_TESTDATA_TRACE_SEQ_H

#include <stdint.h>

static inline uint32_t trace_seq(uint32_t k, uint32_t i) {
  if (i % 7 == 3) return i * 2654435761u ^ k;
  return (k << 16) + i % 13;
}

#endif
