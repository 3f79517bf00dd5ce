/* inline_loops.c — a small function with a loop, inlined several times in
   a row into its callers (bzip2's bsW/bsPutUInt32 pattern): at -O2 the
   counts of one path come from several inlined copies, some at a constant
   counter address, some through the path register, which GCC must not
   reorder (the counter array cannot be DECL_NONALIASED then). */
#include <stdio.h>

typedef struct {
  unsigned char out[4096];
  int num;
  unsigned buf;
  int live;
} Bits;

static inline void put_bits(Bits *s, int n, unsigned v) {
  while (s->live >= 8) {
    s->out[s->num++] = (unsigned char)(s->buf >> 24);
    s->buf <<= 8;
    s->live -= 8;
  }
  s->buf |= v << (32 - s->live - n);
  s->live += n;
}

static void put_u32(Bits *s, unsigned u) {
  put_bits(s, 8, (u >> 24) & 0xff);
  put_bits(s, 8, (u >> 16) & 0xff);
  put_bits(s, 8, (u >> 8) & 0xff);
  put_bits(s, 8, u & 0xff);
}

static void put_small(Bits *s, int k) {
  for (int i = 0; i < k; i++) put_bits(s, 3, (unsigned)i & 7);
}

int main(void) {
  Bits s = {{0}, 0, 0, 0};
  for (unsigned i = 0; i < 200; i++) {
    put_u32(&s, i * 2654435761u);
    put_small(&s, (int)(i % 7));
    if (s.num > 3000) s.num = 0;
  }
  unsigned h = 0;
  for (int i = 0; i < s.num; i++) h = h * 31 + s.out[i];
  printf("%d %u %d\n", s.num, h, s.live);
  return 0;
}
