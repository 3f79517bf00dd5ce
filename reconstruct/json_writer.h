// json_writer.h — the JSON pieces of the report model that several
// subcommands print (show --json, paths --json; schema in docs/DESIGN.md).
// Key order is part of the format: nlohmann::ordered_json keeps it.
#ifndef BALLARUS_RECONSTRUCT_JSON_WRITER_H_
#define BALLARUS_RECONSTRUCT_JSON_WRITER_H_

#include <nlohmann/json.hpp>

#include "core/flow.h"
#include "reconstruct/report_model.h"

namespace ballarus {

using ojson = nlohmann::ordered_json;

// `s` as valid UTF-8: every byte that is not part of a valid UTF-8
// sequence becomes the code point of the same value (U+0080..U+00FF), so a
// Latin-1 name reads right and nothing is lost or fails.
std::string ValidUtf8(const std::string& s);

// j.dump(1) with every string made ValidUtf8 first (nlohmann's dump throws
// on invalid UTF-8).
std::string JsonDump(const ojson& j);

// A count, or null where it is unknown.
ojson CountJson(const Count& c);

class JsonOut;
struct TestProvenance;  // reconstruct/test_reports.h

// A profile with named runs (BALLARUS_TEST) adds which tests executed
// what: pass its provenance as `tests` (null or empty: the output is as
// without named runs).  The top level then has "tests": [{"name", "runs"}]
// (TestsJson), and functions, lines and paths a "tests" array of indices
// into it: the tests that executed them.

// StreamFunctionJson / StreamFileLines write what FunctionJson /
// FileLinesJson return, straight to a JsonOut (json_stream.h): the one
// implementation of both.  `f` is one of r.functions.
void StreamFunctionJson(JsonOut& out, const report::Report& r,
                        const report::FunctionReport& f,
                        const TestProvenance* tests = nullptr);
void StreamFileLines(JsonOut& out, const report::Report& r,
                     const TestProvenance* tests = nullptr);

// One function as `show --json` prints it: name, demangled, file, line,
// end_line, checksum, execution_count, tus, [tests], [edges_from_paths],
// blocks, edges, line_counts.
ojson FunctionJson(const report::Report& r, const report::FunctionReport& f,
                   const TestProvenance* tests = nullptr);

// The top-level "lines": every counted line of every file, by file and
// line: [{"file", "line", "count", ..., ["tests"]}].
ojson FileLinesJson(const report::Report& r,
                    const TestProvenance* tests = nullptr);

// The top-level "tests": [{"name", "runs"}], in the order of the indices.
void StreamTests(JsonOut& out, const TestProvenance& tests);
ojson TestsJson(const TestProvenance& tests);

// The "tests" array of path `number` of `f` (one of r.functions).
ojson PathTestsJson(const report::Report& r, const report::FunctionReport& f,
                    uint64_t number, const TestProvenance& tests);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_JSON_WRITER_H_
