// loaded_profile_test.cc — LoadProfile on profiles written from hand-made
// TUs: COMDAT copies grouped and summed (edge and path counts), a group's
// flow taken as the sum of its copies' solutions exactly when that equals
// solving the summed counts (and solved again otherwise), gcov line counts
// per TU summed over TUs, functions in their documented order.
#include "reconstruct/loaded_profile.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/flow.h"
#include "core/test_profiles.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

// loop(n) (core/test_profiles.h) as a COMDAT function of inl.h, lines
// 12..17.  Edge mode: counters on the chords 3->4, 4->5, 7->1 only.
Function Loop(bool edge_counters, uint32_t flags = kFunctionComdat) {
  Function f = TestLoop("_Z4loopv");
  f.flags = flags;
  f.file = 1;
  for (Block& b : f.blocks)
    for (Location& l : b.lines) l.file = 1;
  if (edge_counters) {
    f.edges[2].counter = 0;
    f.edges[4].counter = 1;
    f.edges[8].counter = 2;
  }
  return f;
}

// A static function of the TU: one block, counter 3.
Function Helper() {
  Function h = TestFunction("helper", 30, 3,
                            {{0, 2, kEdgeFallthru}, {2, 1, kEdgeFallthru}},
                            -1);
  h.edges[0].counter = 3;
  return h;
}

TestRecord EdgeTu(const std::string& source, std::vector<uint64_t> counters) {
  TestRecord r;
  r.tu.source = source;
  r.tu.cwd = "/src";
  r.tu.flags = BALLARUS_META_F_EDGE;
  r.tu.files = {source, "inl.h"};
  r.tu.functions = {Loop(true), Helper()};
  r.counters = std::move(counters);
  return r;
}

// The invariant LoadProfile keeps however a group's flow was obtained.
void ExpectSolved(const LoadedFunction& lf) {
  const FlowResult again = SolveFlow(*lf.function, lf.known);
  EXPECT_EQ(lf.flow.edges, again.edges) << lf.function->name;
  EXPECT_EQ(lf.flow.blocks, again.blocks) << lf.function->name;
  EXPECT_EQ(lf.flow.virtual_edge, again.virtual_edge) << lf.function->name;
  EXPECT_EQ(lf.flow.negatives.size(), again.negatives.size())
      << lf.function->name;
}

const LoadedFunction& Find(const LoadedProfile& p, const std::string& name,
                           size_t nth = 0) {
  for (const LoadedFunction& lf : p.functions)
    if (lf.function->name == name && nth-- == 0) return lf;
  ADD_FAILURE() << "no " << name;
  return p.functions.front();
}

int64_t FileLine(const LoadedProfile& p, const std::string& file,
                 uint32_t line) {
  for (const LoadedProfile::FileLineCount& l : p.file_lines)
    if (p.files[l.file] == file && l.line == line) return l.count;
  return -1;
}

std::vector<Count> Counts(const std::vector<uint64_t>& v) {
  return std::vector<Count>(v.begin(), v.end());
}

TEST(LoadProfile, ComdatCopiesSumTheirSolutions) {
  // b.cc ran loop(4), loop(4), loop(0); a.cc ran loop(2) once.
  const std::string path = WriteTestProfile(
      "comdat.profile",
      {EdgeTu("b.cc", {8, 4, 3, 5}), EdgeTu("a.cc", {2, 1, 1, 7})});
  LoadedProfile p;
  std::string err;
  ASSERT_TRUE(LoadProfile(path, &p, &err)) << err;
  ASSERT_EQ(p.functions.size(), 3u);  // one loop, two helpers
  const LoadedFunction& loop = Find(p, "_Z4loopv");
  ASSERT_EQ(loop.tus.size(), 2u);
  EXPECT_EQ(p.tus()[loop.tus[0]].tu.source, "a.cc");  // sorted by source
  EXPECT_EQ(p.tus()[loop.tus[1]].tu.source, "b.cc");
  EXPECT_EQ(loop.flow.edges,
            Counts({3 + 1, 3 + 1, 8 + 2, 3 + 1, 4 + 1, 4 + 1, 4 + 1, 8 + 2,
                    3 + 1}));
  EXPECT_EQ(loop.flow.blocks, Counts({4, 4, 4, 14, 10, 5, 10, 4}));
  EXPECT_TRUE(loop.flow.negatives.empty());
  ExpectSolved(loop);
  for (const LoadedFunction& lf : p.functions) ExpectSolved(lf);
  // Every copy's counts moved into the groups.
  for (const LoadedTu& lt : p.tus()) EXPECT_TRUE(lt.copies.empty());

  // Helpers stay apart (static functions of two TUs), a.cc's first.
  EXPECT_EQ(Find(p, "helper", 0).tu->source, "a.cc");
  EXPECT_EQ(Find(p, "helper", 0).flow.blocks[2], Count(7));
  EXPECT_EQ(Find(p, "helper", 1).tu->source, "b.cc");
  EXPECT_EQ(Find(p, "helper", 1).flow.blocks[2], Count(5));
  // Order: by file, then line: a.cc's helper, b.cc's helper, inl.h's loop.
  EXPECT_EQ(p.functions[2].function->name, "_Z4loopv");

  // Files: every TU's file table, sorted and unique; lines summed over TUs.
  EXPECT_EQ(p.files, (std::vector<std::string>{"a.cc", "b.cc", "inl.h"}));
  EXPECT_EQ(FileLine(p, "inl.h", 13), 14);  // the loop test, block 3
  EXPECT_EQ(FileLine(p, "inl.h", 15), 5);   // the odd work, block 5
  EXPECT_EQ(FileLine(p, "a.cc", 32), 7);
  EXPECT_EQ(FileLine(p, "b.cc", 32), 5);
  for (size_t i = 1; i < p.file_lines.size(); ++i)
    EXPECT_LT(std::make_pair(p.file_lines[i - 1].file,
                             p.file_lines[i - 1].line),
              std::make_pair(p.file_lines[i].file, p.file_lines[i].line));
  // The function's own line counts.
  bool found = false;
  for (const GcovLine& l : loop.lines)
    if (l.line == 13) {
      found = true;
      EXPECT_EQ(l.count, 14);
    }
  EXPECT_TRUE(found);
}

TEST(LoadProfile, ComdatGroupSolvedAgainWhenSumsAreNotLinear) {
  // a.cc's copy is inconsistent: 4->5 counted 5 times out of 1 entry into
  // block 4, so its 4->6 would be negative and stays unknown; the summed
  // counts (4->6 = 9 - 9 = 0) solve completely.  Summing the solutions
  // would leave 4->6 unknown: LoadProfile must solve the group again.
  const std::string path = WriteTestProfile(
      "negative.profile",
      {EdgeTu("b.cc", {8, 4, 3, 0}), EdgeTu("a.cc", {1, 5, 3, 0})});
  LoadedProfile p;
  std::string err;
  ASSERT_TRUE(LoadProfile(path, &p, &err)) << err;
  const LoadedFunction& loop = Find(p, "_Z4loopv");
  ASSERT_EQ(loop.tus.size(), 2u);
  ExpectSolved(loop);
  EXPECT_EQ(loop.flow.edges[5], Count(0));
  EXPECT_TRUE(loop.flow.negatives.empty());

  // Both copies inconsistent alike: the group's negative derivation must
  // be reported as SolveFlow reports it, which no sum of solutions does.
  const std::string both = WriteTestProfile(
      "negatives.profile",
      {EdgeTu("b.cc", {1, 5, 3, 0}), EdgeTu("a.cc", {1, 5, 3, 0})});
  LoadedProfile n;
  ASSERT_TRUE(LoadProfile(both, &n, &err)) << err;
  ASSERT_EQ(Find(n, "_Z4loopv").tus.size(), 2u);
  EXPECT_FALSE(Find(n, "_Z4loopv").flow.negatives.empty());
  ExpectSolved(Find(n, "_Z4loopv"));

  // Counts that wrap modulo 2^64 when summed: solved again too.
  const uint64_t big = UINT64_MAX - 1;
  const std::string path2 = WriteTestProfile(
      "wrap.profile",
      {EdgeTu("b.cc", {big, big / 2, 3, 0}), EdgeTu("a.cc", {8, 4, 3, 0})});
  LoadedProfile q;
  ASSERT_TRUE(LoadProfile(path2, &q, &err)) << err;
  const LoadedFunction& wrapped = Find(q, "_Z4loopv");
  ASSERT_EQ(wrapped.tus.size(), 2u);
  EXPECT_EQ(wrapped.known[2], Count(uint64_t(big + 8)));  // modulo 2^64
  ExpectSolved(wrapped);
}

TEST(LoadProfile, ComdatCopiesKnowingOtherEdgesSolvedAgain) {
  // One copy in a path-only TU (edge counts from its paths), one in an
  // edge,path TU whose copy has no counter at all: the group knows only
  // what both know (nothing), and is solved from that.
  TestRecord a, b;
  for (TestRecord* r : {&a, &b}) {
    r->tu.cwd = "/src";
    r->tu.files = {"x", "inl.h"};
    Function f = Loop(false);
    const PathInfo info = AttachTestPathInfo(&f, PathInfo::kDense, 0, 0);
    r->tu.functions = {f};
    r->counters.assign(info.n_paths + 1, 0);
    r->counters[TestPathNumber(f, info, -1, {0, 1, 3, 8})] = 2;
  }
  a.tu.source = "a.cc";
  a.tu.flags = BALLARUS_META_F_PATH;
  b.tu.source = "b.cc";
  b.tu.flags = BALLARUS_META_F_EDGE | BALLARUS_META_F_PATH;
  const std::string path = WriteTestProfile("mixed.profile", {a, b});
  LoadedProfile p;
  std::string err;
  ASSERT_TRUE(LoadProfile(path, &p, &err)) << err;
  ASSERT_EQ(p.functions.size(), 1u);
  const LoadedFunction& loop = p.functions[0];
  ASSERT_EQ(loop.tus.size(), 2u);
  ExpectSolved(loop);
  EXPECT_EQ(loop.known, std::vector<Count>(9));
  EXPECT_EQ(loop.flow.edges[0], std::nullopt);
  // Path counts are summed by number whatever the edge counts did.
  ASSERT_TRUE(loop.paths);
  EXPECT_EQ(loop.paths->total, 4u);
  EXPECT_EQ(loop.paths->counts.size(), 1u);
  EXPECT_EQ(loop.paths->decoded.size(), 1u);
  EXPECT_EQ(loop.paths->derived[8], 4u);
  EXPECT_TRUE(p.has_paths());
}

TEST(LoadProfile, ComdatPathCopiesSumByNumber) {
  TestRecord a, b;
  uint64_t shared = 0, only_b = 0;
  for (TestRecord* r : {&a, &b}) {
    r->tu.cwd = "/src";
    r->tu.flags = BALLARUS_META_F_PATH;
    r->tu.files = {"x", "inl.h"};
    Function f = Loop(false);
    const PathInfo info = AttachTestPathInfo(
        &f, PathInfo::kDense, 0, r == &a ? kPathFlagEarlyTermination : 0);
    r->tu.functions = {f};
    r->counters.assign(info.n_paths + 1, 0);
    shared = TestPathNumber(f, info, -1, {0, 1, 3, 8});
    only_b = TestPathNumber(f, info, 3, {3, 8});
  }
  a.tu.source = "a.cc";
  b.tu.source = "b.cc";
  a.counters[shared] = 3;
  b.counters[shared] = 2;
  b.counters[only_b] = 1;
  const std::string path = WriteTestProfile("pathsum.profile", {a, b});
  LoadedProfile p;
  std::string err;
  ASSERT_TRUE(LoadProfile(path, &p, &err)) << err;
  ASSERT_EQ(p.functions.size(), 1u);
  const LoadedFunction& loop = p.functions[0];
  ASSERT_TRUE(loop.paths);
  EXPECT_TRUE(loop.edges_from_paths());
  EXPECT_FALSE(loop.paths->early_termination());  // AND over the copies
  EXPECT_EQ(loop.paths->counts,
            (std::map<uint64_t, uint64_t>{{shared, 5}, {only_b, 1}}));
  EXPECT_EQ(loop.paths->decoded.size(), 2u);
  EXPECT_EQ(loop.paths->total, 6u);
  EXPECT_EQ(loop.paths->derived[8], 6u);  // every path returns
  EXPECT_EQ(loop.flow.edges[8], Count(6));
  EXPECT_EQ(loop.flow.edges[0], Count(5));
  ExpectSolved(loop);
}

TEST(LoadProfile, ErrorsAreReadProfiles) {
  LoadedProfile p;
  std::string err;
  EXPECT_FALSE(LoadProfile("/nonexistent/x.profile", &p, &err));
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(p.path, "/nonexistent/x.profile");
}

}  // namespace
}  // namespace ballarus
