// main.cc — ballarus-reconstruct: show, verify and merge ballarus profiles.
//
//   ballarus-reconstruct show PROFILE [--json] [--function REGEX]
//   ballarus-reconstruct verify PROFILE
//   ballarus-reconstruct merge -o OUT PROFILE...
//
// Every subcommand loads its input through LoadProfile
// (reconstruct/loaded_profile.h) and renders the result; new subcommands
// (stats, paths, compare-gcov) slot in as one more Add*/Run* pair.
//
// Exit codes (docs/DESIGN.md): 0 success, 1 `verify` found violations,
// 2 bad usage or bad input, reported as ONE line
// `ballarus-reconstruct: FILE: offset N: problem`.  No exception escapes.
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/flow.h"
#include "core/gcov_lines.h"
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
               lf.known[i] ? "yes" : "no", CountText(lf.flow.edges[i]));
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

int RunVerify(const std::string& path) {
  LoadedProfile p;
  Load(path, &p);
  size_t n_blocks = 0, n_edges = 0, n_bad = 0;
  for (const LoadedFunction& lf : p.functions) {
    const Function& f = *lf.function;
    n_blocks += f.blocks.size();
    n_edges += f.edges.size();
    const std::string who = fmt::format("{}: {} ({}:{})", path,
                                        lf.display_name(), lf.file_name(),
                                        f.line);
    auto edge_name = [&](size_t e) {
      return e == kVirtualEdge
                 ? std::string("EXIT->ENTRY")
                 : fmt::format("{}->{}", f.edges[e].src, f.edges[e].dst);
    };
    for (const FlowIssue& is : CheckConservation(f, lf.flow)) {
      ++n_bad;
      switch (is.kind) {
        case FlowIssue::kImbalance:
          fmt::print("{}: block {}: in {} != out {}\n", who, is.block,
                     is.in_sum, is.out_sum);
          break;
        case FlowIssue::kNegative:
          fmt::print("{}: block {}: edge {} would need a negative count "
                     "(in {}, out {})\n",
                     who, is.block, edge_name(is.edge), is.in_sum, is.out_sum);
          break;
        case FlowIssue::kUnknown:
          fmt::print("{}: block {}: edge {}: count cannot be determined\n", who,
                     is.block, edge_name(is.edge));
          break;
      }
    }
  }
  if (n_bad > 0) {
    std::fflush(stdout);
    return 1;
  }
  fmt::print("{}: ok: {} functions, {} blocks, {} edges checked\n", path,
             p.functions.size(), n_blocks, n_edges);
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

struct Work {
  std::string name;
  std::string file;
  uint64_t blocks = 0, edges = 0, counters = 0, increments = 0;
};

void AddWork(Work* total, const Work& w) {
  total->blocks += w.blocks;
  total->edges += w.edges;
  total->counters += w.counters;
  total->increments = ballarus_sat_add(total->increments, w.increments);
}

ojson WorkJson(const Work& w) {
  ojson j;
  if (!w.name.empty()) j["name"] = w.name;
  if (!w.file.empty()) j["file"] = w.file;
  j["blocks"] = w.blocks;
  j["edges"] = w.edges;
  j["static_counters"] = w.counters;
  j["dynamic_increments"] = w.increments;
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
    root["total"] = WorkJson(total);
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

  std::string verify_path;
  CLI::App* verify = app.add_subcommand(
      "verify", "Check flow conservation at every block; exit 1 on "
                "violations.");
  verify->add_option("PROFILE", verify_path, "profile file")->required();

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

  // CLI11 reports a stray word as "a subcommand is required"; name it.
  if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "show" &&
      std::string(argv[1]) != "verify" && std::string(argv[1]) != "merge" &&
      std::string(argv[1]) != "stats") {
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
  if (*verify) return RunVerify(verify_path);
  if (*merge) return RunMerge(merge_out, merge_inputs);
  if (*stats) return RunStats(stats_path, stats_json, stats_gcov);
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
