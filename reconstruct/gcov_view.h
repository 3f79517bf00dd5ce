// gcov_view.h — the report model (reconstruct/report_model.h) seen the way
// gcov 12 sees a set of .gcno/.gcda files: its arcs, its blocks' flags, its
// per-source line table with each line's count, "exists", "unexceptional"
// and "unexecuted block" flags, branch arcs and blocks, group functions and
// the coverage summaries.  Every report in gcov's own semantics reads it:
// .gcov files and gcov's JSON (gcov_writer.h), lcov tracefiles and the HTML
// report's line, branch and function figures.
//
// Transcribed from gcc-12.2.0/gcc/gcov.cc: read_graph_file (arc flags:
// is_call_non_return, is_nonlocal_return, is_throw, has_catch),
// process_all_functions (group functions: non-artificial functions sharing
// a file and start line; artificial functions removed; each location's
// lines sorted; line tables sized), solve_flow_graph (successor arcs
// sorted by target, is_unconditional, is_call_return; the counts are
// ballarus' solved counts), find_exception_blocks, add_line_counts,
// accumulate_line_counts (entry arcs plus elementary circuits of the
// line's blocks, Hawick & James as gcov does), keeping gcov's quirks: the
// block with the highest index is never put on a line (gcov still takes it
// for EXIT), a block is put on the LAST line of each of its location runs,
// and only there do its successor arcs become the line's branches.
//
// The arcs are gcov's (EdgeReport::gcov_arc): ballarus' edges minus the
// abnormal edges gcov replaces by fake ones and the fake edges off GCC's
// spanning tree, which gcov never sees.  A count ballarus could not
// determine is taken as 0.
//
// A View covers the TUs it is given, in that order, as one `gcov` command
// given their .gcda files does (gcov.cc main: all files read, then
// processed together): functions are listed TU after TU, each TU's in its
// own (.gcno) order; a COMDAT function appears once per TU that emitted it
// with that copy's own counts.  JSON mode (gcov -j) processes each data
// file alone: one View per TU, group lines kept apart.  GCC-free.
#ifndef BALLARUS_RECONSTRUCT_GCOV_VIEW_H_
#define BALLARUS_RECONSTRUCT_GCOV_VIEW_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reconstruct/report_model.h"

namespace ballarus {
namespace gcov {

struct Arc {
  uint32_t src = 0, dst = 0;  // block indices
  uint32_t edge = 0;          // into FunctionReport::edges
  int64_t count = 0;
  bool fake = false;
  bool fall_through = false;
  bool is_throw = false;            // to a catch handler
  bool is_call_non_return = false;  // fake arc out of a call block
  bool is_nonlocal_return = false;  // fake arc out of ENTRY
  bool is_unconditional = false;    // the only non-fake arc of its block
};

struct Location {
  uint32_t source = 0;          // into View::sources
  std::vector<uint32_t> lines;  // sorted
};

struct Block {
  int64_t count = 0;
  bool exceptional = false;
  bool is_call_site = false;
  bool is_call_return = false;
  // Entries on ballarus' fake re-entry edges (later returns of a setjmp
  // or vfork before it), which `count` leaves out as gcov's graph does.
  int64_t returns_again = 0;
  std::vector<uint32_t> succ;  // arc indices in gcov's order (by target)
  std::vector<uint32_t> pred;  // arc indices in .gcno order
  std::vector<Location> locations;
};

// (function, block) and (function, arc): indices into View::functions and
// that function's blocks / arcs.
using BlockId = std::pair<uint32_t, uint32_t>;
using ArcId = std::pair<uint32_t, uint32_t>;

struct Line {
  int64_t count = 0;
  bool exists = false;
  bool unexceptional = false;
  bool has_unexecuted_block = false;
  std::vector<BlockId> blocks;   // blocks ending on the line
  std::vector<ArcId> branches;   // their successor arcs (Options::branches)
};

struct Function {
  uint32_t function = 0;  // into Report::functions
  uint32_t tu = 0;        // into Report::tus
  std::string name;       // assembler name (gcov's m_name)
  std::string demangled;  // gcov's get_demangled_name()
  uint32_t source = 0;    // into View::sources
  uint32_t start_line = 0, start_column = 0, end_line = 0, end_column = 0;
  bool is_group = false;
  bool has_catch = false;
  std::vector<Block> blocks;
  std::vector<Arc> arcs;
  uint32_t blocks_executed = 0;
  std::vector<Line> lines;  // group functions: lines start_line..end_line
  // gcov -f's "Lines executed" of the function (add_line_counts counts a
  // line when it first sees it, executed when the block has a count and
  // the line had none yet).
  struct {
    int64_t lines = 0, lines_executed = 0;
  } coverage;

  uint32_t block_count() const {
    return blocks.size() < 2 ? 0 : static_cast<uint32_t>(blocks.size() - 2);
  }
  // gcov's "function ... called N returned R": EXIT's count less the
  // counts of the fake arcs into it.
  int64_t called() const { return blocks.empty() ? 0 : blocks[0].count; }
  int64_t returned() const;
  // gcov's "call N returned": the call block's count less its fake arc's,
  // i.e. every return through gcov's counter after the call: the arcs out
  // of the call block (a fork child's return included) plus the later
  // returns of a setjmp or vfork, which ballarus counts on edges from
  // ENTRY into the block after the call.
  int64_t CallReturns(const Arc& fake) const;
};

// gcov's coverage_info.
struct Coverage {
  int64_t lines = 0, lines_executed = 0;
  int64_t branches = 0, branches_executed = 0, branches_taken = 0;
  int64_t calls = 0, calls_executed = 0;
};

struct Source {
  std::string name;  // canonical name as gcov prints it
  uint32_t file = 0;  // into Report::files (the first spelling met)
  uint32_t tu = 0;    // the first TU that named it (whose cwd it is
                      // relative to)
  std::vector<Line> lines;          // index = line number
  std::vector<uint32_t> functions;  // defined in it, in reading order
  Coverage coverage;
  int64_t maximum_count = 0;

  // Functions starting at `line`, by (start line, start column): gcov's
  // get_functions_at_location, which std::sorts its slot of
  // line_to_function_map in place at every call (std::sort is not stable:
  // functions with equal keys come out in the order gcov's own libstdc++
  // std::sort gives, repeated calls included).
  const std::vector<uint32_t>& FunctionsAt(const std::vector<Function>& fns,
                                           uint32_t line) const;
  // gcov's line_to_function_map: functions by start line, reading order
  // until FunctionsAt sorts them.
  mutable std::map<uint32_t, std::vector<uint32_t>> line_to_function;
};

struct Options {
  bool branches = false;  // -b: arcs become the lines' branches
  bool json = false;      // -j: group lines are not folded into the file's
};

// One entry of the "lines" of gcov's JSON for a source
// (output_json_intermediate_file): at each line number, the lines of the
// group functions starting there (each function's lines in turn), then the
// file's own line, named after the innermost non-group function open
// there.  Only lines that exist.
struct JsonLineRef {
  uint32_t line_number = 0;
  const Line* line = nullptr;
  int32_t function = -1;  // into View::functions, or -1 for none
};

class View {
 public:
  // gcov of the TUs `tus` (indices into r.tus), read in that order.
  View(const report::Report& r, const std::vector<uint32_t>& tus,
       const Options& options);

  const report::Report& report() const { return *r_; }
  std::vector<JsonLineRef> JsonLines(uint32_t source) const;
  // The source's functions by start line and column (gcov's
  // function_line_start_cmp).
  std::vector<uint32_t> SortedFunctions(uint32_t source) const;
  const std::vector<uint32_t>& tus() const { return tus_; }
  std::vector<Function> functions;  // artificial ones removed
  std::vector<Source> sources;      // in the order gcov meets them
  // Summed over the TUs' run counts (gcov's object runs for one TU).
  uint64_t runs = 0;

 private:
  uint32_t FindSource(uint32_t file, uint32_t tu);
  void ReadFunction(uint32_t tu, const report::TuFunction& tf);
  void ProcessAllFunctions();
  void AddLineCounts(Function* fn, uint32_t fi);
  void AccumulateLineInfo(Line* line, Source* src, bool add_coverage);
  void AccumulateLineCounts(Source* src);

  const report::Report* r_;
  std::vector<uint32_t> tus_;
  Options options_;
  // (Report file, TU) -> source: each TU's spelling of the file.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> source_of_;
  std::vector<bool> artificial_;         // parallel to `functions` until
                                         // process_all_functions
};

// gcov's canonicalize_name: '.' components elided, "dir/.." removed unless
// dir is a symlink or cannot be stat'ed (relative to the working
// directory), repeated separators collapsed.
std::string CanonicalizeName(const std::string& name);
// gcov's mangle_path (-p): '/' -> '#', ".." -> '^'.
std::string ManglePath(const std::string& name);

}  // namespace gcov
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_GCOV_VIEW_H_
