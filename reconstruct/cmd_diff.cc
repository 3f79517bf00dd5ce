// cmd_diff.cc — `ballarus-reconstruct diff A [B] [--test-a NAME]
// [--test-b NAME] [--test NAME] [--json] [--top N] [filters]`: what changed between two profiles of one program, or two
// named tests (reconstruct/profile_pair.h), as counts and as shares (so
// runs of different lengths compare):
//
//   * overlap: the share of edge executions the two have in common, whole
//     program and per function (reconstruct/overlap.h, as `overlap`
//     prints it);
//   * functions: execution counts, and each function's share of all calls;
//     functions only in A, only in B, and those whose CFG changed;
//   * lines: gcov's line counts, and each line's share of all line
//     executions;
//   * branches: for each two-way or switch edge of a function whose CFG is
//     unchanged, how often it was taken of the times its block ran;
//   * paths: for path-mode functions with an unchanged CFG and numbering,
//     each path's count and its share of the function's path executions.
//
// Functions are matched by assembler name and source file; a rebuilt
// program matches function by function wherever the CFG is unchanged
// (same cfg_checksum, same blocks and edges), which is what makes edge,
// branch and path counts comparable; elsewhere only execution counts are.
// Lines are matched by file and line number.  Each section lists the
// entries whose share changed most (ties: the larger count change, then
// file, line and name order), at most --top of them (0 = all).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/json_writer.h"
#include "reconstruct/overlap_view.h"
#include "reconstruct/profile_pair.h"
#include "reconstruct/text_writer.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::Report;

// A side with the sums its shares are of.
struct DiffSide {
  Side side;
  long double calls = 0;  // sum of the kept functions' execution counts
  long double line_executions = 0;
  const Report& r() const { return side.r(); }
  const FileFilter& filter() const { return *side.filter; }
};

double ShareOf(long double count, long double total) {
  return total > 0 ? static_cast<double>(count / total) : 0.0;
}

std::string Pct(double share) { return fmt::format("{:.1f}%", 100 * share); }

std::string Signed(long double d) {
  return fmt::format("{:+.0f}", static_cast<double>(d));
}

long double CountOr0(const Count& c) { return c ? static_cast<long double>(*c) : 0; }

struct Entry {
  double change = 0;      // |share B - share A|
  long double delta = 0;  // count B - count A
  std::string text;       // the text line(s)
  ojson json;
  std::tuple<std::string, uint32_t, std::string> key;  // file, line, name
};

void SortAndCut(std::vector<Entry>* v, uint64_t top) {
  std::stable_sort(v->begin(), v->end(), [](const Entry& x, const Entry& y) {
    if (x.change != y.change) return x.change > y.change;
    const long double dx = std::fabs(static_cast<double>(x.delta)),
                      dy = std::fabs(static_cast<double>(y.delta));
    if (dx != dy) return dx > dy;
    return x.key < y.key;
  });
  if (top != 0 && v->size() > top) v->resize(top);
}

std::string Where(const Report& r, const FunctionReport& f) {
  return fmt::format("{} ({}:{})", Printable(f.display_name()),
                     Printable(r.file_name(f.file)), f.line);
}

ojson FunctionId(const Report& r, const FunctionReport& f) {
  return ojson{{"name", f.name},
               {"demangled", f.demangled},
               {"file", r.file_name(f.file)},
               {"line", f.line}};
}

// The sums a loaded side's shares are of.
void SumSide(DiffSide* s) {
  for (const FunctionReport& f : s->r().functions)
    if (s->filter().KeepFunction(f)) s->calls += CountOr0(f.execution_count);
  for (size_t file = 0; file < s->r().by_file.size(); ++file)
    if (s->filter().Keep(static_cast<uint32_t>(file)))
      for (const report::FileLine& l : s->r().by_file[file].lines)
        if (l.count && *l.count > 0) s->line_executions += *l.count;
}

// Everything the diff prints, before sorting and cutting.
struct Diff {
  size_t n_both = 0, n_same = 0, n_only_a = 0, n_only_b = 0;
  std::vector<std::string> only_a, only_b, changed;
  ojson only_a_json = ojson::array(), only_b_json = ojson::array(),
        changed_json = ojson::array();
  std::vector<Entry> functions, lines, branches, paths;
};

using EntryKey = std::tuple<std::string, uint32_t, std::string>;

// The function's execution count, when it or its share changed.
void AddFunctionEntry(const DiffSide& A, const DiffSide& B, const FunctionPair& p,
                      const EntryKey& key, std::vector<Entry>* out) {
  const FunctionReport &a = *p.a, &b = *p.b;
  Entry e;
  const long double ca = CountOr0(a.execution_count),
                    cb = CountOr0(b.execution_count);
  const double sa = ShareOf(ca, A.calls), sb = ShareOf(cb, B.calls);
  e.change = std::fabs(sb - sa);
  e.delta = cb - ca;
  e.key = key;
  e.text = fmt::format("{:>14} {:>14} {:>12} {:>7} {:>7}  {}",
                       static_cast<double>(ca), static_cast<double>(cb),
                       Signed(e.delta), Pct(sa), Pct(sb), Where(B.r(), b));
  e.json = FunctionId(B.r(), b);
  e.json["same_cfg"] = p.same_cfg;
  e.json["a"] = CountJson(a.execution_count);
  e.json["b"] = CountJson(b.execution_count);
  e.json["share_a"] = sa;
  e.json["share_b"] = sb;
  if (ca != cb || sa != sb) out->push_back(std::move(e));
}

// Branches: the conditional edges (true, false, switch) of both copies
// (same CFG) whose counts changed.
void AddBranchEntries(const DiffSide& B, const FunctionReport& a,
                      const FunctionReport& b, std::vector<Entry>* out) {
  for (size_t i = 0; i < b.edges.size(); ++i) {
    const report::EdgeReport& eb = b.edges[i];
    if (eb.kind != report::EdgeKind::kTrue &&
        eb.kind != report::EdgeKind::kFalse &&
        eb.kind != report::EdgeKind::kSwitch)
      continue;
    const report::EdgeReport& ea = a.edges[i];
    const long double ta = CountOr0(ea.count), tb = CountOr0(eb.count);
    const long double na = CountOr0(a.blocks[ea.src].count),
                      nb = CountOr0(b.blocks[eb.src].count);
    const double ra = ShareOf(ta, na), rb = ShareOf(tb, nb);
    if (ta == tb && na == nb) continue;
    uint32_t line = 0;
    for (const report::SourceLine& l : b.blocks[eb.src].lines) line = l.line;
    Entry e;
    e.change = std::fabs(rb - ra);
    e.delta = tb - ta;
    e.key = std::make_tuple(B.r().file_name(b.file), line, b.name);
    e.text = fmt::format(
        "{:>22} {:>22}  {}:{} {} edge {}->{} ({})",
        fmt::format("{} ({:.0f}/{:.0f})", Pct(ra), static_cast<double>(ta),
                    static_cast<double>(na)),
        fmt::format("{} ({:.0f}/{:.0f})", Pct(rb), static_cast<double>(tb),
                    static_cast<double>(nb)),
        Printable(B.r().file_name(b.file)), line, Printable(b.display_name()),
        eb.src, eb.dst, report::EdgeKindName(eb.kind));
    e.json = FunctionId(B.r(), b);
    e.json["branch_line"] = line;
    e.json["src"] = eb.src;
    e.json["dst"] = eb.dst;
    e.json["kind"] = report::EdgeKindName(eb.kind);
    e.json["a"] = ojson{{"taken", CountJson(ea.count)},
                        {"of", CountJson(a.blocks[ea.src].count)},
                        {"ratio", ra}};
    e.json["b"] = ojson{{"taken", CountJson(eb.count)},
                        {"of", CountJson(b.blocks[eb.src].count)},
                        {"ratio", rb}};
    out->push_back(std::move(e));
  }
}

// Paths: those whose count or share changed, when both copies number
// their paths alike (n_paths, cuts).
void AddPathEntries(const DiffSide& B, const FunctionReport& a,
                    const FunctionReport& b, const EntryKey& key,
                    std::vector<Entry>* out) {
  if (!(a.paths && b.paths && a.paths->n_paths == b.paths->n_paths &&
        a.paths->cut_edges == b.paths->cut_edges &&
        a.paths->cut_blocks == b.paths->cut_blocks))
    return;
  const std::string where = Where(B.r(), b);
  std::map<uint64_t, std::pair<const report::PathReport*,
                               const report::PathReport*>> by_number;
  for (const report::PathReport& x : a.paths->executed)
    by_number[x.number].first = &x;
  for (const report::PathReport& x : b.paths->executed)
    by_number[x.number].second = &x;
  const long double fa = static_cast<long double>(a.paths->total),
                    fb = static_cast<long double>(b.paths->total);
  for (const auto& [number, px] : by_number) {
    const long double ca = px.first ? px.first->count : 0,
                      cb = px.second ? px.second->count : 0;
    const double sa = ShareOf(ca, fa), sb = ShareOf(cb, fb);
    if (ca == cb && sa == sb) continue;
    const report::PathReport& shown = px.second ? *px.second : *px.first;
    Entry e;
    e.change = std::fabs(sb - sa);
    e.delta = cb - ca;
    e.key = key;
    e.text = fmt::format("{:>14} {:>14} {:>7} {:>7}  {} path {}: {}",
                         static_cast<double>(ca), static_cast<double>(cb),
                         Pct(sa), Pct(sb), where, number, PathText(shown));
    e.json = FunctionId(B.r(), b);
    e.json["id"] = std::to_string(number);
    e.json["path"] = PathText(shown);
    e.json["a"] = static_cast<double>(ca);
    e.json["b"] = static_cast<double>(cb);
    e.json["share_a"] = sa;
    e.json["share_b"] = sb;
    out->push_back(std::move(e));
  }
}

// Functions only on one side, CFG changes, and the function, branch and
// path entries of the pairs.
void CompareFunctions(const DiffSide& A, const DiffSide& B,
                      const std::vector<FunctionPair>& pairs, Diff* d) {
  for (const FunctionPair& p : pairs) {
    if (!p.b) {
      ++d->n_only_a;
      d->only_a.push_back(Where(A.r(), *p.a));
      d->only_a_json.push_back(FunctionId(A.r(), *p.a));
      continue;
    }
    if (!p.a) {
      ++d->n_only_b;
      d->only_b.push_back(Where(B.r(), *p.b));
      d->only_b_json.push_back(FunctionId(B.r(), *p.b));
      continue;
    }
    ++d->n_both;
    if (p.same_cfg) {
      ++d->n_same;
    } else {
      d->changed.push_back(Where(B.r(), *p.b));
      d->changed_json.push_back(FunctionId(B.r(), *p.b));
    }
    const FunctionReport& b = *p.b;
    const EntryKey key = std::make_tuple(B.r().file_name(b.file), b.line, b.name);
    AddFunctionEntry(A, B, p, key, &d->functions);
    if (!p.same_cfg) continue;
    AddBranchEntries(B, *p.a, b, &d->branches);
    AddPathEntries(B, *p.a, b, key, &d->paths);
  }
}

// Lines: by (file name, line) across the two reports; a line with no code
// in one of them is absent there (null in JSON, "-" in text).
std::vector<Entry> CompareLines(const DiffSide& A, const DiffSide& B) {
  struct Counts {
    int64_t a = 0, b = 0;
    bool in_a = false, in_b = false;
  };
  std::map<std::pair<std::string, uint32_t>, Counts> by;
  auto collect = [&](const DiffSide& s, bool second) {
    for (size_t file = 0; file < s.r().by_file.size(); ++file) {
      if (!s.filter().Keep(static_cast<uint32_t>(file))) continue;
      for (const report::FileLine& l : s.r().by_file[file].lines) {
        if (!l.count) continue;
        Counts& v = by[{s.r().files[file], l.line}];
        (second ? v.b : v.a) += *l.count;
        (second ? v.in_b : v.in_a) = true;
      }
    }
  };
  collect(A, false);
  collect(B, true);
  std::vector<Entry> lines;
  for (const auto& [where, c] : by) {
    const double sa = ShareOf(c.a, A.line_executions),
                 sb = ShareOf(c.b, B.line_executions);
    if (c.a == c.b && sa == sb && c.in_a == c.in_b) continue;
    Entry e;
    e.change = std::fabs(sb - sa);
    e.delta = static_cast<long double>(c.b) - c.a;
    e.key = std::make_tuple(where.first, where.second, std::string());
    e.text = fmt::format(
        "{:>14} {:>14} {:>12} {:>7} {:>7}  {}:{}",
        c.in_a ? std::to_string(c.a) : "-", c.in_b ? std::to_string(c.b) : "-",
        Signed(e.delta), c.in_a ? Pct(sa) : "-", c.in_b ? Pct(sb) : "-",
        Printable(where.first), where.second);
    e.json = ojson{{"file", where.first},
                   {"line", where.second},
                   {"a", c.in_a ? ojson(c.a) : ojson(nullptr)},
                   {"b", c.in_b ? ojson(c.b) : ojson(nullptr)},
                   {"share_a", sa},
                   {"share_b", sb}};
    lines.push_back(std::move(e));
  }
  return lines;
}

// Each section's number of changed entries, before --top cuts it.
struct SectionTotals {
  size_t functions, lines, branches, paths;
};

void PrintJson(const DiffSide& A, const DiffSide& B, const Diff& d,
               const OverlapView& overlap) {
  ojson root;
  root["a"] = SideJson(A.side);
  root["b"] = SideJson(B.side);
  root["overlap"] = OverlapJson(A.side, B.side, overlap);
  root["matched_functions"] = d.n_both;
  root["unchanged_cfgs"] = d.n_same;
  root["only_in_a"] = d.only_a_json;
  root["only_in_b"] = d.only_b_json;
  root["cfg_changed"] = d.changed_json;
  auto list = [](const std::vector<Entry>& v) {
    ojson a = ojson::array();
    for (const Entry& e : v) a.push_back(e.json);
    return a;
  };
  root["functions"] = list(d.functions);
  root["lines"] = list(d.lines);
  root["branches"] = list(d.branches);
  root["paths"] = list(d.paths);
  std::cout << JsonDump(root) << "\n";
  std::cout.flush();
}

void PrintSection(const char* title, const std::string& header,
                  const std::vector<Entry>& v, size_t total) {
  fmt::print("\n{} ({} changed{}):\n", title, total,
             v.size() < total ? fmt::format(", {} shown; --top 0 lists all",
                                            v.size())
                              : std::string());
  if (v.empty()) return;
  fmt::print("{}\n", header);
  for (const Entry& e : v) fmt::print("{}\n", e.text);
}

void PrintText(const DiffSide& A, const DiffSide& B, const Diff& d,
               const SectionTotals& n, const OverlapView& overlap) {
  fmt::print("diff A {} ({} runs) -> B {} ({} runs)\n",
             SideLabel(A.side), A.r().runs, SideLabel(B.side), B.r().runs);
  fmt::print("functions: {} in both ({} with the same CFG), {} only in A, {} "
             "only in B\n",
             d.n_both, d.n_same, d.n_only_a, d.n_only_b);
  for (const std::string& s : d.only_a) fmt::print("  only in A: {}\n", s);
  for (const std::string& s : d.only_b) fmt::print("  only in B: {}\n", s);
  for (const std::string& s : d.changed)
    fmt::print("  CFG changed (edges, branches and paths not compared): {}\n", s);
  fmt::print("{}\n", OverlapLine(overlap));
  PrintOverlapFunctions(A.side, B.side, overlap);
  PrintSection("Functions: execution counts, share of all calls",
               fmt::format("{:>14} {:>14} {:>12} {:>7} {:>7}  function", "A",
                           "B", "change", "A", "B"),
               d.functions, n.functions);
  PrintSection("Lines: gcov's line counts, share of all line executions",
               fmt::format("{:>14} {:>14} {:>12} {:>7} {:>7}  line", "A", "B",
                           "change", "A", "B"),
               d.lines, n.lines);
  PrintSection("Branches: taken, of the times their block ran",
               fmt::format("{:>22} {:>22}  branch", "A", "B"), d.branches,
               n.branches);
  PrintSection("Paths: counts, share of the function's path executions",
               fmt::format("{:>14} {:>14} {:>7} {:>7}  path", "A", "B", "A",
                           "B"),
               d.paths, n.paths);
  std::cout.flush();
}

}  // namespace

int RunDiff(const DiffSides& sides, bool json, uint64_t top,
            const FilterOptions& filter_options) {
  DiffSide A, B;
  LoadSide(sides.a, filter_options, &A.side);
  LoadSide(sides.b, filter_options, &B.side);
  SumSide(&A);
  SumSide(&B);
  const std::vector<FunctionPair> pairs = PairFunctions(A.side, B.side);
  const OverlapView overlap = ComputeOverlapView(A.side, B.side, pairs, top);
  Diff d;
  CompareFunctions(A, B, pairs, &d);
  d.lines = CompareLines(A, B);
  const SectionTotals n{d.functions.size(), d.lines.size(), d.branches.size(),
                        d.paths.size()};
  SortAndCut(&d.functions, top);
  SortAndCut(&d.lines, top);
  SortAndCut(&d.branches, top);
  SortAndCut(&d.paths, top);
  if (json)
    PrintJson(A, B, d, overlap);
  else
    PrintText(A, B, d, n, overlap);
  return 0;
}

}  // namespace ballarus
