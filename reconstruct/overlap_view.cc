// overlap_view.cc — the overlap figure of two sides, printed
// (reconstruct/overlap_view.h).
#include "reconstruct/overlap_view.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace ballarus {
namespace {

using report::FunctionReport;

std::vector<Count> EdgeCounts(const FunctionReport* f) {
  std::vector<Count> counts;
  if (f == nullptr) return counts;
  for (const report::EdgeReport& e : f->edges) counts.push_back(e.count);
  return counts;
}

// The side that names a pair: B's copy when it has one.
std::pair<const Side*, const FunctionReport*> Shown(const Side& A, const Side& B,
                                                    const FunctionPair& p) {
  return p.b ? std::make_pair(&B, p.b) : std::make_pair(&A, p.a);
}

std::tuple<std::string, uint32_t, std::string> KeyOf(const Side& A, const Side& B,
                                                      const FunctionPair& p) {
  const auto [s, f] = Shown(A, B, p);
  return std::make_tuple(s->r().file_name(f->file), f->line, f->name);
}

// The pairs that ran on some side, by loss, cut to `top`.
void ChooseListed(const Side& A, const Side& B, uint64_t top, OverlapView* v) {
  for (size_t i = 0; i < v->pairs.size(); ++i) {
    const FunctionOverlap& f = v->figures.functions[i];
    if (f.total_a > 0 || f.total_b > 0) v->listed.push_back(i);
  }
  std::stable_sort(v->listed.begin(), v->listed.end(), [&](size_t x, size_t y) {
    const double lx = v->figures.functions[x].loss, ly = v->figures.functions[y].loss;
    if (lx != ly) return lx > ly;
    return KeyOf(A, B, v->pairs[x]) < KeyOf(A, B, v->pairs[y]);
  });
  v->listed_of = v->listed.size();
  if (top != 0 && v->listed.size() > top) v->listed.resize(top);
}

std::string Pct(double share) { return fmt::format("{:.2f}%", 100 * share); }

std::string FigureText(const FunctionPair& p, const FunctionOverlap& f) {
  if (f.overlap) return Pct(*f.overlap);
  return p.a && p.b && !p.same_cfg ? "CFG changed" : "-";
}

ojson FigureJson(const std::optional<double>& x) {
  return x ? ojson(*x) : ojson(nullptr);
}

// A sum of counts: an integer while it fits in 64 bits (it always does
// but for many saturated counters).
ojson TotalJson(long double total) {
  if (total < 18446744073709551616.0L) return ojson(static_cast<uint64_t>(total));
  return ojson(static_cast<double>(total));
}

}  // namespace

OverlapView ComputeOverlapView(const Side& A, const Side& B,
                               std::vector<FunctionPair> pairs, uint64_t top) {
  OverlapView v;
  v.pairs = std::move(pairs);
  for (const FunctionPair& p : v.pairs) {
    v.edges_a.push_back(EdgeCounts(p.a));
    v.edges_b.push_back(EdgeCounts(p.b));
  }
  std::vector<OverlapInput> in;
  for (size_t i = 0; i < v.pairs.size(); ++i)
    in.push_back(OverlapInput{v.pairs[i].a ? &v.edges_a[i] : nullptr,
                              v.pairs[i].b ? &v.edges_b[i] : nullptr,
                              v.pairs[i].same_cfg});
  v.figures = ComputeOverlap(in);
  ChooseListed(A, B, top, &v);
  return v;
}

std::string OverlapLine(const OverlapView& v) {
  const ProgramOverlap& p = v.figures;
  std::string line = fmt::format(
      "overlap: {} of edge executions in common (Σ min of each edge's share; "
      "edge executions: A {:.0f}, B {:.0f})",
      p.overlap ? Pct(*p.overlap) : "-", static_cast<double>(p.total_a),
      static_cast<double>(p.total_b));
  if (p.unknown != 0)
    line += fmt::format("; {} edge counts unknown, taken as 0", p.unknown);
  return line;
}

void PrintOverlapFunctions(const Side& A, const Side& B, const OverlapView& v) {
  fmt::print("\nOverlap per function, by the overlap it loses ({} ran{}):\n",
             v.listed_of,
             v.listed.size() < v.listed_of
                 ? fmt::format(", {} shown; --top 0 lists all", v.listed.size())
                 : std::string());
  if (v.listed.empty()) return;
  fmt::print("{:>11} {:>8} {:>8} {:>8}  function\n", "overlap", "A", "B", "loss");
  for (size_t i : v.listed) {
    const FunctionOverlap& f = v.figures.functions[i];
    const auto [s, fn] = Shown(A, B, v.pairs[i]);
    fmt::print("{:>11} {:>8} {:>8} {:>8}  {} ({}:{}){}\n", FigureText(v.pairs[i], f),
               Pct(f.share_a), Pct(f.share_b), Pct(f.loss),
               Printable(fn->display_name()), Printable(s->r().file_name(fn->file)),
               fn->line,
               !v.pairs[i].a ? " only in B" : !v.pairs[i].b ? " only in A" : "");
  }
}

ojson OverlapJson(const Side& A, const Side& B, const OverlapView& v) {
  const ProgramOverlap& p = v.figures;
  ojson o{{"overlap", FigureJson(p.overlap)},
          {"edge_executions_a", TotalJson(p.total_a)},
          {"edge_executions_b", TotalJson(p.total_b)},
          {"unknown_edges", p.unknown}};
  ojson list = ojson::array();
  for (size_t i : v.listed) {
    const FunctionOverlap& f = v.figures.functions[i];
    const auto [s, fn] = Shown(A, B, v.pairs[i]);
    list.push_back(ojson{{"name", fn->name},
                         {"demangled", fn->demangled},
                         {"file", s->r().file_name(fn->file)},
                         {"line", fn->line},
                         {"overlap", FigureJson(f.overlap)},
                         {"share_a", f.share_a},
                         {"share_b", f.share_b},
                         {"contribution", f.contribution},
                         {"loss", f.loss},
                         {"same_cfg", v.pairs[i].same_cfg},
                         {"in_a", v.pairs[i].a != nullptr},
                         {"in_b", v.pairs[i].b != nullptr}});
  }
  o["functions"] = list;
  o["functions_ran"] = v.listed_of;
  return o;
}

ojson SideJson(const Side& s) {
  return ojson{{"profile", s.r().profile},
               {"runs", s.r().runs},
               {"test", s.test.empty() ? ojson(nullptr) : ojson(s.test)}};
}

}  // namespace ballarus
