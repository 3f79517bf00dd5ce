// test_profiles.h — profile files built from hand-made TUs, for the unit
// tests of the profile readers (core/profile_reader.h and what is built on
// it): each record's metadata blob is EncodeMetadata(tu), serialised with
// runtime/profile_io.h exactly as the runtime writes a profile.
// Test-only (//core:test_profiles).
#ifndef BALLARUS_CORE_TEST_PROFILES_H_
#define BALLARUS_CORE_TEST_PROFILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

struct TestRecord {
  TranslationUnit tu;              // tu.n_counters is set from `counters`
  std::vector<uint64_t> counters;
  std::vector<ballarus_sparse_entry> sparse;  // sorted by (function, key)
  uint64_t runs = 1;
};

// Writes the records as the profile file `name` in $TEST_TMPDIR (or /tmp)
// and returns its path; an empty string (and a gtest failure) if it
// cannot.
std::string WriteTestProfile(const std::string& name,
                             std::vector<TestRecord> records,
                             uint64_t runs = 1);

// A function with `n_blocks` blocks, block b >= 2 on line `line` + b of
// file 0, and edges (src, dst, flags); edge i gets counter `first_counter`
// + i unless it is fake, abnormal or ignored or first_counter < 0.
struct TestEdge {
  uint32_t src, dst, flags;
};
Function TestFunction(const std::string& name, uint32_t line,
                      uint32_t n_blocks, const std::vector<TestEdge>& edges,
                      int64_t first_counter);

// The tests' running example, loop(n) (file 0, lines line+2..line+7):
//   for (i = 0; i < n; i++) if (i & 1) odd work;
//   blocks 2 {entry} 3 {i < n?} 4 {odd?} 5 {odd work} 6 {latch} 7 {return}
//   edges 0:0->2 1:2->3 2:3->4(T) 3:3->7(F) 4:4->5(T) 5:4->6(F) 6:5->6
//         7:6->3 (the back edge) 8:7->1
// without counters.
Function TestLoop(const std::string& name, uint32_t line = 10);

// The paths of loop(4), loop(4), loop(0): (restart block or -1, CFG
// edges, count) — 11 paths in all.
struct TestPath {
  int64_t restart;
  std::vector<uint32_t> edges;
  uint64_t count;
};
const std::vector<TestPath>& TestLoopRuns();
// ... and the edge and block counts they give.
const std::vector<uint64_t>& TestLoopEdgeCounts();   // 3 3 8 3 4 4 4 8 3
const std::vector<uint64_t>& TestLoopBlockCounts();  // 3 3 3 11 8 4 8 3

// The path extension the plugin would record for `f` (back edges cut, no
// cut blocks), attached to f; returns it.
PathInfo AttachTestPathInfo(Function* f, uint32_t storage, uint64_t base,
                            uint32_t flags);

// The number of the path taking exactly these CFG edges (a path starting
// after a back edge names the back edge's target as `restart_block`,
// otherwise -1); a gtest failure if there is none.
uint64_t TestPathNumber(const Function& f, const PathInfo& info,
                        int64_t restart_block,
                        const std::vector<uint32_t>& cfg_edges);

}  // namespace ballarus

#endif  // BALLARUS_CORE_TEST_PROFILES_H_
