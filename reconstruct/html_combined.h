// html_combined.h — the HTML report of a combined profile
// (`ballarus-reconstruct html COMBINED -o DIR`; core/combined_profile.h):
// what varies between the observations (runs or named tests), not only
// their sum.  One directory, no server, no network, no script needed (the
// tables sort with report.js when scripts run).
//
//   index.html   the observations, then every function of the program
//                with its entry count's statistics over them (N, mean,
//                stddev, CV, min–max, observations where it never ran, a
//                histogram; reconstruct/html_combined_widgets.h), most
//                called first, each function that ever ran linked to its
//                page;
//   fn<K>.html   one function: its entry count, its hottest Ball–Larus
//                paths (by mean, ties by number; #path-NUMBER), its
//                branches (#edge-E)
//                and its source lines (#L<line>: mean ± stddev, min–max,
//                histogram, the source text), each with its statistics;
//   varies.html  the paths and branches whose counts vary most between
//                observations (ranking: html_combined_widgets.h), first
//                every one hot in some observations and never taken in
//                others, each linked to its function's page.
//
// A branch is an edge, neither fake, ignored nor ballarus' own re-entry
// edge, out of a block with two or more such edges (gcov's branches).  A
// function compiled into several objects is listed once per object (as the
// combined profile keeps it), labelled with its translation unit.
#ifndef BALLARUS_RECONSTRUCT_HTML_COMBINED_H_
#define BALLARUS_RECONSTRUCT_HTML_COMBINED_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/combined_profile.h"
#include "reconstruct/html_combined_widgets.h"

namespace ballarus {

struct CombinedHtmlOptions {
  std::string out_dir;
  std::string title;               // default: from the profile's name
  std::string profile;             // the combined profile's file name
  uint64_t paths_per_function = 5; // hottest paths on a function's page
  VariationOptions variation;      // the varies-most page
};

// Writes the report; returns the number of pages written.  Fails (Fatal)
// naming the directory or file it cannot write.
size_t WriteCombinedHtmlReport(const CombinedProfile& c,
                               const CombinedHtmlOptions& o);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_COMBINED_H_
