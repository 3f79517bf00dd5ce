// cmd_combine.h — `ballarus-reconstruct combine`: observations (profiles,
// directories, named tests, combined profiles) into a combined profile
// and its JSON report; see cmd_combine.cc.
#ifndef BALLARUS_RECONSTRUCT_CMD_COMBINE_H_
#define BALLARUS_RECONSTRUCT_CMD_COMBINE_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/combined_stats.h"

namespace ballarus {

struct CombineArgs {
  std::vector<std::string> inputs;
  std::string out, json;
  unsigned bins = 0;  // 0: see RunCombine
  bool per_test = false;
  bool skip_bad = false;
};

CLI::App* AddCombineCommand(CLI::App* app, CombineArgs* args);
// Without --bins (bins == 0), the result has the bins of the first
// combined-profile input, or kDefaultBins.
int RunCombine(const CombineArgs& args);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CMD_COMBINE_H_
