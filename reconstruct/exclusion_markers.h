// exclusion_markers.h — the lines and branches a source file's comments
// exclude from coverage reports, as lcov 1.16's geninfo reads them
// (get_source_data) and with gcovr 5.2's marker words as synonyms.
//
// Markers are words anywhere on a line (in a comment or not):
//   PREFIX_EXCL_LINE           this line
//   PREFIX_EXCL_START / _STOP  the lines from START up to, not including,
//                              STOP (STOP wins when both are on one line;
//                              an unterminated START runs to the end)
//   PREFIX_EXCL_BR_LINE, PREFIX_EXCL_BR_START / _BR_STOP
//                              the same for the lines' branches only
//   LCOV_EXCL_EXCEPTION_BR_LINE, ..._START / ..._STOP
//                              as BR: lcov 1.16 with gcov's JSON drops all
//                              of such a line's branches, not only the
//                              exception ones
// PREFIX is LCOV, or one of gcovr's GCOVR, GCOV and LCOVR (gcovr's default
// --exclude-pattern-prefix "[GL]COVR?").  One region flag per kind, as
// lcov has: any prefix's STOP ends any prefix's START.  Reports then drop
// excluded lines (with their branches), the branches of branch-excluded
// lines, and every function whose first line is excluded (lcov's rule;
// gcovr 5.2 keeps such functions).  GCC-free.
#ifndef BALLARUS_RECONSTRUCT_EXCLUSION_MARKERS_H_
#define BALLARUS_RECONSTRUCT_EXCLUSION_MARKERS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ballarus {

class LineExclusions {
 public:
  // From the file's lines, line 1 first (no newlines).
  static LineExclusions Scan(const std::vector<std::string>& lines);

  bool empty() const { return lines_.empty() && branches_.empty(); }
  // Line `line` (1-based) and its branches are left out.
  bool Line(uint32_t line) const { return In(lines_, line); }
  // Its branches are left out (the line itself, or by a BR marker).
  bool Branches(uint32_t line) const {
    return In(lines_, line) || In(branches_, line);
  }
  // The excluded lines, ascending.
  std::vector<uint32_t> ExcludedLines() const;

 private:
  static bool In(const std::vector<bool>& v, uint32_t line) {
    return line < v.size() && v[line];
  }
  std::vector<bool> lines_, branches_;  // by line number; empty when none
};

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_EXCLUSION_MARKERS_H_
