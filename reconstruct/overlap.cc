// overlap.cc — the overlap figure of two profiles (reconstruct/overlap.h).
#include "reconstruct/overlap.h"

#include <algorithm>

namespace ballarus {
namespace {

long double Value(const Count& c) { return c ? static_cast<long double>(*c) : 0; }

// Sum of a side's edge counts; unknown counts are tallied, not added.
long double Total(const std::vector<Count>* edges, size_t* unknown) {
  long double sum = 0;
  if (edges == nullptr) return sum;
  for (const Count& c : *edges) {
    sum += Value(c);
    if (!c) ++*unknown;
  }
  return sum;
}

double Ratio(long double x, long double total) {
  return total > 0 ? static_cast<double>(x / total) : 0.0;
}

// Σ_e min(a_e/ta, b_e/tb) over the edges of a function both sides know
// with the same CFG.
double SumOfMinima(const std::vector<Count>& a, const std::vector<Count>& b,
                   long double ta, long double tb) {
  if (ta <= 0 || tb <= 0) return 0;
  long double sum = 0;
  for (size_t e = 0; e < a.size() && e < b.size(); ++e)
    sum += std::min(Value(a[e]) / ta, Value(b[e]) / tb);
  return static_cast<double>(sum);
}

bool Comparable(const OverlapInput& in) {
  return in.a && in.b && in.same_cfg && in.a->size() == in.b->size();
}

// One function, once the program totals are known.
FunctionOverlap OneFunction(const OverlapInput& in, long double total_a,
                            long double total_b) {
  FunctionOverlap f;
  f.total_a = Total(in.a, &f.unknown);
  f.total_b = Total(in.b, &f.unknown);
  f.share_a = Ratio(f.total_a, total_a);
  f.share_b = Ratio(f.total_b, total_b);
  if (Comparable(in)) {
    f.contribution = SumOfMinima(*in.a, *in.b, total_a, total_b);
    if (f.total_a > 0 || f.total_b > 0)
      f.overlap = SumOfMinima(*in.a, *in.b, f.total_a, f.total_b);
  } else if ((in.a == nullptr || in.b == nullptr) &&
             (f.total_a > 0 || f.total_b > 0)) {
    f.overlap = 0;  // ran on one side only
  }
  f.loss = std::max(0.0, (f.share_a + f.share_b) / 2 - f.contribution);
  return f;
}

}  // namespace

ProgramOverlap ComputeOverlap(const std::vector<OverlapInput>& functions) {
  ProgramOverlap p;
  size_t ignored = 0;
  for (const OverlapInput& in : functions) {
    p.total_a += Total(in.a, &ignored);
    p.total_b += Total(in.b, &ignored);
  }
  long double sum = 0;
  for (const OverlapInput& in : functions) {
    p.functions.push_back(OneFunction(in, p.total_a, p.total_b));
    sum += p.functions.back().contribution;
    p.unknown += p.functions.back().unknown;
  }
  if (p.total_a > 0 || p.total_b > 0) p.overlap = static_cast<double>(sum);
  return p;
}

}  // namespace ballarus
