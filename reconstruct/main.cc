// main.cc — ballarus-reconstruct: show, verify, merge, stats and paths of
// ballarus profiles.
//
//   ballarus-reconstruct show PROFILE [--json] [--function REGEX]
//   ballarus-reconstruct verify PROFILE [--against OTHER]
//   ballarus-reconstruct merge -o OUT PROFILE...
//   ballarus-reconstruct stats PROFILE [--json] [--gcov FILE.gcda...]
//   ballarus-reconstruct paths PROFILE [--top N] [--function REGEX] [--json]
//                                      [--decode ID]
//
// Every subcommand loads its input through LoadProfile
// (reconstruct/loaded_profile.h) and renders the result; a new subcommand
// slots in as one more Add*/Run* pair.
//
// Exit codes (docs/DESIGN.md): 0 success, 1 `verify` found violations,
// 2 bad usage or bad input, reported as ONE line
// `ballarus-reconstruct: FILE: offset N: problem`.  No exception escapes.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/flow.h"
#include "core/gcov_lines.h"
#include "core/metadata.h"
#include "core/path_profile.h"
#include "reconstruct/gcov_oracle.h"
#include "reconstruct/loaded_profile.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace {

constexpr const char* kProg = "ballarus-reconstruct";
constexpr const char* kVersion = "0.1.0";

using ojson = nlohmann::ordered_json;

// Thrown only inside this file to unwind to main with exit code 2.
struct Fatal {
  std::string message;
};

[[noreturn]] void Fail(const std::string& file, const std::string& problem) {
  throw Fatal{file.empty() ? problem : file + ": " + problem};
}

void Load(const std::string& path, LoadedProfile* p) {
  std::string err;
  if (!LoadProfile(path, p, &err)) Fail(path, err);
}

std::string EdgeKind(uint32_t f) {
  if (f & kEdgeEh) return "eh";
  if (f & kEdgeAbnormal) return "abnormal";
  if (f & kEdgeFake) return "fake";
  if (f & kEdgeTrue) return "true";
  if (f & kEdgeFalse) return "false";
  if (f & kEdgeSwitch) return "switch";
  if (f & kEdgeFallthru) return "fallthrough";
  return "jump";
}

std::vector<std::string> EdgeFlags(uint32_t f) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kEdgeFallthru, "fallthru"}, {kEdgeTrue, "true"},
      {kEdgeFalse, "false"},       {kEdgeEh, "eh"},
      {kEdgeAbnormal, "abnormal"}, {kEdgeFake, "fake"},
      {kEdgeSwitch, "switch"},     {kEdgeIgnored, "ignored"},
      {kEdgeSplit, "split"},       {kEdgeCritical, "critical"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames)
    if (f & bit) out.push_back(name);
  return out;
}

ojson CountJson(const Count& c) { return c ? ojson(*c) : ojson(nullptr); }
std::string CountText(const Count& c) {
  return c ? std::to_string(*c) : std::string("?");
}

std::vector<std::string> TuNames(const LoadedProfile& p,
                                 const LoadedFunction& f) {
  std::vector<std::string> names;
  for (size_t t : f.tus) names.push_back(p.tus[t].tu.source);
  return names;
}

std::vector<const LoadedFunction*> Select(const LoadedProfile& p,
                                          const std::string& pattern) {
  std::vector<const LoadedFunction*> out;
  std::regex re;
  if (!pattern.empty()) {
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      Fail("", "--function: invalid regular expression '" + pattern +
                   "': " + e.what());
    }
  }
  for (const LoadedFunction& f : p.functions)
    if (pattern.empty() || std::regex_search(f.function->name, re) ||
        std::regex_search(f.function->demangled, re))
      out.push_back(&f);
  return out;
}

// ------------------------------------------------------------------ paths
// (rendering helpers shared by show, paths and verify)

std::string BlockName(uint32_t b) {
  return b == kEntryBlock  ? "ENTRY"
         : b == kExitBlock ? "EXIT"
                           : std::to_string(b);
}

const char* StorageName(uint32_t storage) {
  return storage == PathInfo::kHashed ? "hashed" : "dense";
}

std::string EdgeText(const Function& f, size_t e) {
  return e == kVirtualEdge
             ? std::string("EXIT->ENTRY")
             : fmt::format("{}->{}", f.edges[e].src, f.edges[e].dst);
}

// "^3 4 6 -> back edge to 3": "^" marks a path that began after a back edge
// or a cut; the end is a return (ends with EXIT), "(did not return)" (a
// fake edge into EXIT: exit(), longjmp, an exception), a back edge, or a
// cut (the cut block runs on the next path).
std::string PathText(const PathView& v) {
  std::string s = v.start == PathView::kFromEntry ? "" : "^";
  for (size_t i = 0; i < v.blocks.size(); ++i)
    s += (i ? " " : "") + BlockName(v.blocks[i]);
  switch (v.end) {
    case PathView::kReturn:
      break;
    case PathView::kNoReturn:
      s += " (did not return)";
      break;
    case PathView::kBackEdge:
      s += " -> back edge to " + BlockName(v.target);
      break;
    case PathView::kCut:
      s += " -> cut at " + BlockName(v.target);
      break;
  }
  return s;
}

// The blocks' source lines, consecutive duplicates dropped.
std::vector<std::pair<std::string, uint32_t>> PathLines(
    const LoadedFunction& lf, const PathView& v) {
  std::vector<std::pair<std::string, uint32_t>> out;
  for (uint32_t b : v.blocks)
    for (const Location& l : lf.function->blocks[b].lines) {
      std::pair<std::string, uint32_t> x{lf.tu->files[l.file], l.line};
      if (out.empty() || out.back() != x) out.push_back(std::move(x));
    }
  return out;
}

PathView ViewOf(const LoadedFunction& lf, const mpz_class& id) {
  std::vector<uint32_t> edges;
  if (!DecodePath(lf.paths->dag, lf.paths->numbering, id, &edges))
    Fail("", "internal error: path " + id.get_str() + " of " +
                 lf.function->name + " cannot be decoded");
  return DescribePath(*lf.function, lf.paths->dag, edges);
}

const char* StartName(PathView::Start s) {
  switch (s) {
    case PathView::kAfterBackEdge:
      return "back_edge";
    case PathView::kAfterCut:
      return "cut";
    default:
      return "entry";
  }
}

const char* EndName(PathView::End e) {
  switch (e) {
    case PathView::kNoReturn:
      return "no_return";
    case PathView::kBackEdge:
      return "back_edge";
    case PathView::kCut:
      return "cut";
    default:
      return "return";
  }
}

ojson PathJson(const LoadedFunction& lf, const std::string& id, uint64_t count,
               const PathView& v, bool with_lines) {
  ojson j;
  j["id"] = id;
  j["count"] = count;
  j["blocks"] = v.blocks;
  j["start"] = StartName(v.start);
  j["end"] = EndName(v.end);
  if (v.end == PathView::kBackEdge || v.end == PathView::kCut)
    j["to"] = v.target;
  if (with_lines) {
    ojson lines = ojson::array();
    for (const auto& [file, line] : PathLines(lf, v))
      lines.push_back(ojson{{"file", file}, {"line", line}});
    j["lines"] = lines;
  }
  return j;
}

// Executed paths by count, descending; ties by ascending number.
std::vector<std::pair<uint64_t, uint64_t>> SortedPaths(const LoadedPaths& lp) {
  std::vector<std::pair<uint64_t, uint64_t>> v(lp.counts.begin(),
                                               lp.counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return v;
}

// ------------------------------------------------------------------- show

ojson FunctionJson(const LoadedProfile& p, const LoadedFunction& lf) {
  const Function& f = *lf.function;
  const TranslationUnit& tu = *lf.tu;
  ojson j;
  j["name"] = f.name;
  j["demangled"] = f.demangled;
  j["file"] = lf.file_name();
  j["line"] = f.line;
  j["end_line"] = f.end_line;
  j["checksum"] = f.cfg_checksum;
  j["execution_count"] = CountJson(lf.flow.blocks[kEntryBlock]);
  j["tus"] = TuNames(p, lf);
  if (lf.edges_from_paths()) j["edges_from_paths"] = true;
  ojson blocks = ojson::array();
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    ojson lines = ojson::array(), locs = ojson::array();
    for (const Location& l : f.blocks[b].lines) {
      lines.push_back(l.line);
      locs.push_back(ojson{{"file", tu.files[l.file]}, {"line", l.line}});
    }
    blocks.push_back(ojson{{"id", b},
                           {"count", CountJson(lf.flow.blocks[b])},
                           {"lines", lines},
                           {"locations", locs}});
  }
  j["blocks"] = blocks;
  ojson edges = ojson::array();
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    edges.push_back(ojson{{"src", e.src},
                          {"dst", e.dst},
                          {"count", CountJson(lf.flow.edges[i])},
                          {"kind", EdgeKind(e.flags)},
                          {"counted", lf.known[i].has_value()},
                          {"flags", EdgeFlags(e.flags)}});
  }
  j["edges"] = edges;
  ojson lines = ojson::array();
  for (const GcovLine& l : lf.lines)
    lines.push_back(ojson{
        {"file", tu.files[l.file]}, {"line", l.line}, {"count", l.count}});
  j["line_counts"] = lines;
  return j;
}

void PrintFunctionText(const LoadedProfile& p, const LoadedFunction& lf) {
  const Function& f = *lf.function;
  const TranslationUnit& tu = *lf.tu;
  std::string tus;
  for (const std::string& t : TuNames(p, lf)) tus += (tus.empty() ? "" : ", ") + t;
  fmt::print("{} ({}:{}): executed {} times, checksum 0x{:08x}, TU {}\n",
             lf.display_name(), lf.file_name(), f.line,
             CountText(lf.flow.blocks[kEntryBlock]), f.cfg_checksum, tus);
  if (lf.paths)
    fmt::print("  paths: {} of {} executed{}\n", lf.paths->counts.size(),
               lf.paths->info.n_paths,
               lf.edges_from_paths()
                   ? "; edge counts derived from them (counted = path)"
                   : "");
  fmt::print("  blocks:\n  {:>6} {:>20}  lines\n", "id", "count");
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    std::string lines;
    for (const Location& l : f.blocks[b].lines) {
      if (!lines.empty()) lines += ' ';
      lines += l.file == f.file ? std::to_string(l.line)
                                : tu.files[l.file] + ":" + std::to_string(l.line);
    }
    const char* tag = b == kEntryBlock ? " ENTRY" : b == kExitBlock ? " EXIT" : "";
    fmt::print("  {:>6} {:>20}  {}{}\n", b, CountText(lf.flow.blocks[b]), lines,
               tag);
  }
  fmt::print("  edges:\n  {:>13} {:<12} {:<8} {:>20}\n", "src->dst", "kind",
             "counted", "count");
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    fmt::print("  {:>13} {:<12} {:<8} {:>20}\n",
               fmt::format("{}->{}", e.src, e.dst), EdgeKind(e.flags),
               lf.known[i] ? (lf.edges_from_paths() ? "path" : "yes") : "no",
               CountText(lf.flow.edges[i]));
  }
  fmt::print("  lines:\n");
  for (const GcovLine& l : lf.lines)
    fmt::print("  {:>20}: {}:{}\n", l.count, tu.files[l.file], l.line);
  fmt::print("\n");
}

int RunShow(const std::string& path, bool json, const std::string& regex) {
  LoadedProfile p;
  Load(path, &p);
  const std::vector<const LoadedFunction*> fs = Select(p, regex);
  if (json) {
    ojson root;
    root["profile"] = path;
    root["runs"] = p.raw.runs;
    ojson arr = ojson::array();
    for (const LoadedFunction* f : fs) arr.push_back(FunctionJson(p, *f));
    root["functions"] = arr;
    if (regex.empty()) {
      ojson lines = ojson::array();
      for (const auto& [key, count] : p.file_lines) {
        ojson l;
        l["file"] = key.first;
        l["line"] = key.second;
        l["count"] = count;
        lines.push_back(l);
      }
      root["lines"] = lines;
    }
    std::cout << root.dump(1) << "\n";
  } else {
    fmt::print("profile {}: {} runs, {} translation units, {} functions\n\n",
               path, p.raw.runs, p.tus.size(), p.functions.size());
    for (const LoadedFunction* f : fs) PrintFunctionText(p, *f);
  }
  std::cout.flush();
  return 0;
}

// ----------------------------------------------------------------- verify
//
// Checks, per function of PROFILE:
//   * flow conservation at every block (CheckConservation);
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

struct VerifyTally {
  size_t errors = 0, warnings = 0;
  size_t compared = 0, not_comparable = 0;
};

// One function's problems, printed together so that the reason for its
// warnings comes first.
struct FunctionReport {
  std::string who;
  std::vector<std::string> errors, warnings;

  void Problem(bool warning, const std::string& what) {
    (warning ? warnings : errors).push_back(what);
  }
  void Print(VerifyTally* t) const {
    for (const std::string& e : errors) fmt::print("{}: {}\n", who, e);
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

std::string Who(const std::string& path, const LoadedFunction& lf) {
  return fmt::format("{}: {} ({}:{})", path, lf.display_name(), lf.file_name(),
                     lf.function->line);
}

// Path-derived edge counts of `paths_side` against the solved edge counts
// of `edges_side` (the same function, or its match in another profile).
void CompareDerived(const LoadedFunction& paths_side,
                    const LoadedFunction& edges_side,
                    const std::string& edges_note,
                    const std::string& paths_note, FunctionReport* rep,
                    VerifyTally* t) {
  const Function& f = *paths_side.function;
  const LoadedPaths& lp = *paths_side.paths;
  for (size_t e = 0; e < f.edges.size(); ++e) {
    if (!lp.in_dag(e)) continue;
    const Count& measured = edges_side.flow.edges[e];
    if (!measured) {
      ++t->not_comparable;
      continue;
    }
    ++t->compared;
    if (*measured == lp.derived[e]) continue;
    rep->Problem(!lp.early_termination(),
                 fmt::format("edge {} ({}): edge count {}{}, path-derived {}{}",
                             EdgeText(f, e), EdgeKind(f.edges[e].flags),
                             *measured, edges_note, lp.derived[e], paths_note));
  }
}

void CheckPathCounts(const LoadedPaths& lp, FunctionReport* rep) {
  if (lp.info.storage == PathInfo::kDense && lp.out_of_range != 0)
    rep->Problem(false, fmt::format("{} counts of path numbers >= {} in the "
                                    "out-of-range counter (instrumentation "
                                    "error)",
                                    lp.out_of_range, lp.info.n_paths));
  for (const auto& [key, count] : lp.out_of_range_keys)
    rep->Problem(false, fmt::format("path number {} >= {} counted {} times "
                                    "(instrumentation error)",
                                    key, lp.info.n_paths, count));
  for (const auto& [number, count] : lp.counts)
    if (count >= (uint64_t{1} << 63))
      rep->Problem(false,
                   fmt::format("path {}: count {} is negative ({}): the "
                               "profile holds the undo of a path count that "
                               "another profile holds",
                               number, count, static_cast<int64_t>(count)));
}

bool SameShape(const Function& a, const Function& b) {
  if (a.blocks.size() != b.blocks.size() || a.edges.size() != b.edges.size())
    return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].src != b.edges[i].src || a.edges[i].dst != b.edges[i].dst)
      return false;
  return true;
}

struct Match {
  const LoadedFunction* mine = nullptr;
  const LoadedFunction* theirs = nullptr;  // nullptr: ambiguous
  size_t candidates = 0;
};

// PROFILE's functions matched in OTHER by (name, cfg_checksum, CFG shape);
// several candidates (statics of one name) are told apart by their TUs.
std::vector<Match> MatchFunctions(const LoadedProfile& p,
                                  const LoadedProfile& other) {
  std::map<std::pair<std::string, uint32_t>, std::vector<const LoadedFunction*>>
      index;
  for (const LoadedFunction& g : other.functions)
    index[{g.function->name, g.function->cfg_checksum}].push_back(&g);
  std::vector<Match> out;
  for (const LoadedFunction& lf : p.functions) {
    auto it = index.find({lf.function->name, lf.function->cfg_checksum});
    if (it == index.end()) continue;
    std::vector<const LoadedFunction*> c;
    for (const LoadedFunction* g : it->second)
      if (SameShape(*lf.function, *g->function)) c.push_back(g);
    if (c.empty()) continue;
    if (c.size() > 1) {
      std::vector<const LoadedFunction*> same_tus;
      for (const LoadedFunction* g : c)
        if (TuNames(other, *g) == TuNames(p, lf)) same_tus.push_back(g);
      if (same_tus.size() == 1) c = same_tus;
    }
    out.push_back(Match{&lf, c.size() == 1 ? c[0] : nullptr, c.size()});
  }
  return out;
}

int RunVerify(const std::string& path, const std::string& against) {
  LoadedProfile p;
  Load(path, &p);
  std::unique_ptr<LoadedProfile> other;
  std::vector<Match> matches;
  size_t n_against = 0;
  if (!against.empty()) {
    other = std::make_unique<LoadedProfile>();
    Load(against, other.get());
    if (!p.has_paths && !other->has_paths)
      Fail(against,
           "neither " + path +
               " nor this profile has path data: "
               "--against compares a path profile with an edge profile");
    matches = MatchFunctions(p, *other);
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
  size_t n_blocks = 0, n_edges = 0, n_path_functions = 0;
  for (const LoadedFunction& lf : p.functions) {
    const Function& f = *lf.function;
    n_blocks += f.blocks.size();
    n_edges += f.edges.size();
    FunctionReport rep{Who(path, lf), {}, {}};
    const bool lossy = lf.paths && !lf.paths->early_termination();
    for (const FlowIssue& is : CheckConservation(f, lf.flow)) {
      // Edges outside the path DAG (abnormal ones) have no path-derived
      // count: flow solves them if it can, and nothing is said if not.
      if (lf.edges_from_paths() && is.kind == FlowIssue::kUnknown &&
          is.edge != kVirtualEdge && !lf.paths->in_dag(is.edge))
        continue;
      const bool warning = lf.edges_from_paths() && lossy;
      switch (is.kind) {
        case FlowIssue::kImbalance:
          rep.Problem(warning, fmt::format("block {}: in {} != out {}",
                                           is.block, is.in_sum, is.out_sum));
          break;
        case FlowIssue::kNegative:
          rep.Problem(warning,
                      fmt::format("block {}: edge {} would need a negative "
                                  "count (in {}, out {})",
                                  is.block, EdgeText(f, is.edge), is.in_sum,
                                  is.out_sum));
          break;
        case FlowIssue::kUnknown:
          rep.Problem(warning, fmt::format("block {}: edge {}: count cannot be "
                                           "determined",
                                           is.block, EdgeText(f, is.edge)));
          break;
      }
    }
    if (lf.paths) {
      ++n_path_functions;
      CheckPathCounts(*lf.paths, &rep);
      if (lf.edge_counters) CompareDerived(lf, lf, "", "", &rep, &tally);
    }
    rep.Print(&tally);
  }

  for (const Match& m : matches) {
    if (!m.theirs) {
      if (m.mine->paths) {
        fmt::print("{}: warning: {} functions of {} match it; not compared\n",
                   Who(path, *m.mine), m.candidates, against);
        ++against_tally.warnings;
      }
      continue;
    }
    const bool mine_has_paths = m.mine->paths.has_value();
    if (!mine_has_paths && !m.theirs->paths) continue;
    const LoadedFunction& ps = mine_has_paths ? *m.mine : *m.theirs;
    const LoadedFunction& es = mine_has_paths ? *m.theirs : *m.mine;
    const std::string& pfile = mine_has_paths ? path : against;
    const std::string& efile = mine_has_paths ? against : path;
    FunctionReport rep{Who(path, *m.mine), {}, {}};
    CompareDerived(ps, es, " in " + efile, " in " + pfile, &rep,
                   &against_tally);
    rep.Print(&against_tally);
  }

  if (tally.errors + against_tally.errors > 0) {
    std::fflush(stdout);
    return 1;
  }
  std::string line = fmt::format(
      "{}: ok: {} functions, {} blocks, {} edges "
      "checked",
      path, p.functions.size(), n_blocks, n_edges);
  if (p.has_paths || other)
    line += fmt::format(
        "; paths: {} functions, {} path-derived edges "
        "compared, {} not comparable",
        n_path_functions, tally.compared, tally.not_comparable);
  if (other)
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

// ------------------------------------------------------------------ merge

int RunMerge(const std::string& out_path,
             const std::vector<std::string>& inputs) {
  ballarus_profile merged{};
  char err[512];
  struct Free {
    ballarus_profile* p;
    ~Free() { ballarus_profile_free(p); }
  } free_merged{&merged};
  for (const std::string& in : inputs) {
    LoadedProfile p;  // full validation, metadata included
    Load(in, &p);
    if (ballarus_profile_merge(&merged, &p.raw, err, sizeof err) != 0)
      Fail(in, std::string("cannot merge: ") + err);
  }
  if (ballarus_profile_write_file(out_path.c_str(), &merged, err,
                                  sizeof err) != 0)
    Fail(out_path, err);
  return 0;
}

// ------------------------------------------------------------------ stats
//
// Counter work (Ball & Larus TOPLAS 1994 §6): per function the closed
// graph's size, the static counters the placement used, and the dynamic
// increments the run executed — the sum of the raw counters, i.e. how often
// instrumentation code ran.  `--gcov` adds the same figures for gcov's own
// placement, read from .gcda files (each with its .gcno beside it): gcov's
// counters are its arcs off its spanning tree.
//
// Path mode adds, per function with path data, its number of paths, where
// they are counted (dense: n_paths + 1 counters; hashed: a runtime table
// whose non-zero counts are the record's sparse entries), the sum of its
// path counts (one counter update at every path end) and its distinct
// executed paths; and in total, over path-mode profiles, the same summed.
// Edge counters keep their own fields unchanged: static_counters and
// dynamic_increments count edge counters only.

struct Work {
  std::string name;
  std::string file;
  uint64_t blocks = 0, edges = 0, counters = 0, increments = 0;
  // Path mode (per function: has_paths; in total: any path data).
  bool has_paths = false;
  uint64_t n_paths = 0;
  uint32_t storage = PathInfo::kDense;
  uint64_t path_functions = 0, dense_slots = 0, hashed_functions = 0,
           hashed_entries = 0, path_increments = 0, distinct_paths = 0;
};

void AddWork(Work* total, const Work& w) {
  total->blocks += w.blocks;
  total->edges += w.edges;
  total->counters += w.counters;
  total->increments = ballarus_sat_add(total->increments, w.increments);
  if (!w.has_paths) return;
  ++total->path_functions;
  if (w.storage == PathInfo::kHashed)
    ++total->hashed_functions;
  else
    total->dense_slots += w.n_paths + 1;
  // Path counts are residues modulo 2^64 (ballarus_format.h).
  total->path_increments =
      ballarus_count_add(total->path_increments, w.path_increments);
  total->distinct_paths += w.distinct_paths;
}

ojson WorkJson(const Work& w, bool total_paths = false) {
  ojson j;
  if (!w.name.empty()) j["name"] = w.name;
  if (!w.file.empty()) j["file"] = w.file;
  j["blocks"] = w.blocks;
  j["edges"] = w.edges;
  j["static_counters"] = w.counters;
  j["dynamic_increments"] = w.increments;
  if (w.has_paths) {
    j["n_paths"] = std::to_string(w.n_paths);
    j["path_storage"] = StorageName(w.storage);
    j["path_increments"] = w.path_increments;
    j["distinct_paths"] = w.distinct_paths;
  }
  if (total_paths) {
    j["path_functions"] = w.path_functions;
    j["path_dense_slots"] = w.dense_slots;
    j["path_hashed_functions"] = w.hashed_functions;
    j["path_hashed_entries"] = w.hashed_entries;
    j["path_increments"] = w.path_increments;
    j["distinct_paths"] = w.distinct_paths;
  }
  return j;
}

std::vector<Work> OurWork(const LoadedProfile& p) {
  std::vector<Work> out;
  for (const LoadedFunction& lf : p.functions) {
    const Function& f = *lf.function;
    Work w;
    w.name = lf.display_name();
    w.file = lf.file_name();
    w.blocks = f.blocks.size();
    for (size_t e = 0; e < f.edges.size(); ++e) {
      if (f.edges[e].flags & kEdgeIgnored) continue;
      ++w.edges;
      if (f.edges[e].counter == kNoCounter) continue;
      ++w.counters;
      if (lf.known[e]) w.increments = ballarus_sat_add(w.increments, *lf.known[e]);
    }
    if (lf.paths) {
      w.has_paths = true;
      w.n_paths = lf.paths->info.n_paths;
      w.storage = lf.paths->info.storage;
      w.path_increments =
          ballarus_count_add(lf.paths->total, lf.paths->out_of_range);
      w.distinct_paths = lf.paths->counts.size();
    }
    out.push_back(w);
  }
  return out;
}

std::vector<Work> GcovWork(const std::vector<std::string>& gcdas) {
  std::vector<Work> out;
  for (const std::string& gcda : gcdas) {
    if (gcda.size() < 5 || gcda.substr(gcda.size() - 5) != ".gcda")
      Fail(gcda, "not a .gcda file name");
    const std::string gcno = gcda.substr(0, gcda.size() - 5) + ".gcno";
    gcov_oracle::Unit unit;
    std::string err;
    if (!gcov_oracle::ReadGcno(gcno, &unit, &err)) Fail(gcno, err);
    if (!gcov_oracle::ReadGcda(gcda, &unit, &err)) Fail(gcda, err);
    for (const gcov_oracle::Function& f : unit.functions) {
      Work w;
      w.name = f.name;
      w.file = f.file;
      w.blocks = f.n_blocks;
      w.edges = f.arcs.size();
      for (const gcov_oracle::Arc& a : f.arcs) {
        if (a.on_tree() || a.fake()) continue;
        ++w.counters;
        if (f.has_data && a.count > 0)
          w.increments =
              ballarus_sat_add(w.increments, static_cast<uint64_t>(a.count));
      }
      out.push_back(w);
    }
  }
  return out;
}

int RunStats(const std::string& path, bool json,
             const std::vector<std::string>& gcdas) {
  LoadedProfile p;
  Load(path, &p);
  const std::vector<Work> ours = OurWork(p);
  Work total;
  for (const Work& w : ours) AddWork(&total, w);
  for (const LoadedTu& lt : p.tus) total.hashed_entries += lt.record->n_sparse;
  std::vector<Work> theirs;
  Work gtotal;
  if (!gcdas.empty()) {
    theirs = GcovWork(gcdas);
    for (const Work& w : theirs) AddWork(&gtotal, w);
  }
  if (json) {
    ojson root;
    root["profile"] = path;
    ojson fs = ojson::array();
    for (const Work& w : ours) fs.push_back(WorkJson(w));
    root["functions"] = fs;
    root["total"] = WorkJson(total, p.has_paths);
    if (!gcdas.empty()) {
      ojson g;
      ojson gf = ojson::array();
      for (const Work& w : theirs) gf.push_back(WorkJson(w));
      g["functions"] = gf;
      g["total"] = WorkJson(gtotal);
      root["gcov"] = g;
    }
    std::cout << root.dump(1) << "\n";
    return 0;
  }
  fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", "function", "blocks",
             "edges", "counters", "increments");
  for (const Work& w : ours)
    fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", w.name, w.blocks, w.edges,
               w.counters, w.increments);
  fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", "total (ballarus)",
             total.blocks, total.edges, total.counters, total.increments);
  if (p.has_paths)
    fmt::print(
        "paths: {} functions ({} dense counters, {} hashed functions "
        "with {} sparse entries), {} path increments, {} distinct "
        "paths executed\n",
        total.path_functions, total.dense_slots, total.hashed_functions,
        total.hashed_entries, total.path_increments, total.distinct_paths);
  if (!gcdas.empty()) {
    fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", "total (gcov)",
               gtotal.blocks, gtotal.edges, gtotal.counters, gtotal.increments);
    if (gtotal.increments > 0)
      fmt::print("dynamic increments, ballarus / gcov: {:.3f}\n",
                 static_cast<double>(total.increments) /
                     static_cast<double>(gtotal.increments));
  }
  return 0;
}

// ------------------------------------------------------------------ paths
//
// Per function with path data, its executed paths by count: number (exact
// decimal), count, blocks and source lines.  --json: the document of
// `show --json` with path fields added to each path-mode function.
// --decode ID: any path number of the selected function(s), executed or
// not.

std::string CutsText(const LoadedFunction& lf) {
  const Function& f = *lf.function;
  const PathInfo& info = lf.paths->info;
  std::string edges, blocks;
  for (uint32_t e : info.cut_edges)
    edges += (edges.empty() ? "" : " ") + EdgeText(f, e);
  for (uint32_t b : info.cut_blocks)
    blocks += (blocks.empty() ? "" : " ") + std::to_string(b);
  return fmt::format("back edges {}, cut blocks {}",
                     edges.empty() ? "none" : edges,
                     blocks.empty() ? "none" : blocks);
}

void AddPathFields(const LoadedFunction& lf, uint64_t top, ojson* j) {
  const LoadedPaths& lp = *lf.paths;
  const Function& f = *lf.function;
  (*j)["n_paths"] = lp.numbering.total().get_str();
  (*j)["path_storage"] = StorageName(lp.info.storage);
  ojson flags = ojson::array();
  if (lp.early_termination()) flags.push_back("early_termination");
  (*j)["path_flags"] = flags;
  ojson cut_edges = ojson::array();
  for (uint32_t e : lp.info.cut_edges)
    cut_edges.push_back(
        ojson{{"edge", e}, {"src", f.edges[e].src}, {"dst", f.edges[e].dst}});
  (*j)["cut_edges"] = cut_edges;
  (*j)["cut_blocks"] = lp.info.cut_blocks;
  (*j)["distinct_paths"] = lp.counts.size();
  (*j)["path_count_total"] = lp.total;
  (*j)["path_out_of_range"] = lp.out_of_range;
  ojson paths = ojson::array();
  const auto sorted = SortedPaths(lp);
  for (size_t i = 0; i < sorted.size() && (top == 0 || i < top); ++i) {
    const mpz_class id(static_cast<unsigned long>(sorted[i].first));
    paths.push_back(
        PathJson(lf, id.get_str(), sorted[i].second, ViewOf(lf, id), false));
  }
  (*j)["paths"] = paths;
}

void PrintPathsText(const LoadedFunction& lf, uint64_t top) {
  const LoadedPaths& lp = *lf.paths;
  fmt::print(
      "{} ({}:{}): {} paths, {} executed, {} path counts, {} storage{}; "
      "cuts: {}\n",
      lf.display_name(), lf.file_name(), lf.function->line,
      lp.numbering.total().get_str(), lp.counts.size(), lp.total,
      StorageName(lp.info.storage),
      lp.early_termination() ? ", early termination counted" : "",
      CutsText(lf));
  if (lp.out_of_range != 0)
    fmt::print(
        "  {} counts of out-of-range path numbers (instrumentation "
        "error; see verify)\n",
        lp.out_of_range);
  const auto sorted = SortedPaths(lp);
  for (size_t i = 0; i < sorted.size() && (top == 0 || i < top); ++i) {
    const mpz_class id(static_cast<unsigned long>(sorted[i].first));
    const PathView v = ViewOf(lf, id);
    fmt::print("  {:>20}  path {}: {}\n", sorted[i].second, id.get_str(),
               PathText(v));
    std::string lines;
    for (const auto& [file, line] : PathLines(lf, v))
      lines += fmt::format("{}{}:{}", lines.empty() ? "" : " ", file, line);
    if (!lines.empty()) fmt::print("  {:>20}  lines {}\n", "", lines);
  }
  if (top != 0 && sorted.size() > top)
    fmt::print("  ({} more executed paths; --top 0 lists all)\n",
               sorted.size() - top);
  fmt::print("\n");
}

int RunDecode(const LoadedProfile& p,
              const std::vector<const LoadedFunction*>& fs,
              const std::string& text, bool json) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    Fail("", "--decode: '" + text + "' is not a decimal path number");
  const mpz_class id(text, 10);
  for (const LoadedFunction* lf : fs)
    if (id >= lf->paths->numbering.total())
      Fail(p.path,
           fmt::format("{} ({}:{}): path {} is out of range: the "
                       "function has {} paths (0 to {})",
                       lf->display_name(), lf->file_name(), lf->function->line,
                       id.get_str(), lf->paths->numbering.total().get_str(),
                       mpz_class(lf->paths->numbering.total() - 1).get_str()));
  ojson decoded = ojson::array();
  for (const LoadedFunction* lf : fs) {
    const PathView v = ViewOf(*lf, id);
    auto it = lf->paths->counts.find(id.get_ui());
    const uint64_t count = it == lf->paths->counts.end() ? 0 : it->second;
    if (json) {
      ojson j;
      j["name"] = lf->function->name;
      j["demangled"] = lf->function->demangled;
      j["file"] = lf->file_name();
      j["line"] = lf->function->line;
      j["n_paths"] = lf->paths->numbering.total().get_str();
      j["path"] = PathJson(*lf, id.get_str(), count, v, true);
      decoded.push_back(j);
      continue;
    }
    fmt::print("{} ({}:{}): path {} of {}, executed {} times\n  blocks {}\n",
               lf->display_name(), lf->file_name(), lf->function->line,
               id.get_str(), lf->paths->numbering.total().get_str(), count,
               PathText(v));
    std::string lines;
    for (const auto& [file, line] : PathLines(*lf, v))
      lines += fmt::format("{}{}:{}", lines.empty() ? "" : " ", file, line);
    if (!lines.empty()) fmt::print("  lines {}\n", lines);
  }
  if (json) {
    ojson root;
    root["profile"] = p.path;
    root["decoded"] = decoded;
    std::cout << root.dump(1) << "\n";
  }
  std::cout.flush();
  return 0;
}

int RunPaths(const std::string& path, const std::string& regex, uint64_t top,
             bool json, const std::string& decode, bool decode_given) {
  LoadedProfile p;
  Load(path, &p);
  if (decode_given && regex.empty())
    Fail("", "--decode needs --function: which function's path?");
  const std::vector<const LoadedFunction*> fs = Select(p, regex);
  std::vector<const LoadedFunction*> with_paths;
  for (const LoadedFunction* f : fs)
    if (f->paths) with_paths.push_back(f);
  if (with_paths.empty())
    Fail(path, regex.empty()
                   ? std::string("no path data (build with "
                                 "-fplugin-arg-ballarus-mode=path or "
                                 "mode=edge,path)")
                   : "no function with path data matches '" + regex + "'");
  if (decode_given) return RunDecode(p, with_paths, decode, json);
  if (json) {
    ojson root;
    root["profile"] = path;
    root["runs"] = p.raw.runs;
    ojson arr = ojson::array();
    for (const LoadedFunction* f : fs) {
      ojson j = FunctionJson(p, *f);
      if (f->paths) AddPathFields(*f, top, &j);
      arr.push_back(j);
    }
    root["functions"] = arr;
    if (regex.empty()) {
      ojson lines = ojson::array();
      for (const auto& [key, count] : p.file_lines)
        lines.push_back(
            ojson{{"file", key.first}, {"line", key.second}, {"count", count}});
      root["lines"] = lines;
    }
    std::cout << root.dump(1) << "\n";
  } else {
    fmt::print("profile {}: {} runs, {} functions with path data\n\n", path,
               p.raw.runs, with_paths.size());
    for (const LoadedFunction* f : with_paths) PrintPathsText(*f, top);
  }
  std::cout.flush();
  return 0;
}

// ------------------------------------------------------------------- main

int Main(int argc, char** argv) {
  CLI::App app{"Reconstruct and check ballarus profiles.", kProg};
  app.set_version_flag("--version", std::string(kProg) + " " + kVersion);
  app.require_subcommand(1);

  std::string show_path, show_regex;
  bool show_json = false;
  CLI::App* show =
      app.add_subcommand("show", "Print every function's block, edge and "
                                 "line counts.");
  show->add_option("PROFILE", show_path, "profile file")->required();
  show->add_flag("--json", show_json, "print JSON (see docs/DESIGN.md)");
  show->add_option("--function", show_regex,
                   "only functions whose name or demangled name matches "
                   "this regular expression");

  std::string verify_path, verify_against;
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check flow conservation at every block, path counts, and "
      "path-derived edge counts against edge counts; exit 1 on "
      "violations.");
  verify->add_option("PROFILE", verify_path, "profile file")->required();
  verify
      ->add_option("--against", verify_against,
                   "another profile of the same build: compare the "
                   "path-derived edge counts of whichever side has paths "
                   "with the other side's edge counts")
      ->type_name("OTHER");

  std::string merge_out;
  std::vector<std::string> merge_inputs;
  CLI::App* merge = app.add_subcommand(
      "merge", "Merge profiles (counters of equal builds are added).");
  merge->add_option("-o,--output", merge_out, "output profile (written "
                                              "atomically)")
      ->required();
  merge->add_option("PROFILE", merge_inputs, "input profiles")->required();

  std::string stats_path;
  bool stats_json = false;
  std::vector<std::string> stats_gcov;
  CLI::App* stats = app.add_subcommand(
      "stats", "Counter work per function: blocks, edges, static counters, "
               "dynamic increments; with --gcov, gcov's for comparison.");
  stats->add_option("PROFILE", stats_path, "profile file")->required();
  stats->add_flag("--json", stats_json, "print JSON");
  stats->add_option("--gcov", stats_gcov,
                    "gcov .gcda files of the same program and workload (the "
                    ".gcno must lie beside each)");

  std::string paths_path, paths_regex, paths_decode;
  bool paths_json = false;
  uint64_t paths_top = 10;
  CLI::App* paths = app.add_subcommand(
      "paths",
      "Ball-Larus path profile: each function's executed paths by "
      "count, with their blocks and source lines.");
  paths->add_option("PROFILE", paths_path, "profile file")->required();
  paths
      ->add_option("--top", paths_top,
                   "paths listed per function, most executed first (0 = "
                   "all; default 10)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  paths->add_option("--function", paths_regex,
                    "only functions whose name or demangled name matches "
                    "this regular expression");
  paths->add_flag("--json", paths_json,
                  "print the JSON of show --json with path fields (see "
                  "docs/DESIGN.md)");
  CLI::Option* decode_opt = paths->add_option(
      "--decode", paths_decode,
      "print path number ID (decimal, any size) of the --function "
      "function(s), executed or not");
  decode_opt->type_name("ID");

  // CLI11 reports a stray word as "a subcommand is required"; name it.
  if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "show" &&
      std::string(argv[1]) != "verify" && std::string(argv[1]) != "merge" &&
      std::string(argv[1]) != "stats" && std::string(argv[1]) != "paths") {
    std::fprintf(stderr, "%s: unknown subcommand '%s' (try --help)\n", kProg,
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = e.get_name();
    std::fprintf(stderr, "%s: %s (try --help)\n", kProg, what.c_str());
    return 2;
  }

  if (*show) return RunShow(show_path, show_json, show_regex);
  if (*verify) return RunVerify(verify_path, verify_against);
  if (*merge) return RunMerge(merge_out, merge_inputs);
  if (*stats) return RunStats(stats_path, stats_json, stats_gcov);
  if (*paths)
    return RunPaths(paths_path, paths_regex, paths_top, paths_json,
                    paths_decode, decode_opt->count() > 0);
  return 2;
}

}  // namespace
}  // namespace ballarus

int main(int argc, char** argv) {
  try {
    return ballarus::Main(argc, argv);
  } catch (const ballarus::Fatal& f) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", ballarus::kProg, f.message.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: internal error: %s\n", ballarus::kProg,
                 e.what());
    return 2;
  }
}
