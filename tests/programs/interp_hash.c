/* interp_hash.c — two code shapes whose counter updates GCC's -O2 passes
   interact with (lua's luaV_execute and luaS_hash):

   - a bytecode interpreter dispatching with `goto *` whose handlers all
     end alike: a rarely taken check (lua's `trap`), then the next
     instruction's fetch and the dispatch.  Path profiling counts each
     handler's path end before that common tail; GCC must not fold the
     tails back together (path-keep-tails), or the dispatch can no longer
     be duplicated into the handlers;
   - a string table whose lookup hashes a key byte by byte in a loop
     without calls: GCC's PRE would carry a counter's value from one
     iteration to the next (the byte loads may alias it) and store it on
     every iteration as an induction variable (loop-barrier).

   Deterministic; prints a checksum of what it computed.  */
#include <stdio.h>
#include <string.h>

enum { OP_LOAD, OP_ADD, OP_ADDI, OP_MUL, OP_JLT, OP_JMOD, OP_TRACE, OP_HALT,
       NOPS };

struct insn {
  int op, a, b;
};

static int traced;

static int trace(int pc) {
  traced += pc;
  return traced % 7 == 0; /* the next trap */
}

#define FETCH()                                  \
  do {                                           \
    if (__builtin_expect(trap, 0)) trap = trace(pc); \
    in = code[pc++];                             \
    goto *disp[in.op];                           \
  } while (0)

static long run(const struct insn *code, long *reg) {
  static void *const disp[NOPS] = {&&op_load, &&op_add,  &&op_addi,
                                   &&op_mul,  &&op_jlt,  &&op_jmod,
                                   &&op_trace, &&op_halt};
  int pc = 0, trap = 0;
  struct insn in;
  FETCH();
op_load:
  reg[in.a] = in.b;
  FETCH();
op_add:
  if (reg[in.a] > 1000)
    reg[in.a] = reg[in.a] % 1000 + reg[in.b];
  else
    reg[in.a] += reg[in.b];
  FETCH();
op_addi:
  reg[in.a] += in.b;
  FETCH();
op_mul:
  reg[in.a] = (reg[in.a] * reg[in.b]) % 10007;
  FETCH();
op_jlt:
  if (reg[in.a] < reg[0]) pc = in.b;
  FETCH();
op_jmod:
  if (reg[in.a] % 4 != 0) pc = in.b;
  FETCH();
op_trace:
  trap = 1;
  FETCH();
op_halt:
  return reg[in.a];
}

/* A chained string table, lua's luaS_new in small. */
#define NBUCKETS 64
struct str {
  struct str *next;
  unsigned hash;
  size_t len;
  char text[24];
};
static struct str pool[1024];
static int npool;
static struct str *buckets[NBUCKETS];

static unsigned hash_bytes(const char *s, size_t l, unsigned seed) {
  unsigned h = seed ^ (unsigned)l;
  for (; l > 0; l--) h ^= (h << 5) + (h >> 2) + (unsigned char)s[l - 1];
  return h;
}

static struct str *intern(const char *s) {
  size_t l = strlen(s);
  unsigned h = hash_bytes(s, l, 0x2545F491u);
  struct str **list = &buckets[h % NBUCKETS];
  for (struct str *t = *list; t != NULL; t = t->next)
    if (t->len == l && memcmp(t->text, s, l) == 0) return t;
  struct str *t = &pool[npool++];
  memcpy(t->text, s, l + 1);
  t->len = l;
  t->hash = h;
  t->next = *list;
  *list = t;
  return t;
}

int main(void) {
  /* r1 = 0; r2 = 1; loop: r1 += r2; r2 = r2 * 3; r3 += 1; trace every
     fourth round; until r3 >= r0 (r0 = 200). */
  static const struct insn prog[] = {
      {OP_LOAD, 0, 200}, {OP_LOAD, 1, 0},   {OP_LOAD, 2, 1},
      {OP_LOAD, 3, 0},   {OP_ADD, 1, 2},    {OP_MUL, 2, 4},
      {OP_ADDI, 3, 1},   {OP_JMOD, 3, 9},   {OP_TRACE, 0, 0},
      {OP_ADDI, 5, 1},   {OP_LOAD, 6, 4},   {OP_JLT, 3, 4},
      {OP_HALT, 1, 0}};
  long reg[8] = {0, 0, 0, 0, 3, 0, 0, 0};
  long r = run(prog, reg);
  printf("run=%ld traced=%d\n", r, traced);

  char key[24];
  unsigned long sum = 0;
  for (int i = 0; i < 3000; i++) {
    snprintf(key, sizeof key, "key%d_%s", (i * 37) % 400,
             (i % 3) ? "abcdefgh" : "xy");
    sum += intern(key)->hash % 1000;
  }
  printf("strings=%d sum=%lu\n", npool, sum);
  return 0;
}
