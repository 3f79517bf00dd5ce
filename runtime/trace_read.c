/* trace_read.c — the trace file reader (trace_read.h).  */

#include "runtime/trace_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes count varint deltas of p[bytes] into out; -1 when they do not
   fill the payload exactly.  */
static int decode(const uint8_t *p, uint32_t bytes, uint32_t count,
                  uint32_t *out) {
  uint32_t at = 0, prev = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t z = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (at >= bytes || shift > 28) return -1;
      uint8_t b = p[at++];
      z |= (uint32_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    prev += (z >> 1) ^ (0u - (z & 1));
    out[i] = prev;
  }
  return at == bytes ? 0 : -1;
}

static uint32_t fnv(const uint8_t *p, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* The next seq expected of each thread serial: an open-addressing table
   (serial + 1 as the key, 0 free), grown at half full, so that a damaged
   serial costs one slot, not memory in proportion to its value; serial 0:
   the METADATA records'.  */
typedef struct seqs {
  uint64_t *slot; /* key << 32 | next */
  size_t cap, used;
} seqs;

static uint64_t *seq_slot(uint64_t *slot, size_t cap, uint32_t key) {
  size_t i = (key * 2654435761u) & (cap - 1);
  while (slot[i] != 0 && (uint32_t)(slot[i] >> 32) != key)
    i = (i + 1) & (cap - 1);
  return &slot[i];
}

static int seq_grow(seqs *s) {
  size_t cap = s->cap ? 2 * s->cap : 64;
  uint64_t *m = calloc(cap, sizeof *m);
  if (m == NULL) return -1;
  for (size_t i = 0; i < s->cap; i++)
    if (s->slot[i] != 0)
      *seq_slot(m, cap, (uint32_t)(s->slot[i] >> 32)) = s->slot[i];
  free(s->slot);
  s->slot = m;
  s->cap = cap;
  return 0;
}

static int check_seq(seqs *s, const ballarus_trace_record_header *h) {
  uint32_t key = h->thread + 1; /* 0: serial 0xffffffff, refused */
  if (key == 0 || (2 * (s->used + 1) > s->cap && seq_grow(s) != 0)) return -1;
  uint64_t *e = seq_slot(s->slot, s->cap, key);
  uint32_t next = *e ? (uint32_t)*e : 0;
  if (h->seq != next) return -1;
  if (*e == 0) s->used++;
  *e = (uint64_t)key << 32 | (uint32_t)(next + 1);
  return 0;
}

/* version: the file's.  */
static int check_header(const ballarus_trace_record_header *h,
                        uint32_t version) {
  int stack = h->kind == BALLARUS_TRACE_CHECKPOINT ||
              h->kind == BALLARUS_TRACE_POSITION;
  uint32_t last = version >= 3 ? BALLARUS_TRACE_FAULT
                               : BALLARUS_TRACE_CHECKPOINT;
  if (h->magic == BALLARUS_TRACE_RECORD_MAGIC &&
      h->kind == BALLARUS_TRACE_METADATA)
    return h->thread == 0 && h->tid == 0 && h->count > 0 &&
           h->count == h->bytes && h->total == 0;
  return h->magic == BALLARUS_TRACE_RECORD_MAGIC &&
         h->kind >= BALLARUS_TRACE_CHUNK && h->kind <= last &&
         h->thread != 0 &&
         (uint64_t)h->count * BALLARUS_TRACE_VARINT_MAX >= h->bytes &&
         h->count <= h->bytes &&
         (stack || h->kind == BALLARUS_TRACE_FAULT || h->total >= h->count) &&
         (!stack || h->count >= 1) &&
         (h->kind != BALLARUS_TRACE_FAULT ||
          h->count >= BALLARUS_TRACE_FAULT_WORDS) &&
         (h->kind != BALLARUS_TRACE_END || h->count == 0);
}

/* A CHECKPOINT's or POSITION's words: D and D frames of 3 words, or D
   unknown alone; a FAULT's: the path's length fits its words.  */
static int check_words(const ballarus_trace_record_header *h,
                       const uint32_t *w) {
  if (h->kind == BALLARUS_TRACE_FAULT) {
    uint32_t len = w[BALLARUS_TRACE_FAULT_WORDS - 1];
    return len <= 4096 &&
                   (uint64_t)BALLARUS_TRACE_FAULT_WORDS + (len + 3) / 4 ==
                       h->count
               ? 0
               : -1;
  }
  if (h->kind != BALLARUS_TRACE_CHECKPOINT &&
      h->kind != BALLARUS_TRACE_POSITION)
    return 0;
  if (w[0] == BALLARUS_TRACE_CHECKPOINT_UNKNOWN) return h->count == 1 ? 0 : -1;
  return (uint64_t)w[0] * 3 + 1 == h->count ? 0 : -1;
}

/* The file header; -1 with the message in err when it is not one this
   reader reads.  */
static int check_file_header(const uint8_t *d, size_t size,
                             ballarus_trace_file_header *fh, char *err,
                             size_t errlen) {
  if (size < sizeof *fh || memcmp(d, BALLARUS_TRACE_MAGIC, 8) != 0) {
    snprintf(err, errlen, "not a ballarus trace file");
    return -1;
  }
  memcpy(fh, d, sizeof *fh);
  if (fh->version < 2 || fh->version > BALLARUS_TRACE_VERSION) {
    snprintf(err, errlen,
             "trace file version %u: this reader reads versions 2 to %u "
             "(trace the program again with this ballarus)",
             fh->version, BALLARUS_TRACE_VERSION);
    return -1;
  }
  if (fh->header_size != sizeof *fh) {
    snprintf(err, errlen, "bad trace file header size %u", fh->header_size);
    return -1;
  }
  return 0;
}

int ballarus_trace_read(const void *data, size_t size,
                        ballarus_trace_file_header *fh,
                        ballarus_trace_record_fn fn, void *ctx, char *err,
                        size_t errlen) {
  const uint8_t *d = data;
  size_t at = sizeof *fh;
  seqs s = {NULL, 0, 0};
  int rc = 0;
  if (check_file_header(d, size, fh, err, errlen) != 0) return -1;
  while (rc == 0 && at < size) {
    ballarus_trace_record_header h;
    uint32_t sum, *w = NULL;
    if (size - at < sizeof h) goto bad;
    memcpy(&h, d + at, sizeof h);
    if (!check_header(&h, fh->version) || size - at - sizeof h < (size_t)h.bytes + 4)
      goto bad;
    memcpy(&sum, d + at + sizeof h + h.bytes, 4);
    if (sum != fnv(d + at + sizeof h, h.bytes) || check_seq(&s, &h) != 0)
      goto bad;
    /* METADATA: the bytes, zeros after them (count words are there).  */
    w = calloc((size_t)h.count + 1, 4);
    const uint8_t *payload = d + at + sizeof h;
    if (w != NULL && h.kind == BALLARUS_TRACE_METADATA) {
      memcpy(w, payload, h.bytes);
    } else if (w == NULL || decode(payload, h.bytes, h.count, w) != 0 ||
               check_words(&h, w) != 0) {
      free(w);
      goto bad;
    }
    rc = fn(ctx, &h, w);
    free(w);
    at += sizeof h + h.bytes + 4;
  }
  free(s.slot);
  return rc;
bad:
  free(s.slot);
  snprintf(err, errlen, "bad trace record at byte %zu", at);
  return -1;
}
