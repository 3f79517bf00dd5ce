// gcov_writer.h — gcov 12's output formats written from a gcov view
// (reconstruct/gcov_view.h): the annotated source of a `.gcov` file
// (gcov.cc output_lines) and the JSON intermediate format (gcov
// --json-format, gcov.cc output_json_intermediate_file), byte for byte as
// gcov prints them for the same counts, plus gcov's summaries on stdout.
#ifndef BALLARUS_RECONSTRUCT_GCOV_WRITER_H_
#define BALLARUS_RECONSTRUCT_GCOV_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reconstruct/gcov_view.h"

namespace ballarus {
namespace gcov {

// gcov's output options.
struct Format {
  bool branches = false;       // -b: branch and call lines, function lines
  bool counts = false;         // -c: branch counts instead of percentages
  bool unconditional = false;  // -u: unconditional arcs too
  bool demangle = false;       // -m: demangled names
  bool human = false;          // -H: 1.2k instead of 1234
  bool function_summaries = false;  // -f: per-function summaries on stdout
  bool all_blocks = false;     // -a: a line per basic block
};

// The header lines of a .gcov file.  `single`: the view is one TU (gcov
// given one data file prints Graph, Data and Runs; several, none).
struct Header {
  bool single = true;
  std::string graph, data;  // what Graph: and Data: name
  uint64_t runs = 0;
  bool source_newer = false;  // "Source is newer than graph"
};

// The source's text lines as gcov's read_line gives them (no newline).
// False when it cannot be opened.
bool ReadSourceLines(const std::string& path, std::vector<std::string>* out);

// The contents of the .gcov file of `source` of `view` (gcov's
// output_lines), naming it `name` (gcov's name for it, after -s); `text`
// is the source's lines.
std::string GcovText(const View& view, uint32_t source, const Format& format,
                     const Header& header, const std::string& name,
                     const std::vector<std::string>& text);

// gcov's JSON document for one data file (view of one TU, Options::json):
// exactly what `gcov --json-format` compresses into NAME.gcov.json.gz
// (no trailing newline; gcov -t -j adds one).  `data_file` and `cwd` fill
// "data_file" and "current_working_directory"; `gcc_version` e.g. "12.2.0".
// Names that are not valid UTF-8 are written with each byte that is not
// part of a valid sequence as \u00XX (gcov writes them raw, which is not
// JSON); other control characters as \u00XX too.
// `names` is parallel to view.sources: the name each file is listed
// with, or empty to leave it out (-r, filters).
std::string GcovJson(const View& view, const std::string& gcc_version,
                     const std::string& cwd, const std::string& data_file,
                     const Format& format,
                     const std::vector<std::string>& names);

// gcov's JSON string quoting (see GcovJson).
std::string JsonString(const std::string& s);

// gcov's format_gcov: a percentage with `decimals` places (0: "1%" for
// small non-zero ratios), or with decimals < 0 the count (format_count,
// `human`: 1.2k).
std::string FormatGcov(int64_t top, int64_t bottom, int decimals, bool human);

// gcov's file name for the .gcov of `source_name` (make_gcov_file_name):
// its base name, with -p the whole path mangled, with -l prefixed by the
// input's name and "##" when they differ.
std::string GcovFileName(const std::string& input_name,
                         const std::string& source_name, bool long_names,
                         bool preserve_paths);

// "Lines executed:85.71% of 7\n" (and with `branches` the branch and call
// lines) as gcov prints after "File 'NAME'".
std::string SummaryText(const Coverage& c, bool branches);

}  // namespace gcov
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_GCOV_WRITER_H_
