// html_tests.h — the HTML report's per-test provenance: which named tests
// (BALLARUS_TEST, reconstruct/test_reports.h) executed each source line and
// each function.
//
// Only for a profile with named runs; the report of a profile without
// them is written as before, byte for byte.  Each source line gets a cell
// "N tests" that opens, on click, the list of their names (a <details>
// element: no script, no network); each function of a file page the same
// cell; the index a table of the tests (runs, lines and functions they
// executed among those shown).
#ifndef BALLARUS_RECONSTRUCT_HTML_TESTS_H_
#define BALLARUS_RECONSTRUCT_HTML_TESTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reconstruct/coverage_summary.h"
#include "reconstruct/test_reports.h"

namespace ballarus {

// "<details class="tests"><summary>N tests</summary>...names...</details>"
// for the tests `which` (indices into p.tests); "" when it is empty.
std::string ExecutedByCell(const TestProvenance& p,
                           const std::vector<uint32_t>& which);

// The tests that executed line `line` of Report file `file`.
const std::vector<uint32_t>& TestsOfLine(const TestProvenance& p,
                                         uint32_t file, uint32_t line);

// The tests that executed any of `functions` (Report::functions indices:
// a shown function's copies), ascending.
std::vector<uint32_t> TestsOfFunctions(const TestProvenance& p,
                                       const std::vector<size_t>& functions);

// The index's "Tests" section: each test's runs, and the lines and
// functions it executed among those of `summary` (the files shown).
std::string TestsSection(const TestProvenance& p,
                         const coverage::Summary& summary);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_TESTS_H_
