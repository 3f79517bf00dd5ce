// gcov_lines.h — per-line execution counts computed exactly as gcov 12 does
// (gcc/gcov.cc: add_line_counts, accumulate_line_info, get_cycles_count),
// so ballarus' line counts compare one to one with `gcov --json-format`.
//
// A line's count is not the sum of its blocks' counts: gcov sums the counts
// of the edges entering the line's blocks from blocks not on the line, then
// adds the loops lying entirely on the line (elementary circuits of the
// line's local graph, found with Hawick & James' variant of Johnson's
// circuit enumeration, each circuit taking its minimum remaining edge
// count).  See gcov_lines.cc for the quirks reproduced.
#ifndef BALLARUS_CORE_GCOV_LINES_H_
#define BALLARUS_CORE_GCOV_LINES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model.h"

namespace ballarus {

// One function's solved counts (e.g. from SolveFlow); unknown counts are
// taken as 0.  `edges` is parallel to function->edges, `blocks` to
// function->blocks.
struct GcovFunctionInput {
  const Function* function = nullptr;
  const std::vector<std::optional<uint64_t>>* edges = nullptr;
  const std::vector<std::optional<uint64_t>>* blocks = nullptr;
};

// gcov_type arithmetic that cannot overflow: profile counts are unsigned
// 64-bit (residues of merges modulo 2^64), gcov's are signed; a count above
// INT64_MAX reads as INT64_MAX, and sums saturate instead of wrapping to
// negative line counts.
inline int64_t GcovCount(uint64_t c) {
  return c > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX
                                              : static_cast<int64_t>(c);
}
inline int64_t GcovAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
inline int64_t GcovSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

struct GcovLine {
  uint32_t file = 0;  // TranslationUnit::files index
  uint32_t line = 0;
  int64_t count = 0;  // gcov_type
  // gcov's line flags (gcov.cc add_line_counts; the .gcov text shows them):
  // unexecuted_block — some non-exceptional block on the line ran 0 times
  // (a count printed as "N*"); exceptional — every block on the line is
  // exceptional, reachable only through a throw (a count of 0 printed as
  // "=====" instead of "#####").
  bool unexecuted_block = false;
  bool exceptional = false;
  // -1 for a line of the source file; otherwise the index (into the input)
  // of the "group" function owning the line: gcov keeps the lines of
  // functions sharing a start line (e.g. template instances) apart.
  int32_t function = -1;
};

// Line counts of a set of functions compiled in one TU, as gcov computes
// them for that TU's .gcno/.gcda: functions flagged kFunctionArtificial are
// dropped (gcov removes them), lines of several functions on one source line
// are combined as gcov combines them.  Sorted by (file, line, group
// functions first in input order, then the file-level line).  Pass a single
// function to get that function's own line counts.
std::vector<GcovLine> GcovLineCounts(
    const std::vector<GcovFunctionInput>& functions);

}  // namespace ballarus

#endif  // BALLARUS_CORE_GCOV_LINES_H_
