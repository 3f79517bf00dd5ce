/* path_table.h — the runtime's side of hashed Ball-Larus path tables
   (internal to libballarus_rt.a, hidden like the rest of the runtime).

   Instrumented code only calls __ballarus_path_add (declared in
   ballarus_format.h).  The dump (rt_dump.c), the reset and the fork
   handling (rt_register.c) read and zero the tables through the functions
   below.  Another module's copy of the runtime may run them on this
   module's tables (the dump of the master chain, see rt_register.c), so the
   table layout in path_table.c is part of the inter-copy contract
   versioned by MASTER_VERSION (ballarus_rt_internal.h).  */

#ifndef BALLARUS_RUNTIME_PATH_TABLE_H
#define BALLARUS_RUNTIME_PATH_TABLE_H

#include <stdint.h>

#include "runtime/ballarus_format.h"

/* One non-zero count read from a live table: what the dump writes (function,
   key, count) and where it subtracts `count` after a successful write.  */
typedef struct ballarus_pt_entry {
  uint64_t function;
  uint64_t key;
  uint64_t count;
  uint64_t *live;
} ballarus_pt_entry;

/* Appends every non-zero count of the TU's hashed tables (all generations;
   a key may appear more than once) to the growable array *v of *n entries
   and *cap capacity (malloc/realloc).  Returns 0, or -1 when out of memory
   (*v and *n then still describe what was appended so far).  Safe while
   other threads count: what they add meanwhile is either read here or left
   for the next dump, never both, since the dump subtracts what it read.  */
int ballarus_pt_collect(const ballarus_tu_desc *d, ballarus_pt_entry **v,
                        uint64_t *n, uint64_t *cap);

/* Zeroes every count of the TU's hashed tables, keeping the tables.
   `after_fork`: also clears growth in progress (the child is single-
   threaded; a thread that was allocating a generation is gone).  */
void ballarus_pt_zero(const ballarus_tu_desc *d, int after_fork);

/* The module's counter of path counts that could not be recorded because
   no table memory could be mapped (net sum of their deltas, mod 2^64).  */
uint64_t *ballarus_pt_lost(void);

#endif /* BALLARUS_RUNTIME_PATH_TABLE_H */
