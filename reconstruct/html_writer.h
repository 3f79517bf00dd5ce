// html_writer.h — the self-contained HTML report (`ballarus-reconstruct
// html PROFILE -o DIR`): one directory, no server, no network, readable
// from file:// in any browser.
//
//   index.html      totals; per-directory and per-file summaries (lines,
//                   functions, branches: hit / total and %); the program's
//                   hottest functions and hottest Ball–Larus paths with
//                   their share of the function's and of the program's
//                   executions, each linked to its highlighted source;
//   functions.html  every function, sortable by count;
//   f<N>.html       one page per source file: summary, its functions
//                   (sortable), their hottest paths (a click — or the
//                   page's #path-... anchor — highlights the path's lines),
//                   for the hottest functions their CFG as a picture
//                   (Graphviz `dot`, SVG inline: blocks coloured by count,
//                   edges as wide as their count, the hottest path drawn
//                   in red; reconstruct/html_cfg.h), and the annotated
//                   source: count per line (gcov's), hit/miss colour, each
//                   branch's outcome;
//   cfg<N>.gv       the dot source of each picture not drawn in time;
//   report.css, report.js   style, table sorting and path highlighting.
// A profile with named runs (BALLARUS_TEST) adds which tests executed each
// line and function, and a table of the tests (reconstruct/html_tests.h).
//
// Line, function and branch figures are lcov's (coverage_summary.h), so
// they equal genhtml's for the same counts; functions are listed once
// however many programs or profiles hold a copy (html_functions.h).  A
// profile without path data says so, and how to get it, where the paths
// would be.  A CFG's "hottest path" is the
// function's most executed Ball–Larus path when it has a path profile;
// without one, the heaviest-edge walk from ENTRY (labelled as such).
// Every name and source line is HTML-escaped; bytes that are not printable
// UTF-8 show as \xNN.
#ifndef BALLARUS_RECONSTRUCT_HTML_WRITER_H_
#define BALLARUS_RECONSTRUCT_HTML_WRITER_H_

#include <cstdint>
#include <string>

#include "reconstruct/report_filter.h"
#include "reconstruct/report_model.h"

namespace ballarus {

struct HtmlOptions {
  static constexpr uint64_t kAll = UINT64_MAX;
  std::string out_dir;
  std::string title;               // default: the profile's name
  uint64_t top_functions = 20;     // hottest functions on the index
  uint64_t top_paths = 20;         // hottest paths on the index
  uint64_t paths_per_function = 5; // on the file pages
  // CFG pictures of the N hottest functions that ran (kAll: every one),
  // and of the functions of the index's hottest paths (0 = none).
  uint64_t cfg_functions = 20;
  // Seconds for drawing all of them; pictures not drawn by then are named,
  // with their dot source.  Negative: 5, or no limit with kAll; 0: none.
  double cfg_time = -1;
  size_t cfg_jobs = 0;             // dot processes at once (0: one per CPU)
  std::string dot = "dot";         // the Graphviz command
  bool quiet = false;              // no progress line on stderr

  double CfgTimeLimit() const {
    return cfg_time >= 0 ? cfg_time : cfg_functions == kAll ? 0 : 5;
  }
};

struct TestProvenance;  // reconstruct/test_reports.h

// Writes the report; returns the number of pages written.  Fails (Fatal)
// naming the directory or file it cannot write.  A missing `dot` is a
// one-line warning on stderr and a report without pictures.  Stages that
// take more than a second show a progress line (reconstruct/progress.h)
// unless `quiet`.  With `tests` (a profile with named runs), each line and
// function says which tests executed it (reconstruct/html_tests.h).
size_t WriteHtmlReport(const report::Report& r, const FileFilter& filter,
                       const HtmlOptions& options,
                       const TestProvenance* tests = nullptr);

// &, <, >, " and ' as entities, after Printable (commands.h).
std::string HtmlEscape(const std::string& s);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_WRITER_H_
