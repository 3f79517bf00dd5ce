// html_functions.h — the functions the HTML report lists: each source
// function once.
//
// A function compiled into several objects (a library's sources built into
// each test program, as CMake projects do, or one object in several
// programs' profiles) is a separate entry of the report model per copy.
// The HTML report shows it once with the copies' counts added, the way
// lcov adds a function's counts by name and its summary tables count it
// once: calls, blocks, edges, line counts and Ball–Larus path counts
// summed.  Copies are the same function when they share file, first line
// and assembler name; they are summed only when their CFGs are the same
// (checksum, blocks and their lines, edges, path numbering).  Copies whose
// CFGs differ (different builds of the source) stay apart, each labelled
// with the translation units it came from.
#ifndef BALLARUS_RECONSTRUCT_HTML_FUNCTIONS_H_
#define BALLARUS_RECONSTRUCT_HTML_FUNCTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "reconstruct/report_model.h"

namespace ballarus {

struct ShownFunction {
  report::FunctionReport f;    // counts summed over `copies`
  std::vector<size_t> copies;  // into Report::functions, ascending
  // Empty, or which build this is when copies of the function differ in
  // their CFG: "build 2 of 2: TU SOURCE (record N, ...)".
  std::string build;
};

// `functions` (indices into r.functions, ascending) grouped as above, in
// the order of their first copy.
std::vector<ShownFunction> GroupFunctionCopies(
    const report::Report& r, const std::vector<size_t>& functions);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_FUNCTIONS_H_
