/* inline_sizes.c — a small static function with several branches (lua's
   index2value) called from many small functions: gcc -O2 inlines it into
   every caller; with its counters counted in its size (gcov's build, and
   ballarus with tune-inline-sizes=off) it stays a call in several.  */
#include <stdio.h>
#include <stdlib.h>
typedef struct { long v; int tag; } Value;
typedef struct { Value *base, *top; Value nil; Value reg[8]; int nup; } State;

static Value *slot(State *s, int idx) {
  if (idx > 0) {
    Value *o = s->base + idx;
    return o >= s->top ? &s->nil : o;
  } else if (idx > -1000) {
    return s->top + idx;
  } else if (idx == -1000) {
    return &s->reg[0];
  } else {
    int k = -1000 - idx;
    return k <= s->nup ? &s->reg[k & 7] : &s->nil;
  }
}

long get_v(State *s, int i) { return slot(s, i)->v; }
int get_tag(State *s, int i) { return slot(s, i)->tag; }
void push_copy(State *s, int i) { *s->top++ = *slot(s, i); }
void set_v(State *s, int i, long v) { slot(s, i)->v = v; }
int is_num(State *s, int i) { return slot(s, i)->tag == 3; }
long add2(State *s, int i, int j) { return slot(s, i)->v + slot(s, j)->v; }
void swap2(State *s, int i, int j) {
  Value t = *slot(s, i); *slot(s, i) = *slot(s, j); *slot(s, j) = t;
}
int cmp_tag(State *s, int i, int j) { return slot(s, i)->tag - slot(s, j)->tag; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  static Value stack[64];
  State s = {stack, stack + 4, {0, 0}, {{0, 0}}, 3};
  for (int i = 0; i < 4; i++) stack[i] = (Value){i + 1, 3};
  long acc = 0;
  for (int r = 0; r < n; r++) {
    acc += get_v(&s, 1 + r % 3) + get_tag(&s, -1) + is_num(&s, 2);
    set_v(&s, 2, acc & 15);
    acc += add2(&s, 1, -1001) + cmp_tag(&s, 1, 2);
    swap2(&s, 1, 3);
    if (s.top - s.base < 60) push_copy(&s, -1); else s.top = s.base + 4;
  }
  printf("%ld\n", acc);
  return 0;
}
