// cmd_show.cc — `ballarus-reconstruct show PROFILE [--json] [--function
// REGEX]`: every function's block, edge and line counts; with --json the
// document of docs/DESIGN.md, whose top-level "lines" (all functions
// only) are the per-file line counts gcov would print.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"
#include "reconstruct/json_stream.h"
#include "reconstruct/json_writer.h"
#include "reconstruct/provenance.h"
#include "reconstruct/text_writer.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::Report;

void PrintFunctionText(const Report& r, const FunctionReport& f) {
  std::string tus;
  for (uint32_t t : f.tus)
    tus += (tus.empty() ? "" : ", ") + Printable(r.tus[t].source);
  // Names and file names escaped as error lines are (commands.h Printable).
  fmt::print("{} ({}:{}): executed {} times, checksum 0x{:08x}, TU {}\n",
             Printable(f.display_name()), Printable(r.file_name(f.file)),
             f.line,
             CountText(f.execution_count), f.checksum, tus);
  if (f.paths)
    fmt::print("  paths: {} of {} executed{}\n", f.paths->executed.size(),
               f.paths->n_paths,
               f.edges_from_paths
                   ? "; edge counts derived from them (counted = path)"
                   : "");
  fmt::print("  blocks:\n  {:>6} {:>20}  lines\n", "id", "count");
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    std::string lines;
    for (const report::SourceLine& l : f.blocks[b].lines) {
      if (!lines.empty()) lines += ' ';
      lines += l.file == f.file ? std::to_string(l.line)
                                : Printable(r.file_name(l.file)) + ":" +
                                      std::to_string(l.line);
    }
    const char* tag =
        b == kEntryBlock ? " ENTRY" : b == kExitBlock ? " EXIT" : "";
    fmt::print("  {:>6} {:>20}  {}{}\n", b, CountText(f.blocks[b].count),
               lines, tag);
  }
  fmt::print("  edges:\n  {:>13} {:<12} {:<8} {:>20}\n", "src->dst", "kind",
             "counted", "count");
  for (const report::EdgeReport& e : f.edges)
    fmt::print("  {:>13} {:<12} {:<8} {:>20}\n",
               fmt::format("{}->{}", e.src, e.dst),
               report::EdgeKindName(e.kind),
               e.counted    ? (f.edges_from_paths ? "path" : "yes")
               : e.from_calls ? "calls"
                              : "no",
               CountText(e.count));
  // As gcov prints a count: N, N* (a block on the line never ran), #####
  // (never run), ===== (never run, only reachable by a throw).
  fmt::print("  lines:\n");
  for (const report::LineCount& l : f.lines) {
    const std::string c = l.count > 0 ? std::to_string(l.count) +
                                            (l.unexecuted_block ? "*" : "")
                          : l.exceptional ? "====="
                                          : "#####";
    fmt::print("  {:>20}: {}:{}\n", c, Printable(r.file_name(l.where.file)),
               l.where.line);
  }
  fmt::print("\n");
}

}  // namespace

int RunShow(const ProfileInputs& in, bool json, const std::string& regex) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const Report& r = loaded.report;
  const std::vector<const FunctionReport*> fs = Select(r, regex);
  if (json) {
    // Streamed (json_stream.h): the same bytes as the document's dump(1),
    // without the document.
    // Named runs: which tests executed each function and line.
    const TestProvenance tests = ComputeProvenance(loaded);
    std::cout.flush();
    JsonOut o(stdout);
    o.BeginObject();
    o.Key("profile").String(r.profile);
    o.Key("runs").Uint(r.runs);
    if (!tests.empty()) {
      o.Key("tests");
      StreamTests(o, tests);
    }
    o.Key("functions").BeginArray();
    for (const FunctionReport* f : fs) StreamFunctionJson(o, r, *f, &tests);
    o.EndArray();
    if (regex.empty()) {
      o.Key("lines");
      StreamFileLines(o, r, &tests);
    }
    o.EndObject();
    o.Flush();
    std::fputs("\n", stdout);
    std::fflush(stdout);
    return 0;
  } else {
    fmt::print("profile {}: {} runs, {} translation units, {} functions\n\n",
               Printable(r.profile), r.runs, r.tus.size(), r.functions.size());
    for (const FunctionReport* f : fs) PrintFunctionText(r, *f);
    // Each file as shown above, its absolute path, and every spelling the
    // TUs compiled it by.
    fmt::print("files:\n");
    for (size_t i = 0; i < r.files.size(); ++i) {
      std::string as_compiled;
      for (const std::string& s : r.spellings[i])
        as_compiled += (as_compiled.empty() ? "" : ", ") + Printable(s);
      fmt::print("  {}: {} (as compiled: {})\n", Printable(r.files[i]),
                 Printable(r.paths[i]), as_compiled);
    }
  }
  std::cout.flush();
  return 0;
}

}  // namespace ballarus
