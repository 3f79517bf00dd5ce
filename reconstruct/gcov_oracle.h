// gcov_oracle.h — an independent reader of GCC 12 .gcno/.gcda files, used
// by the end-to-end tests as the reference ("oracle") for ballarus' counts.
//
// Why independent: ballarus claims its naive profile reproduces gcov's
// numbers edge for edge.  To check that claim the tests need gcov's full arc
// counts, which gcov itself never prints (it only prints line and branch
// summaries).  This reader decodes the notes file (graph: blocks, arcs in
// .gcno order with their flags, block line lists) and the data file (the
// counters of the arcs that are off gcov's spanning tree), then solves the
// on-tree arcs with its own flow-conservation solver.  It shares no code with
// ballarus' core/ (in particular not core/flow), so a bug there cannot hide
// itself in the comparison.
//
// Formats: gcc/gcov-io.h (record layout, GCC 12: record lengths in bytes,
// strings = byte length incl. NUL + bytes, no padding), gcc/gcov.cc
// read_graph_file/read_count_file/solve_flow_graph (semantics), gcc/profile.cc
// branch_prob (which arcs are written, and counter order: blocks in index
// order, each block's arcs in .gcno order, off-tree arcs only).
#ifndef BALLARUS_RECONSTRUCT_GCOV_ORACLE_H_
#define BALLARUS_RECONSTRUCT_GCOV_ORACLE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gcov_oracle {

// Arc flags as stored in the .gcno (gcov-io.h GCOV_ARC_*).
inline constexpr uint32_t kArcOnTree = 1u << 0;
inline constexpr uint32_t kArcFake = 1u << 1;
inline constexpr uint32_t kArcFallthrough = 1u << 2;

struct Arc {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t flags = 0;  // kArc* bits
  bool on_tree() const { return flags & kArcOnTree; }
  bool fake() const { return flags & kArcFake; }
  bool fallthrough() const { return flags & kArcFallthrough; }
  // Measured (off-tree) or solved (on-tree).  Signed, like gcov's
  // gcov_type: when the measured counts are not a circulation (a setjmp
  // receiver re-entered by longjmp, whose abnormal entries GCC 12 neither
  // counts nor represents by a fake ENTRY arc), solving yields a negative
  // count on a fake arc, exactly as gcov itself computes.
  int64_t count = 0;
};

// One run of lines of a block in one source file (gcov's
// block_location_info): the .gcno names a file, then its lines.
struct LineRun {
  std::string file;
  std::vector<uint32_t> lines;
};

struct Function {
  uint32_t ident = 0;
  uint32_t lineno_checksum = 0;
  uint32_t cfg_checksum = 0;
  std::string name;  // assembler name
  bool artificial = false;
  std::string file;  // source file of the function's start
  uint32_t start_line = 0, start_column = 0, end_line = 0, end_column = 0;
  uint32_t n_blocks = 0;            // ENTRY and EXIT included
  std::vector<Arc> arcs;            // .gcno order, grouped by source block
  std::vector<std::vector<LineRun>> block_lines;  // per block
  // Filled by ReadGcda:
  bool has_data = false;  // the .gcda had a counter record for it
  int64_t execution_count = 0;        // count of ENTRY
  std::vector<int64_t> block_counts;  // per block (ENTRY: its out-flow)
  int negative_arcs = 0;  // arcs solved negative (see Arc::count)

  // Number of counters gcov allots to it (arcs that are not on the tree).
  size_t n_counters() const;
};

struct Unit {
  std::string gcno_path;
  std::string gcda_path;
  uint32_t version = 0;
  uint32_t stamp = 0;
  std::string cwd;
  uint32_t runs = 0;  // object summary of the .gcda
  std::vector<Function> functions;  // .gcno order
};

// Reads a notes file.  On failure returns false and sets *error to one line
// "PATH: offset N: problem".
bool ReadGcno(const std::string& path, Unit* unit, std::string* error);

// Reads a data file for a unit read by ReadGcno (stamps must agree), assigns
// the measured counts to the off-tree arcs and solves every other arc.  A
// function absent from the .gcda keeps has_data = false and zero counts.
bool ReadGcda(const std::string& path, Unit* unit, std::string* error);

// Solves the on-tree arcs of `fn` from its off-tree arcs by flow
// conservation over the closed graph (virtual arc EXIT->ENTRY), and fills
// execution_count and block_counts.  Fails (with a message naming the
// function) if some arc stays undetermined.  Negative solutions are kept
// and counted in negative_arcs.  A thunk's record (checksum 0, artificial,
// only ENTRY's arcs, all counted: profile.cc branch_prob (thunk)) is not
// solved: its counts are its entry arcs'.
bool SolveArcs(Function* fn, std::string* error);

// Parses in-memory bytes (what ReadGcno/ReadGcda use); `path` only names
// the input in messages.
bool ParseGcno(const std::string& path, const std::vector<uint8_t>& bytes,
               Unit* unit, std::string* error);
bool ParseGcda(const std::string& path, const std::vector<uint8_t>& bytes,
               Unit* unit, std::string* error);

}  // namespace gcov_oracle

#endif  // BALLARUS_RECONSTRUCT_GCOV_ORACLE_H_
