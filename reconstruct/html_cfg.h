// html_cfg.h — the HTML report's CFG pictures: a function's graph in
// Graphviz's dot language, and the pictures drawn by `dot` processes run
// side by side, within a time limit.
//
// A picture is one `dot -Tsvg` process, so a large graph delays only its
// own picture: up to `jobs` processes run at once (default: the CPUs this
// process may use), smallest graph first.  When the time limit passes,
// the processes still drawing are killed and the pictures not yet started
// are not drawn; the report then names them and keeps their dot source
// beside the pages, to be drawn by hand.  No process outlives the call.
#ifndef BALLARUS_RECONSTRUCT_HTML_CFG_H_
#define BALLARUS_RECONSTRUCT_HTML_CFG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "reconstruct/progress.h"
#include "reconstruct/report_model.h"

namespace ballarus {

// The function's CFG in dot: blocks with their lines and counts, filled by
// heat; edges labelled with their counts, as wide as their share of the
// busiest edge; the hottest path (the most executed Ball–Larus path, else
// the heaviest-edge walk from ENTRY) red and bold; fake edges dashed.
// A large graph asks dot for a quicker layout (straight edges).  `index`
// names the graph.
std::string CfgDot(const report::FunctionReport& f, size_t index);

struct CfgPicture {
  enum Status {
    kDrawn,     // `svg` holds the <svg> element
    kTimedOut,  // not drawn within the time limit
    kFailed,    // dot failed on it
    kNotRun,    // dot could not be run
  };
  Status status = kFailed;
  std::string svg;
};

struct CfgDrawOptions {
  std::string dot = "dot";  // the Graphviz command
  size_t jobs = 0;          // dot processes at once; 0: one per usable CPU
  double time_limit = 0;    // seconds for all the pictures; 0: none
  bool quiet = false;       // no progress line
};

// Draws graphs[i] into result[i].  A `dot` that cannot be
// run at all is one warning on stderr and every picture kFailed.
std::vector<CfgPicture> DrawCfgPictures(const std::vector<std::string>& graphs,
                                        const CfgDrawOptions& options);

// The CPUs this process may run on (at least 1).
size_t UsableCpus();

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_CFG_H_
