// named_runs.h — the counts of one named test, or of the runs under no
// name, as a profile of their own.
//
// A process run with BALLARUS_TEST=NAME adds its counts to the profile's
// sum and, sparsely, under NAME (runtime/ballarus_format.h, "Named runs").
// The reports of one test (`--test NAME`, reconstruct/loaded_profile.h)
// and the per-test views (lcov's TN: sections, HTML "executed by", JSON
// "tests") read such a profile exactly as they read a file:
//   * TestProfile: every record of the whole profile, its counters and
//     sparse entries replaced by the test's (zero where the test counted
//     nothing).  Every record is kept, executed or not, as a profile of
//     the test run alone lists every TU its program links: the files,
//     functions and project roots of a test's report are the whole
//     report's, in the same order.
//   * UnnamedProfile: the sum minus every test's counts, counter by
//     counter modulo 2^64 (then solved like any profile): what the runs
//     under no name counted.  Each test's profile plus this one add up to
//     the whole profile.
// Runs: a test's record keeps the test's runs of that TU, or, for a TU the
// test did not execute, the most runs the test has on any TU (the number
// of its processes when they all link the same TUs); the unnamed profile's
// record has the whole record's runs minus the tests', not below 0.
// The records borrow `whole`'s metadata: `whole` must outlive them.
#ifndef BALLARUS_RECONSTRUCT_NAMED_RUNS_H_
#define BALLARUS_RECONSTRUCT_NAMED_RUNS_H_

#include <string>
#include <vector>

#include "runtime/profile_io.h"

namespace ballarus {

// Test `name`'s profile (see above) into *out (fresh; free it with
// ballarus_profile_free).  False, leaving *out empty, when `whole` has no
// named record of `name`.  Throws std::bad_alloc when out of memory.
bool TestProfile(const ballarus_profile& whole, const std::string& name,
                 ballarus_profile* out);

// The unnamed runs' profile (see above) into *out (fresh).
void UnnamedProfile(const ballarus_profile& whole, ballarus_profile* out);

// "no test 'X' in the profile (tests: a, b, ...)" or "... (it has no named
// runs: see BALLARUS_TEST)": the error of a test name not found.
std::string NoSuchTest(const ballarus_profile& whole, const std::string& name);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_NAMED_RUNS_H_
