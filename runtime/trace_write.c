/* trace_write.c — the records of the trace file (trace_format.h), with
   write(2) only: async-signal-safe (trace_internal.h).  */

#define _GNU_SOURCE

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/ballarus_format.h"
#include "runtime/safe_file.h"
#include "runtime/trace_internal.h"

static trace_state *const g = &ballarus_trace_g;

/* Writes to the trace file, remembering the first error for the message at
   exit (async-signal-safe).  */
void ballarus_trace_write(const void *data, size_t size) {
  if (g->fd >= 0 && ballarus_sf_write_all(g->fd, data, size) != 0 &&
      g->write_errno == 0)
    g->write_errno = errno ? errno : EIO;
}

/* ---------------------------------------------------------------------- */
/* Encoding (trace_format.h): a sink of witnesses, streamed into buf.      */

typedef struct sink {
  uint8_t *buf;
  size_t cap, len;
  int fd;         /* flushed there when buf fills; -1: buf is large enough */
  int count_only; /* only count the bytes */
  uint32_t prev, fnv, bytes;
} sink;

static void sink_init(sink *s, uint8_t *buf, size_t cap, int fd, int count) {
  s->buf = buf;
  s->cap = cap;
  s->len = 0;
  s->fd = fd;
  s->count_only = count;
  s->prev = 0;
  s->fnv = 2166136261u;
  s->bytes = 0;
}

static void sink_flush(sink *s) {
  if (s->fd >= 0 && s->len > 0) ballarus_trace_write(s->buf, s->len);
  s->len = 0;
}

static void sink_put(sink *s, uint32_t w) {
  uint32_t d = w - s->prev;
  uint32_t z = (d << 1) ^ (uint32_t)((int32_t)d >> 31);
  uint8_t tmp[BALLARUS_TRACE_VARINT_MAX];
  unsigned n = 0;
  s->prev = w;
  do {
    tmp[n] = (uint8_t)(z & 0x7f);
    z >>= 7;
    if (z) tmp[n] |= 0x80;
    n++;
  } while (z);
  s->bytes += n;
  if (s->count_only) return;
  if (s->len + n > s->cap) sink_flush(s);
  for (unsigned i = 0; i < n; i++) {
    s->fnv = (s->fnv ^ tmp[i]) * 16777619u;
    s->buf[s->len++] = tmp[i];
  }
}

static void fill_header(ballarus_trace_record_header *h, const trace_thread *t,
                        uint32_t kind, uint32_t count, uint32_t bytes,
                        uint64_t total) {
  memset(h, 0, sizeof *h);
  h->magic = BALLARUS_TRACE_RECORD_MAGIC;
  h->kind = kind;
  h->thread = t->serial;
  h->tid = t->tid;
  h->seq = t->seq;
  h->count = count;
  h->bytes = bytes;
  h->total = total;
}

/* Full mode: words[0..n) as one CHUNK record, one write.  */
void ballarus_trace_write_chunk(trace_thread *t, const uint32_t *words,
                                uint32_t n) {
  ballarus_trace_record_header h;
  size_t hs = sizeof h;
  sink s;
  sink_init(&s, t->out + hs, OUT_BYTES - hs - 4, -1, 0);
  for (uint32_t i = 0; i < n; i++) sink_put(&s, words[i]);
  t->total += n;
  fill_header(&h, t, BALLARUS_TRACE_CHUNK, n, s.bytes, t->total);
  memcpy(t->out, &h, hs);
  memcpy(t->out + hs + s.len, &s.fnv, 4);
  ballarus_trace_write(t->out, hs + s.len + 4);
  t->seq++;
}

void ballarus_trace_write_end(trace_thread *t) {
  uint8_t r[sizeof(ballarus_trace_record_header) + 4];
  ballarus_trace_record_header h;
  uint32_t fnv = 2166136261u; /* of the empty payload */
  fill_header(&h, t, BALLARUS_TRACE_END, 0, 0, t->total);
  memcpy(r, &h, sizeof h);
  memcpy(r + sizeof h, &fnv, 4);
  ballarus_trace_write(r, sizeof r);
  t->seq++;
}

/* A record's words: a[(at + i) & mask].  */
typedef struct words {
  const uint32_t *a;
  uint64_t at, mask;
} words;

static uint32_t word_at(const words *w, uint32_t i) {
  return w->a[(w->at + i) & w->mask];
}

/* One record of `count` words, streamed (its size counted first), for
   the writes of finish and of a fork child, where no other thread writes
   meanwhile.  */
static void write_words(trace_thread *t, uint32_t kind, const words *w,
                        uint32_t count, uint64_t total) {
  uint8_t buf[4096];
  sink s;
  ballarus_trace_record_header h;
  sink_init(&s, buf, sizeof buf, -1, 1);
  for (uint32_t i = 0; i < count; i++) sink_put(&s, word_at(w, i));
  fill_header(&h, t, kind, count, s.bytes, total);
  ballarus_trace_write(&h, sizeof h);
  sink_init(&s, buf, sizeof buf, g->fd, 0);
  for (uint32_t i = 0; i < count; i++) sink_put(&s, word_at(w, i));
  sink_flush(&s);
  ballarus_trace_write(&s.fnv, 4);
  t->seq++;
}

/* A CHECKPOINT or POSITION record of stack s as it is now, copied first
   (another thread's stack may change while it is written) into a mapping
   made at the first need: REGION_WORDS words.  */
static void write_stack(trace_thread *t, uint32_t kind,
                        const ballarus_trace_stack *s, uint64_t total) {
  static uint32_t *copy;
  static const uint32_t unknown = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  words w = {&unknown, 0, 0};
  uint32_t count = 1;
  if (copy == NULL)
    copy = ballarus_trace_map_aligned((size_t)REGION_WORDS * 4, 4096);
  if (copy != NULL && s != NULL) {
    count = ballarus_trace_stack_words(s, copy);
    w.a = copy;
    w.mask = ~(uint64_t)0;
  }
  write_words(t, kind, &w, count, total);
}

void ballarus_trace_write_live_checkpoint(trace_thread *t) {
  write_stack(t, BALLARUS_TRACE_CHECKPOINT, &__ballarus_trace_stack2,
              t->total);
}

/* Where a live thread is when the file is written (trace_format.h
   POSITION): after its last word, the total-th.  */
void ballarus_trace_write_position(trace_thread *t, uint64_t total) {
  const ballarus_trace_stack *s =
      __atomic_load_n(&t->stackp, __ATOMIC_ACQUIRE);
  if (s == NULL) return;
  write_stack(t, BALLARUS_TRACE_POSITION, s, total);
}

/* The crashing thread's FAULT record (trace_format.h).  */
void ballarus_trace_write_fault(trace_thread *t, const trace_fault *f,
                                uint64_t total) {
  static uint32_t a[9 + (PATH_MAX + 3) / 4];
  const uint64_t v[3] = {f->addr, f->pc, f->offset};
  a[0] = f->signo;
  a[1] = f->code;
  for (int i = 0; i < 3; i++) {
    a[2 + 2 * i] = (uint32_t)v[i];
    a[3 + 2 * i] = (uint32_t)(v[i] >> 32);
  }
  a[8] = f->path_len;
  memset(a + 9, 0, (f->path_len + 3) / 4 * 4);
  memcpy(a + 9, f->path, f->path_len);
  words w = {a, 0, ~(uint64_t)0};
  write_words(t, BALLARUS_TRACE_FAULT, &w, 9 + (f->path_len + 3) / 4, total);
}

/* A kept chunk as CHECKPOINT and RING records.  */
static void write_slot(trace_thread *t, const ring_slot *sl) {
  const uint32_t *w = sl->chunk + HEAD;
  static const uint32_t unknown = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  words cp = {t->arena, (uint64_t)sl->region * REGION_WORDS, ~(uint64_t)0};
  words ring = {w, 0, ~(uint64_t)0};
  if (sl->cp_len == 0) cp = (words){&unknown, 0, 0};
  write_words(t, BALLARUS_TRACE_CHECKPOINT, &cp, sl->cp_len ? sl->cp_len : 1,
              sl->total);
  write_words(t, BALLARUS_TRACE_RING, &ring, sl->count, sl->total + sl->count);
}

/* Ring mode at exit: the thread's kept chunks, oldest first, then the
   chunk being written (its `pending` words).  */
void ballarus_trace_write_ring(trace_thread *t, uint32_t pending) {
  uint32_t len = __atomic_load_n(&t->slot_len, __ATOMIC_ACQUIRE);
  uint32_t first = (t->slot_head + t->n_slots - len) % t->n_slots;
  for (uint32_t i = 0; i < len; i++) {
    uint32_t k = (first + i) % t->n_slots;
    write_slot(t, &t->slots[k]);
  }
  if (pending > 0) {
    ring_slot c = t->cur;
    c.count = pending;
    c.chunk = t->chunk;
    write_slot(t, &c);
  }
}

/* ---------------------------------------------------------------------- */
/* The modules' metadata (trace_format.h METADATA).                        */

static pthread_mutex_t tus_lock = PTHREAD_MUTEX_INITIALIZER;

/* One METADATA record: the TU's blob, one writev(2) (async-signal-safe,
   appended whole among other threads' records).  */
static void write_metadata(const ballarus_tu_desc *d) {
  ballarus_meta_header mh;
  memcpy(&mh, d->metadata, sizeof mh);
  if (mh.size < sizeof mh || mh.size > UINT32_MAX) return;
  uint32_t fnv = 2166136261u;
  for (uint64_t i = 0; i < mh.size; i++)
    fnv = (fnv ^ d->metadata[i]) * 16777619u;
  ballarus_trace_record_header h;
  memset(&h, 0, sizeof h);
  h.magic = BALLARUS_TRACE_RECORD_MAGIC;
  h.kind = BALLARUS_TRACE_METADATA;
  h.seq = __atomic_fetch_add(&g->meta_seq, 1, __ATOMIC_RELAXED);
  h.count = h.bytes = (uint32_t)mh.size;
  struct iovec v[3] = {{&h, sizeof h},
                       {(void *)d->metadata, (size_t)mh.size},
                       {&fnv, 4}};
  size_t want = sizeof h + (size_t)mh.size + 4;
  if (g->fd >= 0 && writev(g->fd, v, 3) != (ssize_t)want &&
      g->write_errno == 0)
    g->write_errno = errno ? errno : EIO;
}

static void write_module(const ballarus_trace_tus *m) {
  for (uint64_t t = 0; t < m->n; t++) write_metadata(m->tus[t]);
}

void ballarus_trace_add_tus(ballarus_trace_tus *m) {
  pthread_mutex_lock(&tus_lock);
  m->next = g->tus;
  __atomic_store_n(&g->tus, m, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&tus_lock);
}

void ballarus_trace_remove_tus(ballarus_trace_tus *m) {
  pthread_mutex_lock(&tus_lock);
  if (ballarus_trace_own_process() &&
      !__atomic_load_n(&g->finished, __ATOMIC_ACQUIRE))
    write_module(m);
  for (ballarus_trace_tus **p = &g->tus; *p; p = &(*p)->next)
    if (*p == m) {
      __atomic_store_n(p, m->next, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&tus_lock);
}

void ballarus_trace_write_modules(void) {
  for (const ballarus_trace_tus *m = __atomic_load_n(&g->tus, __ATOMIC_ACQUIRE);
       m; m = m->next)
    write_module(m);
}

/* A fork child: its file numbers its METADATA records from 0, and the
   lock may have been held by a thread of the parent.  */
void ballarus_trace_tus_reset(void) {
  g->meta_seq = 0;
  pthread_mutex_init(&tus_lock, NULL);
}
