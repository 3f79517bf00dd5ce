// coverage_summary.h — line, function and branch coverage per source file,
// as lcov computes it from gcov's data: what the lcov tracefile, the
// Cobertura XML and the HTML report's summary tables show.
//
// lcov (geninfo 1.16, gcov's JSON intermediate format) reads each data
// file's JSON and, per source file: DA:line,count for every line entry
// (group functions' lines included), FN:start_line,name and
// FNDA:execution_count,name for every function, BRDA:line,0,i,count for
// the i-th branch of a line entry ("-" when the line never ran and has an
// unexecuted block); then merges: line counts and function counts summed
// by line and by name, branches by (line, block, branch) with "-" giving
// way to a count.  Summarize does the same over one gcov view per TU
// (reconstruct/gcov_view.h, JSON mode with branches), so its totals equal
// lcov's for the same counts; like geninfo it leaves out the lines,
// branches and functions the sources' exclusion markers exclude when the
// filter honours them (reconstruct/report_filter.h).
#ifndef BALLARUS_RECONSTRUCT_COVERAGE_SUMMARY_H_
#define BALLARUS_RECONSTRUCT_COVERAGE_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reconstruct/report_filter.h"
#include "reconstruct/report_model.h"

namespace ballarus {
namespace coverage {

struct Branch {
  bool executed = false;  // lcov's "-" when false
  int64_t count = 0;
};

struct FunctionCoverage {
  std::string name;       // assembler name (lcov's FN name)
  std::string demangled;
  uint32_t line = 0;
  int64_t count = 0;              // summed execution counts
  std::vector<uint32_t> reports;  // Report::functions summed here
};

struct Totals {
  uint64_t lines = 0, lines_hit = 0;
  uint64_t functions = 0, functions_hit = 0;
  uint64_t branches = 0, branches_hit = 0;
  void Add(const Totals& o);
};

struct FileCoverage {
  std::string path;     // absolute, normalised
  uint32_t file = 0;    // a Report::files index naming it
  std::map<uint32_t, int64_t> lines;               // line -> count
  std::map<std::string, FunctionCoverage> functions;  // by name
  std::map<uint32_t, std::vector<Branch>> branches;   // line -> branches
  Totals totals;
};

struct Summary {
  std::vector<FileCoverage> files;  // by path
  Totals totals;
};

// lcov's coverage of the files and functions `filter` keeps.
Summary Summarize(const report::Report& r, const FileFilter& filter);

}  // namespace coverage
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_COVERAGE_SUMMARY_H_
