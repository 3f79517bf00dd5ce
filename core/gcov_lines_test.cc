// gcov_lines_test.cc — gcov's line-count semantics on hand-made functions,
// with expectations derived by hand from gcc/gcov.cc's algorithm.
#include "core/gcov_lines.h"

#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

using Opt = std::optional<uint64_t>;

struct Solved {
  Function f;
  std::vector<Opt> edges, blocks;
};

// Builds a function from blocks' lines (file 0 unless a Location says
// otherwise) and edges with counts; block counts = in-flow (ENTRY: out-flow).
Solved Make(std::vector<std::vector<Location>> lines,
            std::vector<std::pair<Edge, uint64_t>> edges) {
  Solved s;
  s.f.name = "f";
  s.f.line = 1;
  s.f.end_line = 100;
  for (auto& l : lines) s.f.blocks.push_back(Block{l});
  s.blocks.assign(lines.size(), Opt(0));
  for (auto& [e, c] : edges) {
    s.f.edges.push_back(e);
    s.edges.push_back(Opt(c));
    if (e.flags & kEdgeIgnored) {
      s.edges.back() = std::nullopt;
      continue;
    }
    if (e.src == kEntryBlock) *s.blocks[kEntryBlock] += c;
    *s.blocks[e.dst] += c;
  }
  return s;
}

std::vector<GcovLine> Lines(const std::vector<const Solved*>& fs) {
  std::vector<GcovFunctionInput> in;
  for (const Solved* s : fs) in.push_back({&s->f, &s->edges, &s->blocks});
  return GcovLineCounts(in);
}

const GcovLine* Find(const std::vector<GcovLine>& v, uint32_t line,
                     uint32_t file = 0, int32_t fn = -1) {
  for (const GcovLine& g : v)
    if (g.line == line && g.file == file && g.function == fn) return &g;
  return nullptr;
}

Location L(uint32_t line, uint32_t file = 0) { return Location{file, line}; }
Edge E(uint32_t s, uint32_t d, uint32_t flags = kEdgeFallthru) {
  return Edge{s, d, flags, kNoCounter};
}

// 1 int sum(int n) {
// 2   int s = 0;
// 3   for (int i = 0; i < n; i++) s += i;
// 4   return s;
// 5 }
// Blocks: 2 {1,2,3} init, 3 {3} body+increment, 4 {3} condition,
// 5 {4} return, 6 {5} closing brace.
Solved SumLoop(uint64_t n) {
  return Make({{}, {}, {L(1), L(2), L(3)}, {L(3)}, {L(3)}, {L(4)}, {L(5)}},
              {{E(0, 2), 1},
               {E(2, 4), 1},
               {E(3, 4), n},
               {E(4, 3, kEdgeTrue), n},
               {E(4, 5, kEdgeFalse), 1},
               {E(5, 6), 1},
               {E(6, 1), 1}});
}

TEST(GcovLines, LoopOnOneLine) {
  const Solved s = SumLoop(5);
  const std::vector<GcovLine> v = Lines({&s});
  ASSERT_EQ(v.size(), 5u);
  // Line 3: one entry from ENTRY into block 2, plus the circuit 3->4->3
  // taken 5 times; not the raw block sum 1 + 5 + 6.
  EXPECT_EQ(Find(v, 3)->count, 6);
  EXPECT_EQ(Find(v, 1)->count, 1);
  EXPECT_EQ(Find(v, 2)->count, 1);
  EXPECT_EQ(Find(v, 4)->count, 1);
  EXPECT_EQ(Find(v, 5)->count, 1);
  for (const GcovLine& g : v) EXPECT_FALSE(g.unexecuted_block) << g.line;
  // Sorted by line.
  for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1].line, v[i].line);
}

TEST(GcovLines, LoopNeverIterated) {
  const Solved s = SumLoop(0);
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 3)->count, 1);
  EXPECT_TRUE(Find(v, 3)->unexecuted_block);  // block 3 ran 0 times
  EXPECT_FALSE(Find(v, 4)->unexecuted_block);
}

TEST(GcovLines, NestedLoopsOnOneLine) {
  // 4 x = 0;
  // 5 while (a()) while (b()) c();       blocks 3,4,5,6
  // 6 done();  7 }
  // Outer loop 3 times, inner 12 times in all.
  const Solved s = Make(
      {{}, {}, {L(4)}, {L(5)}, {L(5)}, {L(5)}, {L(5)}, {L(6)}, {L(7)}},
      {{E(0, 2), 1},
       {E(2, 3), 1},
       {E(3, 4, kEdgeTrue), 3},
       {E(3, 7, kEdgeFalse), 1},
       {E(4, 5, kEdgeTrue), 12},
       {E(4, 6, kEdgeFalse), 3},
       {E(5, 4), 12},
       {E(6, 3), 3},
       {E(7, 8), 1},
       {E(8, 1), 1}});
  const std::vector<GcovLine> v = Lines({&s});
  // 1 entry + circuit 3->4->6->3 (3) + circuit 4->5->4 (12).
  EXPECT_EQ(Find(v, 5)->count, 16);
  EXPECT_EQ(Find(v, 4)->count, 1);
  EXPECT_EQ(Find(v, 6)->count, 1);
}

TEST(GcovLines, HighestBlockIsLeftOutOfLineBlocks) {
  // Block 4 (the highest index) shares line 3 with block 2 but is reached
  // from block 3 on line 4.  gcov skips the highest block when collecting a
  // line's blocks (its EXIT test predates EXIT being block 1), so line 3
  // counts only the entry into block 2: 1, not 2.
  const Solved s = Make({{}, {}, {L(3)}, {L(4)}, {L(3)}},
                        {{E(0, 2), 1}, {E(2, 3), 1}, {E(3, 4), 1}, {E(4, 1), 1}});
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 3)->count, 1);
  EXPECT_EQ(Find(v, 4)->count, 1);
  // When the highest block is alone on its line the raw block count stands.
  const Solved t = Make({{}, {}, {L(3)}, {L(4), L(4)}},
                        {{E(0, 2), 2}, {E(2, 3), 2}, {E(3, 1), 2}});
  const std::vector<GcovLine> w = Lines({&t});
  EXPECT_EQ(Find(w, 4)->count, 4);  // listed twice, summed twice
}

TEST(GcovLines, RawSumForLinesThatAreNotLast) {
  // Block 2 lists lines 7, 3 (sorted to 3, 7): only line 7 gets the block;
  // line 3 keeps the raw sum of block counts: 4 (block 2) + 5 (block 3,
  // which also lists it without it being last).
  const Solved s =
      Make({{}, {}, {L(7), L(3)}, {L(3), L(8)}, {L(9)}},
           {{E(0, 2), 4}, {E(2, 3), 4}, {E(0, 3, kEdgeFake), 1},
            {E(3, 4), 5}, {E(4, 1), 5}});
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 3)->count, 9);
  EXPECT_EQ(Find(v, 7)->count, 4);
  EXPECT_EQ(Find(v, 8)->count, 5);  // preds 2->3 (4) + fake 0->3 (1)
}

TEST(GcovLines, LocationRunsAcrossFiles) {
  // Block 2 = a.c:10, a.h:3, a.c:11 (three runs).  Block 3 = a.h:3, and
  // edges 2->3->1.  Run lasts: a.c:10, a.h:3, a.c:11 all get block 2.
  const Solved s =
      Make({{}, {}, {L(10), L(3, 1), L(11)}, {L(3, 1)}, {L(12)}},
           {{E(0, 2), 2}, {E(2, 3), 2}, {E(3, 4), 2}, {E(4, 1), 2}});
  const std::vector<GcovLine> v = Lines({&s});
  ASSERT_NE(Find(v, 3, 1), nullptr);
  // a.h:3 has blocks 2 and 3: entries from ENTRY only (2->3 is on-line).
  EXPECT_EQ(Find(v, 3, 1)->count, 2);
  EXPECT_EQ(Find(v, 10)->count, 2);
  EXPECT_EQ(Find(v, 11)->count, 2);
  // Sorted by file, then line.
  EXPECT_EQ(v.back().file, 1u);
}

TEST(GcovLines, FunctionsShareHeaderLines) {
  // Two non-group functions whose blocks both carry a.h:3 (inlined code).
  Solved a = Make({{}, {}, {L(3, 1)}, {L(20)}},
                  {{E(0, 2), 2}, {E(2, 3), 2}, {E(3, 1), 2}});
  a.f.line = 19;
  Solved b = Make({{}, {}, {L(3, 1)}, {L(30)}},
                  {{E(0, 2), 5}, {E(2, 3), 5}, {E(3, 1), 5}});
  b.f.line = 29;
  const std::vector<GcovLine> v = Lines({&a, &b});
  EXPECT_EQ(Find(v, 3, 1)->count, 7);
  EXPECT_EQ(Find(v, 20)->count, 2);
  EXPECT_EQ(Find(v, 30)->count, 5);
}

TEST(GcovLines, GroupFunctionsKeepTheirLines) {
  // Two template instances starting on line 1 (lines 1-3): a "group".
  Solved a = Make({{}, {}, {L(1), L(2)}, {L(3)}},
                  {{E(0, 2), 4}, {E(2, 3), 4}, {E(3, 1), 4}});
  Solved b = Make({{}, {}, {L(1), L(2)}, {L(3)}},
                  {{E(0, 2), 6}, {E(2, 3), 6}, {E(3, 1), 6}});
  a.f.end_line = b.f.end_line = 3;
  const std::vector<GcovLine> v = Lines({&a, &b});
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(Find(v, 2, 0, 0)->count, 4);
  EXPECT_EQ(Find(v, 2, 0, 1)->count, 6);
  EXPECT_EQ(Find(v, 3, 0, 1)->count, 6);
  EXPECT_EQ(Find(v, 2), nullptr);
  // Group lines of a line come in input order.
  EXPECT_EQ(v[0].function, 0);
  EXPECT_EQ(v[1].function, 1);
  // An artificial function is dropped and does not make a group.
  b.f.flags = kFunctionArtificial;
  const std::vector<GcovLine> w = Lines({&a, &b});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(Find(w, 2)->count, 4);
}

TEST(GcovLines, ExceptionalBlocksAreNotUnexecuted) {
  // Block 2 (line 2) branches to block 3 (line 3, never taken), which calls
  // a function that may throw: fake edge to EXIT and an EH edge to landing
  // pad 4 (line 5).  Block 4 is reachable only through the throw arc.
  const Solved s = Make({{}, {}, {L(2)}, {L(3)}, {L(5)}, {L(6)}},
                        {{E(0, 2), 3},
                         {E(2, 3, kEdgeTrue), 0},
                         {E(2, 5, kEdgeFalse), 3},
                         {E(3, 5), 0},
                         {E(3, 4, kEdgeEh | kEdgeAbnormal), 0},
                         {E(3, 1, kEdgeFake), 0},
                         {E(4, 5), 0},
                         {E(5, 1), 3}});
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 5)->count, 0);
  EXPECT_FALSE(Find(v, 5)->unexecuted_block);  // exceptional
  EXPECT_TRUE(Find(v, 3)->unexecuted_block);   // reachable normally
  EXPECT_FALSE(Find(v, 2)->unexecuted_block);
  EXPECT_TRUE(Find(v, 5)->exceptional);  // gcov prints =====
  EXPECT_FALSE(Find(v, 3)->exceptional);
  EXPECT_FALSE(Find(v, 2)->exceptional);
  EXPECT_FALSE(Find(v, 6)->exceptional);
}

TEST(GcovLines, LineWithExceptionalAndNormalBlocksIsNotExceptional) {
  // Line 3 holds the throwing call's block 3 (reachable normally, count 2)
  // and the landing pad 4 (exceptional, never run): not exceptional, and
  // the unexecuted landing pad does not make it "3*".
  const Solved s = Make({{}, {}, {L(2)}, {L(3)}, {L(3)}, {L(6)}},
                        {{E(0, 2), 2},
                         {E(2, 3), 2},
                         {E(3, 5), 2},
                         {E(3, 4, kEdgeEh), 0},
                         {E(3, 1, kEdgeFake), 0},
                         {E(4, 5), 0},
                         {E(5, 1), 2}});
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 3)->count, 2);
  EXPECT_FALSE(Find(v, 3)->exceptional);
  EXPECT_FALSE(Find(v, 3)->unexecuted_block);
}

TEST(GcovLines, ReentryEdgesAreNotArcs) {
  // 1 int main() {
  // 2   if (setjmp(env)) ...   block 2 {1, 2}: entered once from ENTRY and
  //                            twice more by longjmp, through ballarus'
  //                            own fake ENTRY->2 edge (kEdgeReentry)
  // 3   work();                block 3 {3}: 3 times
  // gcov sees only the arc 0->2: lines 1 and 2 count 1, line 3 counts 3.
  Solved s = Make({{}, {}, {L(1), L(2)}, {L(3)}},
                  {{E(0, 2), 1},
                   {E(0, 2, kEdgeFake | kEdgeReentry), 2},
                   {E(2, 3), 3},
                   {E(3, 1), 1},
                   {E(3, 1, kEdgeFake), 2}});
  ASSERT_EQ(*s.blocks[2], 3u);
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 1)->count, 1);
  EXPECT_EQ(Find(v, 2)->count, 1);
  EXPECT_EQ(Find(v, 3)->count, 3);
}

TEST(GcovLines, IgnoredEdgesAreNotArcs) {
  // Abnormal edge 3->4 (ignored) from line 4 into block 4 on line 5; gcov
  // never sees it, the fake ENTRY->4 edge brings the count.
  const Solved s = Make({{}, {}, {L(3)}, {L(4)}, {L(5)}, {L(6)}},
                        {{E(0, 2), 1},
                         {E(0, 4, kEdgeFake), 2},
                         {E(2, 3), 1},
                         {E(3, 1, kEdgeFake), 1},
                         {E(3, 4, kEdgeAbnormal | kEdgeIgnored), 9},
                         {E(4, 5), 2},
                         {E(5, 1), 2}});
  const std::vector<GcovLine> v = Lines({&s});
  EXPECT_EQ(Find(v, 5)->count, 2);
}

}  // namespace
}  // namespace ballarus
