// cmd_trace.h — `ballarus-reconstruct trace TRACEFILE --profile PROFILE...`:
// each thread's executed blocks regenerated from a trace file
// (runtime/trace_format.h) and the CFGs and trace plans of the profiles'
// metadata (core/trace_regen.h, core/trace_ids.h), printed as source lines
// (default) or blocks.
#ifndef BALLARUS_RECONSTRUCT_CMD_TRACE_H_
#define BALLARUS_RECONSTRUCT_CMD_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ballarus {

struct TraceOptions {
  std::string trace_file;
  std::vector<std::string> profiles;
  std::string function_regex;  // only steps in matching functions
  uint64_t last = 0;           // only the last N items per thread (0: all)
  bool blocks = false;         // blocks instead of source lines
  uint32_t thread = 0;         // only this thread serial (0: all)
  bool json = false;
};

int RunTrace(const TraceOptions& o);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CMD_TRACE_H_
