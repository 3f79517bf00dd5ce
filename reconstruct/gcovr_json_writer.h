// gcovr_json_writer.h — gcovr's JSON tracefile, the file `gcovr --json`
// writes and `gcovr --add-tracefile FILE` reads back to write any of its
// reports (HTML, Cobertura, SonarQube, Coveralls, CSV, text and JSON
// summaries).  The format is gcovr 5's ("gcovr/format_version": "0.3",
// gcovr/writer/json.py; other gcovr versions read only their own).
//
//   {"files": [{"file": NAME,
//               "functions": [{"execution_count": N, "lineno": L,
//                              "name": NAME}, ...],
//               "lines": [{"branches": [{"count": N, "fallthrough": false,
//                                        "throw": false}, ...],
//                          "count": N, "gcovr/excluded": false,
//                          "gcovr/noncode": false, "line_number": L}, ...]},
//              ...],
//    "gcovr/format_version": "0.3"}
//
// It is built from the coverage summary (reconstruct/coverage_summary.h)
// the way gcovr builds its own model from the .gcov files it has gcov
// write (gcovr/gcov_parser.py, default options), so that gcovr's reports
// of it equal gcovr's reports of gcov's data for the same run:
//   * lines: every line with code, its count summed over the translation
//     units.  A line that never ran and whose text gcovr takes for no code
//     (nothing but "{", "}", "else" or a comment) is left out with its
//     branches: gcovr marks such lines "noncode" and counts neither;
//   * branches: per line, in gcov's order, the count of each (0 for the
//     branches of a line that never ran).  "fallthrough" and "throw" are
//     always false: the profile does not keep gcov's arc annotations
//     (gcovr reads them only from .gcov files, for options of its own);
//   * functions: by demangled name, as gcovr runs gcov -m: copies sharing a
//     name (a constructor's C1 and C2 symbols) are one function, their
//     counts summed, its line the largest.  Compiler-internal functions
//     (names starting "__" or "_GLOBAL__sub_I_") are left out, as gcovr
//     leaves them out unless --include-internal-functions.
// Files are named by absolute path, or relative to `root` when under it
// (gcovr's own naming; gcovr then needs the same --root to read them).
#ifndef BALLARUS_RECONSTRUCT_GCOVR_JSON_WRITER_H_
#define BALLARUS_RECONSTRUCT_GCOVR_JSON_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "reconstruct/coverage_summary.h"

namespace ballarus {

struct GcovrJsonOptions {
  std::string root;  // names relative to this directory; absolute if empty
  bool internal_functions = false;
};

// The text of line `line` (1-based) of the summary's file `file`
// (FileCoverage::file), or nullptr when it cannot be read (the line then
// counts as code).
using SourceLineFn =
    std::function<const std::string*(uint32_t file, uint32_t line)>;

std::string GcovrJson(const coverage::Summary& s, const SourceLineFn& text,
                      const GcovrJsonOptions& options);

// gcovr's test for a line without code (gcov_parser.py _is_non_code):
// once "//" comments and then "/* */" comments are removed, the line is
// blank, "{", "}" or "else".
bool GcovrNonCode(const std::string& text);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_GCOVR_JSON_WRITER_H_
