// common.h — a function template and a static inline function, included by
// two translation units (a.cc, b.cc).  The template instantiation
// sum_squares<int> is COMDAT: both objects carry a copy, the linker keeps
// one, and a profiler must neither lose nor double-count its executions.
// clamp() is static inline: each TU owns a separate copy (not COMDAT).
#ifndef TEMPLATES_COMMON_H_
#define TEMPLATES_COMMON_H_

template <typename T>
T sum_squares(const T* v, int n) {
  T s = 0;
  for (int i = 0; i < n; i++)
    s += v[i] * v[i]; /* count(27) */
  return s;
}

static inline int clamp(int v, int lo, int hi) {
  if (v < lo)
    return lo; /* count(2) */
  if (v > hi)
    return hi; /* count(1) */
  return v; /* count(6) */
}

int from_a(int k);
long from_b(int k);

#endif  // TEMPLATES_COMMON_H_
