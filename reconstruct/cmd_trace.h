// cmd_trace.h — `ballarus-reconstruct trace TRACEFILE... [--profile
// PROFILE...]`: each thread's executed blocks regenerated from trace files
// (runtime/trace_format.h) and the CFGs and trace plans of the TUs'
// metadata, which the trace files carry (METADATA records) or profiles
// give (core/trace_regen.h, core/trace_ids.h), printed as source lines
// (default) or blocks.  Ring buffers and fork children's files start at a
// checkpoint (reconstruct/trace_thread.h); mode=trace-naive files are
// shown as they are.
#ifndef BALLARUS_RECONSTRUCT_CMD_TRACE_H_
#define BALLARUS_RECONSTRUCT_CMD_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ballarus {

struct TraceOptions {
  std::vector<std::string> trace_files;
  std::vector<std::string> profiles;
  std::string function_regex;  // only steps in matching functions
  std::string range;           // "FROM:TO": only steps FROM..TO (inclusive)
  uint64_t last = 0;           // only the last N items per thread (0: all)
  bool blocks = false;         // blocks instead of source lines
  bool numbered = false;       // lines: each with its step index
  uint32_t thread = 0;         // only this thread serial (0: all)
  bool json = false;
};

int RunTrace(const TraceOptions& o);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CMD_TRACE_H_
