/* profile_io.h — reading, merging and atomically writing profile files.

   Plain C, dependency-free; used by the runtime (libballarus_rt.a) at dump
   time and by ballarus-reconstruct (merge, show, ...).  The file layout is
   documented in ballarus_format.h.

   Every function that can fail returns 0 on success and -1 on failure, with
   a one-line message in `err` (errlen bytes) naming the problem and, for
   parse errors, the byte offset, e.g.
     "offset 4104: record 2: counters truncated (file ends after 8 of 96 bytes)".
   The caller prefixes the file name.  */

#ifndef BALLARUS_PROFILE_IO_H
#define BALLARUS_PROFILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ballarus_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ballarus_profile_record {
  uint64_t stamp;
  uint64_t identity; /* copied from the metadata header */
  uint64_t runs;
  unsigned char *metadata; /* meta_size bytes, a whole blob */
  uint64_t meta_size;
  uint64_t *counters;
  uint64_t n_counters;
  ballarus_sparse_entry *sparse; /* sorted by (function, key) */
  uint64_t n_sparse;
} ballarus_profile_record;

typedef struct ballarus_profile {
  uint64_t runs;
  uint32_t n_records;
  ballarus_profile_record *records; /* sorted by stamp */
} ballarus_profile;

/* Parses `size` bytes.  Checks magic, version, header and record checks,
   tags, sizes, and that each embedded metadata header agrees with its record
   (magic, size, stamp, n_counters).  On success *out owns its memory.  */
int ballarus_profile_parse(const unsigned char *data, uint64_t size,
                           ballarus_profile *out, char *err, size_t errlen);

/* Reads and parses a file.  A missing file is an error too; callers that
   accept absence check with access() first.  */
int ballarus_profile_read_file(const char *path, ballarus_profile *out,
                               char *err, size_t errlen);

/* Serialises into a malloc'd buffer (records in stamp order, so equal
   profiles give equal bytes).  */
int ballarus_profile_serialize(const ballarus_profile *p, unsigned char **buf,
                               uint64_t *size, char *err, size_t errlen);

/* Writes to `path` atomically: a temporary file in the same directory,
   fsync'd, then rename()d over `path`.  */
int ballarus_profile_write_file(const char *path, const ballarus_profile *p,
                                char *err, size_t errlen);

/* Adds `src` into `dst`: records with equal stamps have their counters and
   sparse counts added modulo 2^64 (a source may hold "negative" deltas, see
   ballarus_format.h; sparse entries whose sum is 0 are dropped) and their
   runs summed (saturating); other records are copied.  Fails, leaving dst
   unchanged, if a src record has the identity of a dst record but another
   stamp (two builds of one TU), or if records with equal stamps disagree in
   size.  */
int ballarus_profile_merge(ballarus_profile *dst, const ballarus_profile *src,
                           char *err, size_t errlen);

/* Returns 1 if merging src into dst would hit an identity/stamp conflict.  */
int ballarus_profile_conflicts(const ballarus_profile *dst,
                               const ballarus_profile *src);

void ballarus_profile_free(ballarus_profile *p);

#ifdef __cplusplus
}
#endif

#endif /* BALLARUS_PROFILE_IO_H */
