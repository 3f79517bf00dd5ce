// provenance.h — the reports of a profile's named tests, one at a time,
// and which tests executed each line, function and path.
//
// A profile with named runs (BALLARUS_TEST, reconstruct/named_runs.h)
// holds, besides the sum, each test's counts.  Each test's counts load as
// a profile of every TU of the whole one (LoadPartOf), so its report has
// the whole report's files and functions, in the same order: a test's
// file i and function j are the whole report's file i and function j
// (checked).  A test executed a line when the line's count in its report
// is above 0, a function when its execution count is, a path when the
// path is among its executed paths.
#ifndef BALLARUS_RECONSTRUCT_PROVENANCE_H_
#define BALLARUS_RECONSTRUCT_PROVENANCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ballarus {

struct LoadedReport;  // reconstruct/commands.h

// The report of named test `test` of `whole` (a report of the whole
// profile, loaded without --test), or with an empty `test` that of the
// runs under no name.  `whole` must outlive *out (fresh).
void LoadTestReport(const LoadedReport& whole, const std::string& test,
                    LoadedReport* out);

// Which tests executed what, over a report's files and functions.
struct TestProvenance {
  std::vector<std::string> tests;  // the named tests, sorted
  std::vector<uint64_t> runs;      // parallel: the test's runs (most over
                                   // its TUs)
  // Per Report::files index: line -> the tests (indices into `tests`,
  // ascending) that executed it; lines no test executed are absent.
  std::vector<std::map<uint32_t, std::vector<uint32_t>>> lines;
  // Per Report::functions index: the tests that executed it.
  std::vector<std::vector<uint32_t>> functions;
  // Per Report::functions index: path number -> the tests that executed
  // the path.
  std::vector<std::map<uint64_t, std::vector<uint32_t>>> paths;

  bool empty() const { return tests.empty(); }
};

// The provenance of `whole`'s named tests (empty when it has none, or
// when it was loaded with --test: one test's report has no other tests).
// Each test is loaded, read and freed in turn.
TestProvenance ComputeProvenance(const LoadedReport& whole);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_PROVENANCE_H_
