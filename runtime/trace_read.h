/* trace_read.h — reading a trace file (trace_format.h, versions 2 and 3;
   POSITION and FAULT records only in 3): checks its header and every
   record (magic, kind, sizes, checksum, the words of a CHECKPOINT, a
   POSITION and a FAULT, each thread's records numbered 0, 1, 2, ...
   without a gap, and so the METADATA records) and hands each record's
   decoded words to a callback (whatever its kind).  Plain C, libc only.  */

#ifndef BALLARUS_RUNTIME_TRACE_READ_H
#define BALLARUS_RUNTIME_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called for every record with its header and its count words; a
   non-zero return stops the reading (and is returned).  A METADATA record
   (thread 0) comes with its payload as it is, h->bytes bytes of a TU's
   metadata blob at `witnesses` (read it as unsigned char).  */
typedef int (*ballarus_trace_record_fn)(void *ctx,
                                        const ballarus_trace_record_header *h,
                                        const uint32_t *witnesses);

/* Reads data[size]: *header gets the file header.  Returns 0, the
   callback's non-zero value, or -1 with a one-line message in err[errlen]
   naming the byte offset of the fault.  */
int ballarus_trace_read(const void *data, size_t size,
                        ballarus_trace_file_header *header,
                        ballarus_trace_record_fn fn, void *ctx, char *err,
                        size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_RUNTIME_TRACE_READ_H */
