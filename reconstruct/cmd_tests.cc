// cmd_tests.cc — `ballarus-reconstruct tests PROFILE... [--json]`: the
// named tests of the profiles (BALLARUS_TEST, reconstruct/named_runs.h),
// by name, each with its runs and what it executed: translation units,
// functions and source lines (of every file: no file filter).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "reconstruct/commands.h"
#include "reconstruct/json_writer.h"
#include "reconstruct/test_reports.h"

namespace ballarus {
namespace {

struct TestRow {
  std::string name;
  uint64_t runs = 0, tus = 0, functions = 0, lines = 0;
};

std::vector<TestRow> Rows(const LoadedReport& loaded,
                          const TestProvenance& p) {
  std::vector<TestRow> rows(p.tests.size());
  for (size_t t = 0; t < rows.size(); ++t) {
    rows[t].name = p.tests[t];
    rows[t].runs = p.runs[t];
  }
  // TUs: the records each test has counts in (named records are sorted
  // by name, then stamp: one per TU).
  const ballarus_profile& raw = loaded.profile.records.raw;
  size_t t = 0;
  for (uint64_t k = 0; k < raw.n_named; ++k) {
    const std::string name(raw.named[k].name, raw.named[k].name_size);
    while (rows[t].name != name) ++t;
    ++rows[t].tus;
  }
  for (const std::vector<uint32_t>& by : p.functions)
    for (uint32_t i : by) ++rows[i].functions;
  for (const auto& file : p.lines)
    for (const auto& [line, by] : file)
      for (uint32_t i : by) ++rows[i].lines;
  return rows;
}

void PrintJson(const LoadedReport& loaded, const std::vector<TestRow>& rows) {
  ojson root;
  root["profile"] = loaded.report.profile;
  root["runs"] = loaded.report.runs;
  ojson tests = ojson::array();
  for (const TestRow& r : rows)
    tests.push_back(ojson{{"name", r.name},
                          {"runs", r.runs},
                          {"tus", r.tus},
                          {"functions", r.functions},
                          {"lines", r.lines}});
  root["tests"] = tests;
  std::cout << JsonDump(root) << "\n";
  std::cout.flush();
}

void PrintText(const LoadedReport& loaded, const std::vector<TestRow>& rows) {
  fmt::print("profile {}: {} runs, {} named tests\n", Printable(loaded.report.profile),
             loaded.report.runs, rows.size());
  if (rows.empty()) {
    fmt::print("(no named runs: run tests with BALLARUS_TEST=NAME)\n");
    return;
  }
  size_t width = 4;
  for (const TestRow& r : rows) width = std::max(width, Printable(r.name).size());
  fmt::print("{:<{}}  {:>8}  {:>5}  {:>9}  {:>7}\n", "test", width, "runs", "TUs",
             "functions", "lines");
  for (const TestRow& r : rows)
    fmt::print("{:<{}}  {:>8}  {:>5}  {:>9}  {:>7}\n", Printable(r.name), width,
               r.runs, r.tus, r.functions, r.lines);
}

}  // namespace

int RunTests(const ProfileInputs& in, bool json) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const std::vector<TestRow> rows = Rows(loaded, ComputeProvenance(loaded));
  if (json)
    PrintJson(loaded, rows);
  else
    PrintText(loaded, rows);
  std::fflush(stdout);
  return 0;
}

}  // namespace ballarus
