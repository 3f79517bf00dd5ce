// report_model_test.cc — BuildReport on a profile written from hand-made
// TUs: files, functions, blocks, edges and their kinds, line counts,
// conservation problems, executed paths and their order, the per-file
// line index, program totals, and DecodePathReport.
#include "reconstruct/report_model.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/test_profiles.h"
#include "gtest/gtest.h"
#include "reconstruct/loaded_profile.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace report {
namespace {

// m.c (naive): diamond() on lines 3-8 with a line of inc.h, called 10
// times, 7 true; bad() whose counts do not balance.
TestRecord NaiveTu() {
  TestRecord r;
  r.tu.source = "m.c";
  r.tu.cwd = "/src";
  r.tu.flags = BALLARUS_META_F_NAIVE;
  r.tu.files = {"m.c", "inc.h"};
  Function d = TestFunction("diamond", 3, 6,
                            {{0, 2, kEdgeFallthru},
                             {2, 3, kEdgeTrue},
                             {2, 4, kEdgeFalse | kEdgeCritical},
                             {3, 5, kEdgeFallthru},
                             {4, 5, kEdgeFallthru},
                             {5, 1, kEdgeFallthru}},
                            0);
  d.blocks[2].lines = {{0, 3}, {0, 4}};
  d.blocks[3].lines = {{1, 7}};
  d.blocks[4].lines = {{0, 6}};
  d.blocks[5].lines = {{0, 8}};
  Function bad = TestFunction(
      "bad", 20, 3, {{0, 2, kEdgeFallthru}, {2, 1, kEdgeFallthru}}, 6);
  r.tu.functions = {bad, d};
  r.counters = {10, 7, 3, 7, 3, 10, 5, 4};
  return r;
}

// p.c (path only): loop(4), loop(4), loop(0) (core/test_profiles.h),
// blocks 2..7 on lines 12..17.

class ReportModel : public ::testing::Test {
 protected:
  void SetUp() override {
    TestRecord p;
    p.tu.source = "p.c";
    p.tu.cwd = "/src";
    p.tu.flags = BALLARUS_META_F_PATH;
    p.tu.files = {"p.c"};
    Function f = TestLoop("loop");
    info_ = AttachTestPathInfo(&f, PathInfo::kDense, 0,
                               kPathFlagEarlyTermination);
    p.counters.assign(info_.n_paths + 1, 0);
    for (const TestPath& lp : TestLoopRuns())
      p.counters[TestPathNumber(f, info_, lp.restart, lp.edges)] = lp.count;
    p.tu.functions = {f};
    loop_ = f;
    const std::string path =
        WriteTestProfile("report.profile", {NaiveTu(), p}, 3);
    std::string err;
    ASSERT_TRUE(LoadProfile(path, &loaded_, &err)) << err;
    r_ = BuildReport(loaded_);
  }

  uint64_t Number(size_t i) const {
    return TestPathNumber(loop_, info_, TestLoopRuns()[i].restart,
                          TestLoopRuns()[i].edges);
  }

  PathInfo info_;
  Function loop_;
  LoadedProfile loaded_;
  Report r_;
};

TEST_F(ReportModel, FilesFunctionsBlocksEdges) {
  EXPECT_EQ(r_.runs, 3u);
  EXPECT_TRUE(r_.has_paths);
  EXPECT_EQ(r_.files, (std::vector<std::string>{"inc.h", "m.c", "p.c"}));
  ASSERT_EQ(r_.tus.size(), 2u);
  ASSERT_EQ(r_.functions.size(), 3u);
  // By file, then line.
  EXPECT_EQ(r_.functions[0].name, "diamond");
  EXPECT_EQ(r_.functions[1].name, "bad");
  EXPECT_EQ(r_.functions[2].name, "loop");

  const FunctionReport& d = r_.functions[0];
  EXPECT_EQ(d.display_name(), "diamond()");
  EXPECT_EQ(r_.file_name(d.file), "m.c");
  EXPECT_EQ(d.line, 3u);
  EXPECT_EQ(r_.tus[d.tus.at(0)].source, "m.c");
  EXPECT_TRUE(d.edge_counters);
  EXPECT_FALSE(d.edges_from_paths);
  EXPECT_EQ(d.execution_count, Count(10));
  EXPECT_EQ(d.exit_to_entry, Count(10));
  ASSERT_EQ(d.blocks.size(), 6u);
  EXPECT_EQ(d.blocks[3].count, Count(7));
  EXPECT_EQ(d.blocks[3].lines, (std::vector<SourceLine>{{0, 7}}));  // inc.h
  EXPECT_EQ(d.blocks[2].lines, (std::vector<SourceLine>{{1, 3}, {1, 4}}));
  ASSERT_EQ(d.edges.size(), 6u);
  EXPECT_EQ(d.edges[1].kind, EdgeKind::kTrue);
  EXPECT_EQ(d.edges[2].kind, EdgeKind::kFalse);
  EXPECT_EQ(d.edges[5].kind, EdgeKind::kFallthrough);
  EXPECT_EQ(d.edges[2].count, Count(3));
  EXPECT_TRUE(d.edges[2].counted);
  EXPECT_TRUE(d.edges[2].has_counter);
  EXPECT_FALSE(d.edges[2].in_path_dag);
  EXPECT_EQ(EdgeFlagNames(d.edges[2].flags),
            (std::vector<std::string>{"false", "critical"}));
  EXPECT_EQ(d.arcs, 6u);
  EXPECT_EQ(d.counters, 6u);
  EXPECT_EQ(d.increments, 40u);
  EXPECT_TRUE(d.flow_issues.empty());
  EXPECT_FALSE(d.paths);
  bool line7 = false;
  for (const LineCount& l : d.lines)
    if (l.where == SourceLine{0, 7}) {
      line7 = true;
      EXPECT_EQ(l.count, 7);
    }
  EXPECT_TRUE(line7);

  // bad(): 5 in, 4 out of block 2; and EXIT, whose out-edge EXIT->ENTRY
  // was solved from ENTRY (5), got 4.
  const FunctionReport& b = r_.functions[1];
  ASSERT_EQ(b.flow_issues.size(), 2u);
  for (const FlowIssue& is : b.flow_issues) {
    EXPECT_EQ(is.kind, FlowIssue::kImbalance);
    EXPECT_EQ(is.in_sum + is.out_sum, 9u);
  }
  EXPECT_EQ(b.flow_issues[0].block, 1u);
  EXPECT_EQ(b.flow_issues[1].block, 2u);
}

TEST_F(ReportModel, PathsInReportOrder) {
  const FunctionReport& f = r_.functions[2];
  EXPECT_FALSE(f.edge_counters);
  EXPECT_TRUE(f.edges_from_paths);
  ASSERT_TRUE(f.paths);
  const PathProfileReport& pp = *f.paths;
  EXPECT_EQ(pp.n_paths, info_.n_paths);
  EXPECT_EQ(pp.storage, uint32_t{PathInfo::kDense});
  EXPECT_TRUE(pp.early_termination);
  EXPECT_EQ(pp.cut_edges, std::vector<uint32_t>{7});
  EXPECT_EQ(pp.total, 11u);
  EXPECT_EQ(pp.out_of_range, 0u);
  ASSERT_EQ(pp.executed.size(), 5u);
  // Count descending, ties by ascending number.
  EXPECT_EQ(pp.executed[0].number, Number(1));
  EXPECT_EQ(pp.executed[0].count, 4u);
  std::vector<uint64_t> twos = {Number(0), Number(2), Number(3)};
  std::sort(twos.begin(), twos.end());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(pp.executed[1 + i].number, twos[i]);
    EXPECT_EQ(pp.executed[1 + i].count, 2u);
  }
  EXPECT_EQ(pp.executed[4].number, Number(4));

  const PathReport& odd = pp.executed[0];  // ^3 4 5 6 -> back edge to 3
  EXPECT_EQ(odd.start, PathReport::kAfterBackEdge);
  EXPECT_EQ(odd.blocks, (std::vector<uint32_t>{3, 4, 5, 6}));
  EXPECT_EQ(odd.end, PathReport::kBackEdge);
  EXPECT_EQ(odd.target, 3u);
  EXPECT_EQ(odd.lines,
            (std::vector<SourceLine>{{2, 13}, {2, 14}, {2, 15}, {2, 16}}));
  const PathReport& none = pp.executed[4];  // ENTRY 2 3 7 EXIT
  EXPECT_EQ(none.start, PathReport::kFromEntry);
  EXPECT_EQ(none.blocks, (std::vector<uint32_t>{0, 2, 3, 7, 1}));
  EXPECT_EQ(none.end, PathReport::kReturn);

  // Edge counts derived from the paths.
  const std::vector<uint64_t>& derived = TestLoopEdgeCounts();
  for (size_t e = 0; e < f.edges.size(); ++e) {
    EXPECT_TRUE(f.edges[e].in_path_dag);
    EXPECT_EQ(f.edges[e].path_derived, derived[e]);
    EXPECT_EQ(f.edges[e].count, Count(derived[e]));
    EXPECT_TRUE(f.edges[e].counted);
    EXPECT_FALSE(f.edges[e].has_counter);
  }
}

TEST_F(ReportModel, DecodeAnyPath) {
  const FunctionReport& f = r_.functions[2];
  // A path that never ran: even i on the first iteration, then return.
  std::vector<uint64_t> ran;
  for (size_t i = 0; i < TestLoopRuns().size(); ++i) ran.push_back(Number(i));
  uint64_t never = 0;
  while (std::count(ran.begin(), ran.end(), never)) ++never;
  ASSERT_LT(never, f.paths->n_paths);
  PathReport p;
  ASSERT_TRUE(DecodePathReport(f, never, &p));
  EXPECT_EQ(p.number, never);
  EXPECT_EQ(p.count, 0u);
  EXPECT_FALSE(p.blocks.empty());
  ASSERT_TRUE(DecodePathReport(f, Number(1), &p));
  EXPECT_EQ(p.count, 4u);
  EXPECT_EQ(p.blocks, (std::vector<uint32_t>{3, 4, 5, 6}));
  EXPECT_FALSE(DecodePathReport(f, f.paths->n_paths, &p));
  EXPECT_FALSE(DecodePathReport(r_.functions[0], 0, &p));  // no paths
}

TEST_F(ReportModel, FilesIndexLinesAndBlocks) {
  ASSERT_EQ(r_.by_file.size(), 3u);
  const FileReport& inc = r_.by_file[0];
  EXPECT_TRUE(inc.functions.empty());
  ASSERT_EQ(inc.lines.size(), 1u);
  EXPECT_EQ(inc.lines[0].line, 7u);
  EXPECT_EQ(inc.lines[0].count, std::optional<int64_t>(7));
  ASSERT_EQ(inc.lines[0].n_blocks, 1u);
  const BlockRef& ref = inc.blocks[inc.lines[0].first_block];
  EXPECT_EQ(ref.function, 0u);
  EXPECT_EQ(ref.block, 3u);

  const FileReport& m = r_.by_file[1];
  EXPECT_EQ(m.functions, (std::vector<uint32_t>{0, 1}));
  std::vector<uint32_t> lines;
  for (const FileLine& l : m.lines) lines.push_back(l.line);
  EXPECT_EQ(lines, (std::vector<uint32_t>{3, 4, 6, 8, 22}));
  EXPECT_EQ(m.lines[0].count, std::optional<int64_t>(10));
  EXPECT_EQ(m.lines[2].count, std::optional<int64_t>(3));
  for (const FileLine& l : m.lines) EXPECT_EQ(l.n_blocks, 1u);
  EXPECT_EQ(m.blocks[m.lines[4].first_block].function, 1u);  // bad()

  const FileReport& p = r_.by_file[2];
  EXPECT_EQ(p.functions, (std::vector<uint32_t>{2}));
  ASSERT_EQ(p.lines.size(), 6u);
  EXPECT_EQ(p.lines[1].line, 13u);
  EXPECT_EQ(p.lines[1].count, std::optional<int64_t>(11));
}

TEST_F(ReportModel, Totals) {
  const Totals& t = r_.totals;
  EXPECT_EQ(t.blocks, 6u + 3u + 8u);
  EXPECT_EQ(t.edges, 6u + 2u + 9u);
  EXPECT_EQ(t.arcs, 6u + 2u + 9u);
  EXPECT_EQ(t.counters, 6u + 2u);
  EXPECT_EQ(t.increments, 40u + 9u);
  EXPECT_EQ(t.path_functions, 1u);
  EXPECT_EQ(t.path_dense_slots, info_.n_paths + 1);
  EXPECT_EQ(t.path_hashed_functions, 0u);
  EXPECT_EQ(t.path_hashed_entries, 0u);
  EXPECT_EQ(t.path_increments, 11u);
  EXPECT_EQ(t.distinct_paths, 5u);
}

TEST(EdgeKinds, NamesAndPrecedence) {
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeEh | kEdgeFallthru)), "eh");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeAbnormal | kEdgeIgnored)),
               "abnormal");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeFake)), "fake");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeTrue | kEdgeSwitch)), "true");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeSwitch)), "switch");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeFallthru)), "fallthrough");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeSplit)), "jump");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeReentry)), "reentry");
  EXPECT_STREQ(EdgeKindName(KindOfEdge(kEdgeFake | kEdgeReentry)), "fake");
  EXPECT_EQ(EdgeFlagNames(kEdgeFallthru | kEdgeIgnored | kEdgeSplit),
            (std::vector<std::string>{"fallthru", "ignored", "split"}));
  EXPECT_EQ(EdgeFlagNames(kEdgeFake | kEdgeReentry),
            (std::vector<std::string>{"fake", "reentry"}));
  EXPECT_STREQ(PathStorageName(PathInfo::kHashed), "hashed");
  EXPECT_STREQ(PathStorageName(PathInfo::kDense), "dense");
}

// f.c (naive), hand-derived:
//   10 int spawn() {            block 2 {10, 11}: 3 entries from ENTRY
//   11   pid = fork();          (fork at its end, fake edge to EXIT)
//   12   return pid;            block 3 {12}: 6 times, 3 of them in the
//   13 }                        children, through ballarus' own re-entry
//                               edge ENTRY->2 (counted: 3)
// and thrower(), whose landing pad (block 4, line 22) is reached only by
// the throw arc of the call in block 3 (line 21), never taken:
//   20 void thrower(int n) {    block 2 {20}: 5, branches to 3 (0 times)
//   21   if (n < 0) may_throw();   and to 5 (5 times); block 3 {21}: the
//   22   catch (...) { ... }       call, EH edge 3->4, fake 3->EXIT
//   23 }                        block 5 {23}: 5
TestRecord FlagsTu() {
  TestRecord r;
  r.tu.source = "f.c";
  r.tu.cwd = "/src";
  r.tu.flags = BALLARUS_META_F_NAIVE;
  r.tu.files = {"f.c"};
  Function spawn;
  spawn.name = "spawn";
  spawn.line = 10;
  spawn.end_line = 13;
  spawn.blocks.resize(4);
  spawn.blocks[2].lines = {{0, 10}, {0, 11}};
  spawn.blocks[3].lines = {{0, 12}};
  spawn.edges = {{0, 2, kEdgeFallthru, 0},
                 {0, 2, kEdgeReentry, 1},
                 {2, 3, kEdgeFallthru, 2},
                 {2, 1, kEdgeFake, kNoCounter},
                 {3, 1, kEdgeFallthru, 3}};
  Function thrower;
  thrower.name = "thrower";
  thrower.line = 20;
  thrower.end_line = 23;
  thrower.blocks.resize(6);
  thrower.blocks[2].lines = {{0, 20}, {0, 21}};
  thrower.blocks[3].lines = {{0, 21}};
  thrower.blocks[4].lines = {{0, 22}};
  thrower.blocks[5].lines = {{0, 23}};
  thrower.edges = {{0, 2, kEdgeFallthru, 4},
                   {2, 3, kEdgeTrue, 5},
                   {2, 5, kEdgeFalse, 6},
                   {3, 5, kEdgeFallthru, 7},
                   {3, 4, kEdgeEh, 8},
                   {3, 1, kEdgeFake, kNoCounter},
                   {4, 5, kEdgeFallthru, 9},
                   {5, 1, kEdgeFallthru, 10}};
  r.tu.functions = {spawn, thrower};
  r.counters = {3, 3, 6, 6, 5, 0, 5, 0, 0, 0, 5};
  return r;
}

TEST(ReportModelFlags, ReentryEdgesAndLineFlags) {
  const std::string path = WriteTestProfile("flags.profile", {FlagsTu()});
  LoadedProfile loaded;
  std::string err;
  ASSERT_TRUE(LoadProfile(path, &loaded, &err)) << err;
  const Report r = BuildReport(loaded);
  const FunctionReport* spawn = nullptr;
  const FunctionReport* thrower = nullptr;
  for (const FunctionReport& f : r.functions) {
    if (f.name == "spawn") spawn = &f;
    if (f.name == "thrower") thrower = &f;
  }
  ASSERT_NE(spawn, nullptr);
  ASSERT_NE(thrower, nullptr);
  // A circulation with the re-entries; 3 activations started, as gcov
  // counts them (ENTRY's count is 6).
  EXPECT_TRUE(spawn->flow_issues.empty());
  EXPECT_EQ(spawn->blocks[kEntryBlock].count, Count(6));
  EXPECT_EQ(spawn->execution_count, Count(3));
  EXPECT_EQ(spawn->edges[1].kind, EdgeKind::kReentry);
  EXPECT_EQ(spawn->edges[3].count, Count(0));  // the fake exit: fork returned
  // gcov's lines leave the re-entry edge out: 10 and 11 count the 3
  // entries (11 is the run's last line, 10 its raw block count), 12 all 6.
  std::vector<std::pair<uint32_t, int64_t>> lines;
  for (const LineCount& l : spawn->lines) lines.push_back({l.where.line, l.count});
  EXPECT_EQ(lines, (std::vector<std::pair<uint32_t, int64_t>>{
                       {10, 3}, {11, 3}, {12, 6}}));
  // thrower: 21 ran 5 times with a block that never ran ("5*"); the
  // landing pad's line 22 never ran and is exceptional ("=====").
  const FileReport& file = r.by_file[0];
  auto at = [&](uint32_t line) -> const FileLine* {
    for (const FileLine& l : file.lines)
      if (l.line == line) return &l;
    return nullptr;
  };
  ASSERT_NE(at(21), nullptr);
  EXPECT_EQ(at(21)->count, 5);
  EXPECT_TRUE(at(21)->unexecuted_block);
  EXPECT_FALSE(at(21)->exceptional);
  ASSERT_NE(at(22), nullptr);
  EXPECT_EQ(at(22)->count, 0);
  EXPECT_TRUE(at(22)->exceptional);
  EXPECT_FALSE(at(22)->unexecuted_block);
  ASSERT_NE(at(23), nullptr);
  EXPECT_FALSE(at(23)->unexecuted_block);
  EXPECT_FALSE(at(23)->exceptional);
  ASSERT_NE(at(12), nullptr);
  EXPECT_EQ(at(12)->count, 6);
}

}  // namespace
}  // namespace report
}  // namespace ballarus
