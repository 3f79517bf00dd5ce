// lcov_writer.h — lcov tracefiles and Cobertura XML from the coverage
// summary (reconstruct/coverage_summary.h).
//
// The tracefile is lcov 1.16's own format (lcov's write_info_file order):
// per source file TN, SF (absolute path), FN and FNDA per function, FNF,
// FNH, BRDA per branch (block 0, branches numbered per line as geninfo
// numbers them), BRF, BRH, DA per line, LF, LH, end_of_record; files by
// path.  `genhtml`, `lcov --summary` and CI services read it.  A profile
// with named runs gives one such list of sections per test (TN: its
// name), after the one of the unnamed runs: lcov adds the sections of a
// file up, test by test, as it adds tracefiles (`lcov -a`), so totals are
// the sum's and `genhtml --show-details` lists each line's tests.
//
// The Cobertura XML is the subset coverage services read (Cobertura's
// coverage-04.dtd): one package per directory, one class per file with its
// methods and lines (hits; branch="true" and condition-coverage for lines
// with branches), line and branch rates.
#ifndef BALLARUS_RECONSTRUCT_LCOV_WRITER_H_
#define BALLARUS_RECONSTRUCT_LCOV_WRITER_H_

#include <string>
#include <vector>

#include "reconstruct/coverage_summary.h"

namespace ballarus {

// With `executed_only`, the files where nothing ran are left out (a named
// test's section: another section lists them).
std::string LcovTracefile(const coverage::Summary& s,
                          const std::string& test_name,
                          bool executed_only = false);

// lcov's TN: names of `tests` (named runs, sorted): each as lcov reads it
// (every character but a letter, digit or '_' made '_', as lcov's
// read_info_file does), then made distinct from the names before it and
// from `taken` (the unnamed runs' section) by a suffix "_2", "_3", ...
std::vector<std::string> LcovTestNames(const std::vector<std::string>& tests,
                                       const std::string& taken);

// `timestamp` (seconds) is written as given, for reproducible output.
std::string CoberturaXml(const coverage::Summary& s, const std::string& root,
                         long long timestamp);

// XML text and attribute escaping: & < > " ' as entities; bytes that are
// not printable UTF-8 (commands.h Printable) as the text "\xNN", so the
// document stays well-formed whatever a file name holds.
std::string XmlEscape(const std::string& s);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_LCOV_WRITER_H_
