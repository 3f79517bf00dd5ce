// cmd_stats.cc — `ballarus-reconstruct stats PROFILE [--json] [--gcov
// FILE.gcda...]`.
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
// whose non-zero counts are the record's sparse entries), the counter
// updates its path counting executed (path_increments: the sum of its path
// counts as stored -- one update at every path end, plus one before every
// pre-counted call when pre-counts are kept) and its distinct
// executed paths; and in total, over path-mode profiles, the same summed.
// Edge counters keep their own fields unchanged: static_counters and
// dynamic_increments count edge counters only.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/gcov_oracle.h"
#include "reconstruct/json_writer.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::Report;

// One row: a function of ours or of gcov's, or a total.
struct Work {
  std::string name;
  std::string file;
  uint64_t blocks = 0, edges = 0, counters = 0, increments = 0;
  // Per function with path data.
  bool has_paths = false;
  uint64_t n_paths = 0;
  uint32_t storage = PathInfo::kDense;
  uint64_t path_increments = 0, distinct_paths = 0;
};

Work OurWork(const Report& r, const FunctionReport& f) {
  Work w;
  w.name = f.display_name();
  w.file = r.file_name(f.file);
  w.blocks = f.blocks.size();
  w.edges = f.arcs;
  w.counters = f.counters;
  w.increments = f.increments;
  if (f.paths) {
    w.has_paths = true;
    w.n_paths = f.paths->n_paths;
    w.storage = f.paths->storage;
    w.path_increments =
        ballarus_count_add(f.paths->updates, f.paths->out_of_range);
    w.distinct_paths = f.paths->executed.size();
  }
  return w;
}

Work OurTotal(const report::Totals& t) {
  Work w;
  w.blocks = t.blocks;
  w.edges = t.arcs;
  w.counters = t.counters;
  w.increments = t.increments;
  return w;
}

ojson WorkJson(const Work& w) {
  ojson j;
  if (!w.name.empty()) j["name"] = w.name;
  if (!w.file.empty()) j["file"] = w.file;
  j["blocks"] = w.blocks;
  j["edges"] = w.edges;
  j["static_counters"] = w.counters;
  j["dynamic_increments"] = w.increments;
  if (w.has_paths) {
    j["n_paths"] = std::to_string(w.n_paths);
    j["path_storage"] = report::PathStorageName(w.storage);
    j["path_increments"] = w.path_increments;
    j["distinct_paths"] = w.distinct_paths;
  }
  return j;
}

ojson TotalJson(const report::Totals& t, bool paths) {
  ojson j = WorkJson(OurTotal(t));
  if (paths) {
    j["path_functions"] = t.path_functions;
    j["path_dense_slots"] = t.path_dense_slots;
    j["path_hashed_functions"] = t.path_hashed_functions;
    j["path_hashed_entries"] = t.path_hashed_entries;
    j["path_increments"] = t.path_increments;
    j["distinct_paths"] = t.distinct_paths;
  }
  return j;
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

Work Sum(const std::vector<Work>& rows) {
  Work total;
  for (const Work& w : rows) {
    total.blocks += w.blocks;
    total.edges += w.edges;
    total.counters += w.counters;
    total.increments = ballarus_sat_add(total.increments, w.increments);
  }
  return total;
}

void PrintRow(const std::string& name, const Work& w) {
  fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", name, w.blocks, w.edges,
             w.counters, w.increments);
}

}  // namespace

int RunStats(const ProfileInputs& in, bool json,
             const std::vector<std::string>& gcdas) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const Report& r = loaded.report;
  const report::Totals& t = r.totals;
  std::vector<Work> ours;
  for (const FunctionReport& f : r.functions) ours.push_back(OurWork(r, f));
  std::vector<Work> theirs;
  if (!gcdas.empty()) theirs = GcovWork(gcdas);
  const Work gtotal = Sum(theirs);
  if (json) {
    ojson root;
    root["profile"] = loaded.report.profile;
    ojson fs = ojson::array();
    for (const Work& w : ours) fs.push_back(WorkJson(w));
    root["functions"] = fs;
    root["total"] = TotalJson(t, r.has_paths);
    if (!gcdas.empty()) {
      ojson g;
      ojson gf = ojson::array();
      for (const Work& w : theirs) gf.push_back(WorkJson(w));
      g["functions"] = gf;
      g["total"] = WorkJson(gtotal);
      root["gcov"] = g;
    }
    std::cout << JsonDump(root) << "\n";
    return 0;
  }
  fmt::print("{:<40} {:>7} {:>7} {:>9} {:>20}\n", "function", "blocks",
             "edges", "counters", "increments");
  for (const Work& w : ours) PrintRow(w.name, w);
  PrintRow("total (ballarus)", OurTotal(t));
  if (r.has_paths)
    fmt::print(
        "paths: {} functions ({} dense counters, {} hashed functions "
        "with {} sparse entries), {} path increments, {} distinct "
        "paths executed\n",
        t.path_functions, t.path_dense_slots, t.path_hashed_functions,
        t.path_hashed_entries, t.path_increments, t.distinct_paths);
  if (!gcdas.empty()) {
    PrintRow("total (gcov)", gtotal);
    if (gtotal.increments > 0)
      fmt::print("dynamic increments, ballarus / gcov: {:.3f}\n",
                 static_cast<double>(t.increments) /
                     static_cast<double>(gtotal.increments));
  }
  return 0;
}

}  // namespace ballarus
