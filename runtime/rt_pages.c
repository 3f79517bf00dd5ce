/* rt_pages.c — which pages of counter memory a process ever touched, so
   that a dump reads, copies and writes only those (profile_io.h, chunk
   maps), and a reset or a fork child writes only those.  A page of a
   counter array that was never touched holds the array's initial zeros;
   reading it would cost a page fault (about 10 us on a virtual machine,
   docs/performance.md), and a short path-mode process touches a few of the
   hundreds its counters span.
   /proc/self/pagemap has one 64-bit entry per virtual page: bit 63 present,
   bit 62 swapped out.  A page that is neither was never touched since the
   mapping was made: it reads as its initial content, zero for counters
   (.bss, anonymous mappings, the zero pages of a private file mapping).  A
   page merely read is present (the shared zero page), and is read again,
   at no fault.  mincore() cannot tell a swapped-out page from one never
   touched, so it is not used.  Without /proc every page counts as
   touched.  */

#define _GNU_SOURCE

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ballarus_rt_internal.h"

static uintptr_t page_size(void) {
  static uintptr_t size;
  if (size == 0) {
    long p = sysconf(_SC_PAGESIZE);
    size = p > 0 ? (uintptr_t)p : 4096;
  }
  return size;
}

static int touched(ballarus_rt_pagemap *pm, const void *addr);

void ballarus_rt_pagemap_open(ballarus_rt_pagemap *pm) {
  pm->fd = -2;
  pm->first = 0;
  pm->n = 0;
}

/* Opens the pagemap of a reader opened by ballarus_rt_pagemap_open.  */
static void open_now(ballarus_rt_pagemap *pm) {
  pm->fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  /* A pagemap that does not show *pm, which is being written, as present
     is not believed (an emulated /proc): every page counts as touched.  */
  if (pm->fd >= 0 && !touched(pm, pm)) ballarus_rt_pagemap_close(pm);
  pm->n = 0;
}

void ballarus_rt_pagemap_close(ballarus_rt_pagemap *pm) {
  if (pm->fd >= 0) close(pm->fd);
  pm->fd = -1;
}

/* Whether the page of addr was ever touched (1 when unknown).  */
static int touched(ballarus_rt_pagemap *pm, const void *addr) {
  if (pm->fd < 0) return 1;
  const uintptr_t page = (uintptr_t)addr / page_size();
  if (pm->n == 0 || page < pm->first || page >= pm->first + pm->n) {
    ssize_t r = pread(pm->fd, pm->e, sizeof pm->e, (off_t)(page * 8));
    if (r < 8) return 1;
    pm->first = page;
    pm->n = (size_t)r / 8;
  }
  return ((pm->e[page - pm->first] >> 62) & 3u) != 0;
}

/* The index after c[i]'s page, at most n.  */
static uint64_t page_end(const uint64_t *c, uint64_t i, uint64_t n) {
  const uintptr_t ps = page_size();
  uint64_t end = i + (ps - (uintptr_t)&c[i] % ps) / 8;
  return end < n ? end : n;
}

/* Arrays of at most this many pages are read whole, untouched pages too
   (the zero page mapped, a cheap fault): the pagemap's open, reads and
   close cost more, and a dump of only small arrays never opens it.  */
#define SMALL_PAGES 4u

int ballarus_rt_touched_run(ballarus_rt_pagemap *pm, const uint64_t *c,
                            uint64_t n, uint64_t *lo, uint64_t *hi) {
  if (n * 8 <= SMALL_PAGES * page_size()) {
    *hi = n;
    return *lo < n;
  }
  if (pm->fd == -2) open_now(pm);
  uint64_t i = *lo;
  while (i < n && !touched(pm, &c[i])) i = page_end(c, i, n);
  if (i >= n) return 0;
  uint64_t j = page_end(c, i, n);
  while (j < n && touched(pm, &c[j])) j = page_end(c, j, n);
  *lo = i;
  *hi = j;
  return 1;
}
