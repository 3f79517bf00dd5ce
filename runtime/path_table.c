/* path_table.c — hashed path counts for Ball-Larus path profiling
   (Ball & Larus, "Efficient path profiling", MICRO 1996, section 3.3: a
   function with too many potential paths for an array counts its paths in
   a hash table).  Part of libballarus_rt.a; plain C11 + GCC atomics.

   The plugin gives such a function a `ballarus_path_hash` (ballarus_format.h)
   and calls, at every path end,
       __ballarus_path_add(&path_hashes[i], r, 1);
   where r is the path register; when a call that cut a path short returns
   normally it undoes the count it made before the call:
       __ballarus_path_add(&path_hashes[i], p, UINT64_MAX);   (-1)

   Requirements and how they are met.
   * Exact under any number of threads, lock-free, no mutex per call: each
     slot is {key, count}; a thread claims an empty slot with a CAS on the
     key (0 = empty, a key k is stored as k+1) and adds with a relaxed atomic
     add on the count.  A claimed key never changes, so readers need no
     other synchronisation.  The one key whose k+1 is 0, UINT64_MAX, has a
     counter of its own in the table header, so every uint64 key is exact.
   * Fast: the common call is one acquire load of the table pointer (a plain
     load on x86), one multiply for the home slot, one compare, one atomic
     add; everything else (probing on, claiming, growing, the first table)
     is out of line in path_add_slow.
   * Growth without blocking or copying: a table is a chain of generations,
     newest first.  When a claim fills the newest generation past half its
     slots, the claiming thread maps one of twice the size and installs it
     with a CAS on the table pointer (a per-generation flag keeps the other
     threads from mapping in parallel; losing a race just unmaps).  Lookups
     and claims only ever use the newest generation: a key counted in an
     older one is claimed again in the newest at its next count, and the old
     slot keeps what it had.  A key may thus have a count in several
     generations; the dump sums them.  Nothing is moved, so there is no
     moment at which a count could be lost, and hot keys cost one probe in
     the newest generation however many generations exist.  Threads that
     still hold the previous generation keep counting there, which is as
     good.  Generations are never freed while the module lives (a thread may
     be inside one at any time), see the memory cost below.
   * No malloc: generations are mmap'ed, so counting is safe in signal
     handlers and in code that runs while malloc's locks are held (e.g.
     after fork in a child of a threaded parent, or interposed allocators).
   * No count lost silently: if no generation can be mapped (the first one,
     or a bigger one once the newest is completely full), the delta goes to
     a module-wide `lost` counter that the next dump reports as a warning
     ("ballarus: out of memory for path tables: N path counts ...").  Until
     then a full table is probed to its end on every miss (slow, but only
     when memory is exhausted).
   * fork/reset: ballarus_pt_zero zeroes the counts and keeps the tables
     (their keys stay claimed: harmless, zero counts are not dumped).

   Memory cost.  A generation is a 128-byte header plus 16-byte slots; the
   first is one 4 KiB page (248 slots), each next one twice the bytes of the
   previous.  A generation is replaced once more than half its slots are
   claimed, so the newest one was made when its predecessor (half its size)
   held more than a quarter of the newest's slots in distinct keys: for D
   distinct paths the newest has fewer than 4D slots (64 bytes per path),
   and all generations together fewer than twice that, under 128 bytes per
   distinct path counted -- or the first 4 KiB page for a function that
   counts up to 124 paths.  Functions that never run cost nothing (table
   NULL).  The tables of a dlclose()d library are not unmapped (its threads
   may, in a buggy program, still be running; at exit they certainly may
   be), so a library loaded and unloaded repeatedly leaks its tables each
   time.

   Table layout (read by other modules' copies of the runtime at dump time:
   change only together with MASTER_VERSION in ballarus_rt_internal.h, version 3 now).  */

#define _GNU_SOURCE

#include "runtime/path_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct path_slot {
  uint64_t key;   /* 0 = empty, else the path number + 1 */
  uint64_t count; /* modulo 2^64: transiently "negative" after an undo */
} path_slot;

typedef struct path_gen path_gen;
struct path_gen {
  /* First cache line: read by every count, written once.  */
  path_gen *older; /* previous generation, or NULL */
  uint64_t bytes;  /* size of the mapping, header included */
  uint64_t cap;    /* slots */
  uint64_t grow_at; /* claims after which the next generation is made */
  uint64_t pad0[4];
  /* Second cache line: written by claims and by the rare max key, so that
     their traffic does not evict the line every count reads.  */
  uint64_t used;          /* slots claimed */
  uint64_t max_key_count; /* the count of key UINT64_MAX */
  uint32_t growing;       /* 1 while a thread maps the next generation */
  uint32_t pad1;
  uint64_t pad2[5];
  path_slot slots[];
};

_Static_assert(sizeof(path_gen) == 128, "path_gen header is two cache lines");

#define FIRST_BYTES 4096ull
/* Largest generation we try to map (2^40 bytes, 68 billion slots): beyond
   that a full table counts into `lost`, never an overflowing size.  */
#define MAX_BYTES (1ull << 40)

static uint64_t lost;

uint64_t *ballarus_pt_lost(void) { return &lost; }

/* The home slot of `key` in `cap` slots: Fibonacci hashing (the high bits
   of key * 2^64/phi are well spread even for consecutive path numbers),
   reduced to [0, cap) by a multiply-shift, since cap is not a power of two
   (the header shares the first page).  */
static inline uint64_t home(uint64_t key, uint64_t cap) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  return (uint64_t)(((unsigned __int128)h * cap) >> 64);
}

static path_gen *map_gen(uint64_t bytes, path_gen *older) {
  void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  path_gen *g = p; /* zero-filled: every slot empty */
  g->older = older;
  g->bytes = bytes;
  g->cap = (bytes - sizeof *g) / sizeof(path_slot);
  g->grow_at = g->cap / 2;
  return g;
}

/* Installs the first generation of `h`; returns the table's (ours or a
   racing thread's), or NULL when none can be mapped.  */
static path_gen *first_gen(ballarus_path_hash *h) {
  path_gen *g = map_gen(FIRST_BYTES, NULL);
  if (g == NULL) return NULL;
  void *expected = NULL;
  if (__atomic_compare_exchange_n(&h->table, &expected, (void *)g, 0,
                                  __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
    return g;
  munmap(g, (size_t)g->bytes);
  return expected;
}

/* Makes a generation newer than `g` if `g` is still the newest.  Without
   `force` (g passed half full) only one thread tries at a time and failure
   is silent (g still has room; the next claim tries again).  With `force`
   (g is full) the caller tries whatever others do.  Returns 0 only when g
   is still the newest and no bigger generation could be mapped.  */
static int grow(ballarus_path_hash *h, path_gen *g, int force) {
  if (!force) {
    uint32_t idle = 0;
    if (!__atomic_compare_exchange_n(&g->growing, &idle, 1, 0,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return 1;
  }
  if (__atomic_load_n(&h->table, __ATOMIC_ACQUIRE) != (void *)g) return 1;
  path_gen *n =
      g->bytes <= MAX_BYTES / 2 ? map_gen(g->bytes * 2, g) : NULL;
  if (n == NULL) {
    if (!force) __atomic_store_n(&g->growing, 0, __ATOMIC_RELAXED);
    return 0;
  }
  void *expected = g;
  if (!__atomic_compare_exchange_n(&h->table, &expected, (void *)n, 0,
                                   __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    munmap(n, (size_t)n->bytes); /* another thread installed one: use it */
  return 1;
}

__attribute__((noinline, cold)) static void path_add_slow(
    ballarus_path_hash *h, uint64_t key, uint64_t delta) {
  const uint64_t stored = key + 1;
  for (;;) {
    path_gen *g = __atomic_load_n(&h->table, __ATOMIC_ACQUIRE);
    if (g == NULL && (g = first_gen(h)) == NULL) break;
    if (stored == 0) {
      __atomic_fetch_add(&g->max_key_count, delta, __ATOMIC_RELAXED);
      return;
    }
    const uint64_t cap = g->cap;
    uint64_t i = home(key, cap);
    for (uint64_t probes = 0; probes < cap; probes++) {
      path_slot *s = &g->slots[i];
      uint64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
      if (k == 0) {
        if (__atomic_compare_exchange_n(&s->key, &k, stored, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
          __atomic_fetch_add(&s->count, delta, __ATOMIC_RELAXED);
          if (__atomic_add_fetch(&g->used, 1, __ATOMIC_RELAXED) > g->grow_at)
            grow(h, g, 0);
          return;
        }
        /* Lost the race for this slot; k is now its key.  */
      }
      if (k == stored) {
        __atomic_fetch_add(&s->count, delta, __ATOMIC_RELAXED);
        return;
      }
      if (++i == cap) i = 0;
    }
    /* The newest generation we saw is full: only when growing failed, or
       when other threads filled its second half while one was mapping.  */
    if (!grow(h, g, 1)) break;
  }
  __atomic_fetch_add(&lost, delta, __ATOMIC_RELAXED);
}

void __ballarus_path_add(ballarus_path_hash *h, uint64_t key,
                         uint64_t delta) {
  path_gen *g = __atomic_load_n(&h->table, __ATOMIC_ACQUIRE);
  if (__builtin_expect(g != NULL && key != UINT64_MAX, 1)) {
    path_slot *s = &g->slots[home(key, g->cap)];
    if (__builtin_expect(__atomic_load_n(&s->key, __ATOMIC_RELAXED) == key + 1,
                         1)) {
      __atomic_fetch_add(&s->count, delta, __ATOMIC_RELAXED);
      return;
    }
  }
  path_add_slow(h, key, delta);
}

/* ---------------------------------------------------------------------- */
/* Dump, reset, fork.                                                       */

static int push(ballarus_pt_entry **v, uint64_t *n, uint64_t *cap,
                uint64_t function, uint64_t key, uint64_t count,
                uint64_t *live) {
  if (*n == *cap) {
    uint64_t c = *cap == 0 ? 256 : *cap * 2;
    if (c > SIZE_MAX / sizeof **v) return -1;
    ballarus_pt_entry *w = realloc(*v, (size_t)c * sizeof **v);
    if (w == NULL) return -1;
    *v = w;
    *cap = c;
  }
  (*v)[(*n)++] = (ballarus_pt_entry){function, key, count, live};
  return 0;
}

int ballarus_pt_collect(const ballarus_tu_desc *d, ballarus_pt_entry **v,
                        uint64_t *n, uint64_t *cap) {
  for (uint64_t t = 0; t < d->n_path_hashes; t++) {
    ballarus_path_hash *h = &d->path_hashes[t];
    const uint64_t f = h->function;
    for (path_gen *g = __atomic_load_n(&h->table, __ATOMIC_ACQUIRE);
         g != NULL; g = g->older) {
      uint64_t c = __atomic_load_n(&g->max_key_count, __ATOMIC_RELAXED);
      if (c != 0 && push(v, n, cap, f, UINT64_MAX, c, &g->max_key_count) != 0)
        return -1;
      for (uint64_t i = 0; i < g->cap; i++) {
        path_slot *s = &g->slots[i];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
        if (k == 0) continue;
        c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
        if (c != 0 && push(v, n, cap, f, k - 1, c, &s->count) != 0) return -1;
      }
    }
  }
  return 0;
}

void ballarus_pt_zero(const ballarus_tu_desc *d, int after_fork) {
  for (uint64_t t = 0; t < d->n_path_hashes; t++) {
    ballarus_path_hash *h = &d->path_hashes[t];
    path_gen *newest = __atomic_load_n(&h->table, __ATOMIC_ACQUIRE);
    if (after_fork && newest != NULL) newest->growing = 0;
    for (path_gen *g = newest; g != NULL; g = g->older) {
      __atomic_store_n(&g->max_key_count, 0, __ATOMIC_RELAXED);
      for (uint64_t i = 0; i < g->cap; i++)
        if (__atomic_load_n(&g->slots[i].key, __ATOMIC_RELAXED) != 0)
          __atomic_store_n(&g->slots[i].count, 0, __ATOMIC_RELAXED);
    }
  }
}
