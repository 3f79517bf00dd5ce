// cmd_verify.cc — `ballarus-reconstruct verify PROFILE [--against OTHER]`.
//
// Checks, per function of PROFILE:
//   * flow conservation at every block (the report's flow_issues), an
//     entry count taken from the callers' call blocks included (edge mode,
//     core/entry_calls.h), which needs their counts known;
//   * path data: counts of out-of-range path numbers (instrumentation
//     errors) and negative residues (>= 2^63: an undo without its count);
//   * with edge counters and paths (mode=edge,path): the edge profile
//     derived from the paths equals the solved edge profile, edge by edge;
//   * with --against OTHER: the same comparison between the functions of
//     the two profiles matched by (name, cfg_checksum, CFG shape), the
//     path-derived counts of the side with paths against the other side's
//     solved edge counts.
// A function whose build does not count paths cut short by exit()/longjmp/
// exceptions (no kPathFlagEarlyTermination) can legitimately lose path
// counts, so its path-derived mismatches (and, when its edge counts come
// from paths, its conservation problems) are warnings, not errors.
// Exit status 1 when any error was found.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/text_writer.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::Report;

struct VerifyTally {
  size_t errors = 0, warnings = 0;
  size_t compared = 0, not_comparable = 0;
};

// One function's problems, printed together so that the reason for its
// warnings comes first.
struct Problems {
  std::string who;
  std::vector<std::string> errors, warnings;
  std::vector<std::string> saturated;  // warnings of their own reason

  void Add(bool warning, const std::string& what) {
    (warning ? warnings : errors).push_back(what);
  }
  void Print(VerifyTally* t) const {
    for (const std::string& e : errors) fmt::print("{}: {}\n", who, e);
    for (const std::string& s : saturated)
      fmt::print("{}: warning: {}\n", who, s);
    t->warnings += saturated.size();
    if (!warnings.empty())
      fmt::print(
          "{}: warning: this build does not count paths cut short by "
          "exit()/longjmp/exceptions (no early-termination flag), so "
          "path-derived counts may fall short: {} problem{} reported "
          "as warning{}\n",
          who, warnings.size(), warnings.size() == 1 ? "" : "s",
          warnings.size() == 1 ? "" : "s");
    for (const std::string& w : warnings)
      fmt::print("{}: warning: {}\n", who, w);
    t->errors += errors.size();
    t->warnings += warnings.size();
  }
};

std::string Who(const Report& r, const FunctionReport& f) {
  return fmt::format("{}: {} ({}:{})", Printable(r.profile), Printable(f.display_name()),
                     Printable(r.file_name(f.file)), f.line);
}

// Path-derived edge counts of `paths_side` against the solved edge counts
// of `edges_side` (the same function, or its match in another profile).
void CompareDerived(const FunctionReport& paths_side,
                    const FunctionReport& edges_side,
                    const std::string& edges_note,
                    const std::string& paths_note, Problems* problems,
                    VerifyTally* t) {
  const bool lossy = !paths_side.paths->early_termination;
  for (size_t e = 0; e < paths_side.edges.size(); ++e) {
    const report::EdgeReport& pe = paths_side.edges[e];
    if (!pe.in_path_dag) continue;
    const Count& measured = edges_side.edges[e].count;
    if (!measured) {
      ++t->not_comparable;
      continue;
    }
    ++t->compared;
    if (*measured == pe.path_derived) continue;
    problems->Add(
        lossy, fmt::format("edge {} ({}): edge count {}{}, path-derived {}{}",
                           EdgeText(paths_side, e), EdgeKindName(pe.kind),
                           *measured, edges_note, pe.path_derived, paths_note));
  }
}

void CheckPathCounts(const report::PathProfileReport& pp, Problems* problems) {
  if (!pp.from_edges_problem.empty())
    problems->Add(false, "paths from edge counts: " + pp.from_edges_problem);
  if (!pp.derived_problem.empty())
    problems->Add(false, "path counts from edge counts: " + pp.derived_problem);
  if (pp.storage == PathInfo::kDense && pp.out_of_range != 0)
    problems->Add(false, fmt::format("{} counts of path numbers >= {} in the "
                                     "out-of-range counter (instrumentation "
                                     "error)",
                                     pp.out_of_range, pp.n_paths));
  for (const auto& [key, count] : pp.out_of_range_keys)
    problems->Add(false, fmt::format("path number {} >= {} counted {} times "
                                     "(instrumentation error)",
                                     key, pp.n_paths, count));
  std::vector<std::pair<uint64_t, uint64_t>> negative;  // by path number
  for (const report::PathReport& p : pp.executed)
    if (p.count >= (uint64_t{1} << 63)) negative.emplace_back(p.number, p.count);
  std::sort(negative.begin(), negative.end());
  for (const auto& [number, count] : negative)
    problems->Add(false,
                  fmt::format("path {}: count {} is negative ({}): the "
                              "profile holds the undo of a path count that "
                              "another profile holds",
                              number, count, static_cast<int64_t>(count)));
}

// A FlowIssue sum, which saturates at 2^64 - 1.
std::string SumText(uint64_t sum) {
  return sum == UINT64_MAX ? std::string("2^64 - 1 or more (saturated)")
                           : std::to_string(sum);
}

// Block b's in and out sums modulo 2^64 (the virtual EXIT->ENTRY edge
// included, ignored edges not), as the counters add up.
std::pair<uint64_t, uint64_t> WrappedSums(const FunctionReport& f, uint32_t b) {
  uint64_t in = 0, out = 0;
  for (const report::EdgeReport& e : f.edges) {
    if (e.ignored() || !e.count) continue;
    if (e.dst == b) in += *e.count;
    if (e.src == b) out += *e.count;
  }
  const uint64_t virt = f.exit_to_entry.value_or(0);
  if (b == kEntryBlock) in += virt;
  if (b == kExitBlock) out += virt;
  return {in, out};
}

// An imbalance whose sums passed 2^64 - 1 (FlowIssue clamps them): counts
// wrap modulo 2^64 when profiles are merged, so the block is checked
// modulo 2^64.  Equal: a warning that it cannot be checked further; not
// equal: an error.
void AddSaturatedImbalance(const FunctionReport& f, const FlowIssue& is,
                           bool warning, Problems* problems) {
  const auto [in, out] = WrappedSums(f, is.block);
  const std::string what = fmt::format(
      "block {}: counts saturated (a sum of its edge counts passes 2^64 - 1)",
      is.block);
  if (in == out)
    problems->saturated.push_back(
        what + fmt::format(": in and out agree modulo 2^64 ({}), as counts "
                           "wrap when merged; not checked further",
                           in));
  else
    problems->Add(warning,
                  what + fmt::format(": in {} != out {} modulo 2^64", in, out));
}

void CheckFlow(const FunctionReport& f, Problems* problems) {
  const bool lossy = f.paths && !f.paths->early_termination;
  for (const FlowIssue& is : f.flow_issues) {
    // Edges outside the path DAG (abnormal ones) have no path-derived
    // count: flow solves them if it can, and nothing is said if not.
    if (f.edges_from_paths && is.kind == FlowIssue::kUnknown &&
        is.edge != kVirtualEdge && !f.edges[is.edge].in_path_dag)
      continue;
    const bool warning = f.edges_from_paths && lossy;
    switch (is.kind) {
      case FlowIssue::kImbalance:
        if (is.in_sum == UINT64_MAX || is.out_sum == UINT64_MAX) {
          AddSaturatedImbalance(f, is, warning, problems);
          break;
        }
        problems->Add(warning, fmt::format("block {}: in {} != out {}",
                                           is.block, is.in_sum, is.out_sum));
        break;
      case FlowIssue::kNegative:
        problems->Add(warning,
                      fmt::format("block {}: edge {} would need a negative "
                                  "count (in {}, out {})",
                                  is.block, EdgeText(f, is.edge),
                                  SumText(is.in_sum), SumText(is.out_sum)));
        break;
      case FlowIssue::kUnknown:
        problems->Add(warning,
                      fmt::format("block {}: edge {}: count cannot be "
                                  "determined",
                                  is.block, EdgeText(f, is.edge)));
        break;
    }
  }
}

bool SameShape(const FunctionReport& a, const FunctionReport& b) {
  if (a.blocks.size() != b.blocks.size() || a.edges.size() != b.edges.size())
    return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].src != b.edges[i].src || a.edges[i].dst != b.edges[i].dst)
      return false;
  return true;
}

std::vector<std::string> TuNames(const Report& r, const FunctionReport& f) {
  std::vector<std::string> names;
  for (uint32_t t : f.tus) names.push_back(r.tus[t].source);
  return names;
}

struct Match {
  const FunctionReport* mine = nullptr;
  const FunctionReport* theirs = nullptr;  // nullptr: ambiguous
  size_t candidates = 0;
};

// PROFILE's functions matched in OTHER by (name, cfg_checksum, CFG shape);
// several candidates (statics of one name) are told apart by their TUs.
std::vector<Match> MatchFunctions(const Report& p, const Report& other) {
  std::map<std::pair<std::string, uint32_t>, std::vector<const FunctionReport*>>
      index;
  for (const FunctionReport& g : other.functions)
    index[{g.name, g.checksum}].push_back(&g);
  std::vector<Match> out;
  for (const FunctionReport& f : p.functions) {
    auto it = index.find({f.name, f.checksum});
    if (it == index.end()) continue;
    std::vector<const FunctionReport*> c;
    for (const FunctionReport* g : it->second)
      if (SameShape(f, *g)) c.push_back(g);
    if (c.empty()) continue;
    if (c.size() > 1) {
      std::vector<const FunctionReport*> same_tus;
      for (const FunctionReport* g : c)
        if (TuNames(other, *g) == TuNames(p, f)) same_tus.push_back(g);
      if (same_tus.size() == 1) c = same_tus;
    }
    out.push_back(Match{&f, c.size() == 1 ? c[0] : nullptr, c.size()});
  }
  return out;
}

}  // namespace

int RunVerify(const ProfileInputs& in, const ProfileInputs& against_in) {
  LoadedReport mine;
  LoadReport(in, &mine);
  const std::string& path = mine.report.profile;
  const Report& p = mine.report;
  std::unique_ptr<LoadedReport> theirs;
  std::vector<Match> matches;
  size_t n_against = 0;
  std::string against;
  if (!against_in.args.empty()) {
    theirs = std::make_unique<LoadedReport>();
    LoadReport(against_in, theirs.get());
    against = theirs->report.profile;
    if (!p.has_paths && !theirs->report.has_paths)
      Fail(against,
           "neither " + path +
               " nor this profile has path data: "
               "--against compares a path profile with an edge profile");
    matches = MatchFunctions(p, theirs->report);
    for (const Match& m : matches)
      if (m.theirs && (m.mine->paths || m.theirs->paths)) ++n_against;
    if (n_against == 0)
      Fail(against,
           fmt::format("no function matches a function of {} with path data "
                       "on either side (same name, cfg checksum and CFG; {} "
                       "matched by name and checksum)",
                       path, matches.size()));
  }

  VerifyTally tally, against_tally;
  for (const FunctionReport& f : p.functions) {
    Problems problems{Who(p, f), {}, {}};
    // An entry count taken from the callers' call blocks needs their
    // counts; conservation with it is CheckFlow's.
    if (!f.entry_problem.empty())
      problems.Add(false, "entry count from calls: " + f.entry_problem);
    CheckFlow(f, &problems);
    if (f.paths) {
      CheckPathCounts(*f.paths, &problems);
      if (f.edge_counters) CompareDerived(f, f, "", "", &problems, &tally);
    }
    problems.Print(&tally);
  }

  for (const Match& m : matches) {
    if (!m.theirs) {
      if (m.mine->paths) {
        fmt::print("{}: warning: {} functions of {} match it; not compared\n",
                   Who(p, *m.mine), m.candidates, against);
        ++against_tally.warnings;
      }
      continue;
    }
    const bool mine_has_paths = m.mine->paths.has_value();
    if (!mine_has_paths && !m.theirs->paths) continue;
    const FunctionReport& ps = mine_has_paths ? *m.mine : *m.theirs;
    const FunctionReport& es = mine_has_paths ? *m.theirs : *m.mine;
    const std::string& pfile = mine_has_paths ? path : against;
    const std::string& efile = mine_has_paths ? against : path;
    Problems problems{Who(p, *m.mine), {}, {}};
    CompareDerived(ps, es, " in " + efile, " in " + pfile, &problems,
                   &against_tally);
    problems.Print(&against_tally);
  }

  if (tally.errors + against_tally.errors > 0) {
    std::fflush(stdout);
    return 1;
  }
  std::string line = fmt::format(
      "{}: ok: {} functions, {} blocks, {} edges "
      "checked",
      path, p.functions.size(), p.totals.blocks, p.totals.edges);
  if (p.has_paths || theirs)
    line += fmt::format(
        "; paths: {} functions, {} path-derived edges "
        "compared, {} not comparable",
        p.totals.path_functions, tally.compared, tally.not_comparable);
  if (theirs)
    line += fmt::format(
        "; against {}: {} functions, {} edges compared, {} "
        "not comparable",
        against, n_against, against_tally.compared,
        against_tally.not_comparable);
  const size_t warnings = tally.warnings + against_tally.warnings;
  if (warnings > 0)
    line += fmt::format("; {} warning{}", warnings, warnings == 1 ? "" : "s");
  fmt::print("{}\n", line);
  return 0;
}

}  // namespace ballarus
