// profile_reader_test.cc — ReadProfile on profiles written from hand-made
// TUs: edge counters and path counts (dense and hashed) gathered, paths
// decoded into edge counts, every copy's flow solved, and bad path data
// refused with the record and offset named.
#include "core/profile_reader.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/flow.h"
#include "core/test_profiles.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

// Edge mode: counters on the chords 3->4, 4->5 and 7->1 of a spanning tree
// of the closed graph only; flow derives the other six edges.
Function EdgeModeLoop(const std::string& name, int64_t base) {
  Function f = TestLoop(name);
  f.edges[2].counter = base;
  f.edges[4].counter = base + 1;
  f.edges[8].counter = base + 2;
  return f;
}

TranslationUnit Tu(const std::string& source, uint32_t flags) {
  TranslationUnit tu;
  tu.source = source;
  tu.cwd = "/src";
  tu.compiler = "gcc 12.2.0";
  tu.flags = flags;
  tu.files = {source};
  return tu;
}

std::vector<Count> Known(const std::vector<uint64_t>& v) {
  return std::vector<Count>(v.begin(), v.end());
}

void ExpectLoopSolved(const Function& f, const FunctionCopy& c) {
  EXPECT_EQ(c.flow.edges, Known(TestLoopEdgeCounts())) << f.name;
  EXPECT_EQ(c.flow.blocks, Known(TestLoopBlockCounts())) << f.name;
  EXPECT_EQ(c.flow.virtual_edge, Count(3)) << f.name;
  const FlowResult again = SolveFlow(f, c.known);
  EXPECT_EQ(c.flow.edges, again.edges) << f.name;
  EXPECT_EQ(c.flow.blocks, again.blocks) << f.name;
}

TEST(ReadProfile, EdgeCountersSolvedOnce) {
  TestRecord r{Tu("e.c", BALLARUS_META_F_EDGE), {8, 4, 3}, {}, 2};
  r.tu.functions = {EdgeModeLoop("loop", 0)};
  const std::string path = WriteTestProfile("edge.profile", {r}, 2);
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  EXPECT_EQ(p.raw.runs, 2u);
  EXPECT_FALSE(p.has_paths);
  ASSERT_EQ(p.tus.size(), 1u);
  const LoadedTu& lt = p.tus[0];
  EXPECT_EQ(lt.file_offset, BALLARUS_PROFILE_HEADER_SIZE);
  EXPECT_EQ(lt.record, &p.raw.records[0]);
  EXPECT_EQ(lt.tu.source, "e.c");
  ASSERT_EQ(lt.copies.size(), 1u);
  const FunctionCopy& c = lt.copies[0];
  EXPECT_TRUE(c.edge_counters);
  EXPECT_FALSE(c.paths);
  EXPECT_FALSE(c.edges_from_paths());
  const std::vector<Count> known = {std::nullopt, std::nullopt, 8,
                                    std::nullopt, 4, std::nullopt,
                                    std::nullopt, std::nullopt, 3};
  EXPECT_EQ(c.known, known);
  ExpectLoopSolved(lt.tu.functions[0], c);
}

// Adds a named record of one TU to a parsed profile (malloc'd: the
// profile frees it).
void AddNamedRun(ballarus_profile* p, const std::string& name, uint64_t stamp,
                 uint64_t runs, const std::vector<ballarus_named_entry>& dense) {
  p->named = static_cast<ballarus_named_record*>(
      realloc(p->named, (p->n_named + 1) * sizeof *p->named));
  ballarus_named_record& n = p->named[p->n_named++];
  n = ballarus_named_record{};
  n.name = strdup(name.c_str());
  n.name_size = static_cast<uint32_t>(name.size());
  n.stamp = stamp;
  n.runs = runs;
  n.dense = static_cast<ballarus_named_entry*>(
      malloc((dense.size() + 1) * sizeof(ballarus_named_entry)));
  std::copy(dense.begin(), dense.end(), n.dense);
  n.n_dense = dense.size();
}

TEST(ReadProfile, ANamedRunReadsAsAProfileOfItsOwn) {
  // Two TUs; test "t/a" ran both (all of the first TU's counts), "t/b"
  // only the second.
  TestRecord r1{Tu("e.c", BALLARUS_META_F_EDGE), {8, 4, 3}, {}, 2};
  r1.tu.functions = {EdgeModeLoop("loop", 0)};
  TestRecord r2{Tu("f.c", BALLARUS_META_F_EDGE), {9, 5, 4}, {}, 2};
  r2.tu.functions = {EdgeModeLoop("loop2", 0)};
  const std::string path = WriteTestProfile("named.profile", {r1, r2}, 2);
  ProfileRecords all;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &all, &err)) << err;
  ASSERT_EQ(all.tus.size(), 2u);
  const size_t e = all.tus[0].tu.source == "e.c" ? 0 : 1;
  const uint64_t stamp_e = all.raw.records[e].stamp;
  const uint64_t stamp_f = all.raw.records[1 - e].stamp;
  // t/a: the whole of e.c's counts, f.c's index 0 only (records of one
  // name in stamp order).
  auto t_a = [&](uint64_t stamp) {
    return stamp == stamp_e
               ? std::vector<ballarus_named_entry>{{0, 8}, {1, 4}, {2, 3}}
               : std::vector<ballarus_named_entry>{{0, 9}};
  };
  const uint64_t lo = std::min(stamp_e, stamp_f), hi = std::max(stamp_e, stamp_f);
  AddNamedRun(&all.raw, "t/a", lo, 1, t_a(lo));
  AddNamedRun(&all.raw, "t/a", hi, 1, t_a(hi));
  AddNamedRun(&all.raw, "t/b", stamp_f, 1, {{1, 1}});
  EXPECT_EQ(TestNames(all), (std::vector<std::string>{"t/a", "t/b"}));

  ProfileRecords a;
  ASSERT_TRUE(ReadNamedRun(all, "t/a", &a, &err)) << err;
  ASSERT_EQ(a.tus.size(), 2u);
  for (const LoadedTu& lt : a.tus) {
    std::vector<uint64_t> counters(lt.record->counters,
                                   lt.record->counters + 3);
    if (lt.tu.source == "e.c") {
      EXPECT_EQ(counters, (std::vector<uint64_t>{8, 4, 3}));
      ExpectLoopSolved(lt.tu.functions[0], lt.copies[0]);
    } else {
      EXPECT_EQ(counters, (std::vector<uint64_t>{9, 0, 0}));
    }
    EXPECT_EQ(lt.record->runs, 1u);
  }
  ProfileRecords b;
  ASSERT_TRUE(ReadNamedRun(all, "t/b", &b, &err)) << err;
  ASSERT_EQ(b.tus.size(), 1u);
  EXPECT_EQ(b.tus[0].tu.source, "f.c");
  EXPECT_EQ(b.tus[0].record->counters[1], 1u);
  ProfileRecords c;
  EXPECT_FALSE(ReadNamedRun(all, "t/c", &c, &err));
  EXPECT_EQ(err, "no named run 't/c' in the profile");
}

TEST(ReadProfile, DensePathsGiveEdgeCounts) {
  TestRecord r{Tu("p.c", BALLARUS_META_F_PATH), {}, {}, 1};
  Function f = TestLoop("loop");
  const PathInfo info =
      AttachTestPathInfo(&f, PathInfo::kDense, 0, kPathFlagEarlyTermination);
  r.counters.assign(info.n_paths + 1, 0);
  for (const TestPath& lp : TestLoopRuns())
    r.counters[TestPathNumber(f, info, lp.restart, lp.edges)] += lp.count;
  r.counters[info.n_paths] = 5;  // out of range
  r.tu.functions = {f};
  const std::string path = WriteTestProfile("dense.profile", {r});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  EXPECT_TRUE(p.has_paths);
  const FunctionCopy& c = p.tus[0].copies[0];
  ASSERT_TRUE(c.paths);
  EXPECT_FALSE(c.edge_counters);
  EXPECT_TRUE(c.edges_from_paths());
  const LoadedPaths& lp = *c.paths;
  EXPECT_EQ(lp.info.n_paths, info.n_paths);
  EXPECT_TRUE(lp.early_termination());
  EXPECT_EQ(lp.counts.size(), TestLoopRuns().size());
  EXPECT_EQ(lp.decoded.size(), TestLoopRuns().size());
  for (const TestPath& x : TestLoopRuns()) {
    const uint64_t n = TestPathNumber(f, info, x.restart, x.edges);
    EXPECT_EQ(lp.counts.at(n), x.count);
    EXPECT_EQ(lp.decoded.at(n).size(),
              x.edges.size() + (x.restart >= 0 ? 1 : 0));
  }
  EXPECT_EQ(lp.total, 11u);
  EXPECT_EQ(lp.out_of_range, 5u);
  EXPECT_EQ(lp.derived, TestLoopEdgeCounts());
  for (size_t e = 0; e < f.edges.size(); ++e) {
    EXPECT_TRUE(lp.in_dag(e));
    EXPECT_EQ(c.known[e], Count(TestLoopEdgeCounts()[e]));
  }
  ExpectLoopSolved(p.tus[0].tu.functions[0], c);
}

TEST(ReadProfile, HashedPathsFromSparseEntries) {
  TestRecord r{Tu("h.c", BALLARUS_META_F_PATH), {}, {}, 1};
  Function other = TestLoop("other");  // function 0: no path data
  Function f = TestLoop("loop");       // function 1: hashed
  const PathInfo info = AttachTestPathInfo(&f, PathInfo::kHashed, 0, 0);
  for (const TestPath& lp : TestLoopRuns())
    r.sparse.push_back(
        {1, TestPathNumber(f, info, lp.restart, lp.edges), lp.count});
  r.sparse.push_back({1, info.n_paths + 4, 7});
  std::sort(r.sparse.begin(), r.sparse.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  r.tu.functions = {other, f};
  const std::string path = WriteTestProfile("hashed.profile", {r});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  const LoadedTu& lt = p.tus[0];
  EXPECT_FALSE(lt.copies[0].paths);
  EXPECT_EQ(lt.copies[0].known, std::vector<Count>(9));  // nothing counted
  ASSERT_TRUE(lt.copies[1].paths);
  const LoadedPaths& lp = *lt.copies[1].paths;
  EXPECT_FALSE(lp.early_termination());
  EXPECT_EQ(lp.counts.size(), TestLoopRuns().size());
  EXPECT_EQ(lp.total, 11u);
  EXPECT_EQ(lp.out_of_range, 7u);
  EXPECT_EQ(lp.out_of_range_keys,
            (std::map<uint64_t, uint64_t>{{info.n_paths + 4, 7}}));
  EXPECT_EQ(lp.derived, TestLoopEdgeCounts());
  ExpectLoopSolved(lt.tu.functions[1], lt.copies[1]);
}

std::string ReadError(const std::string& name, const TestRecord& r) {
  const std::string path = WriteTestProfile(name, {r});
  ProfileRecords p;
  std::string err;
  EXPECT_FALSE(ReadProfile(path, &p, &err)) << name;
  return err;
}

TEST(ReadProfile, BadPathDataRefused) {
  {
    TestRecord r{Tu("p.c", BALLARUS_META_F_PATH), {}, {}, 1};
    Function f = TestLoop("loop");
    PathInfo info = AttachTestPathInfo(&f, PathInfo::kDense, 0, 0);
    info.n_paths += 1;  // disagrees with the CFG
    f.extensions[0].bytes = EncodePathInfo(info);
    r.counters.assign(info.n_paths + 1, 0);
    r.tu.functions = {f};
    const std::string err = ReadError("npaths.profile", r);
    EXPECT_NE(err.find("record 0: metadata: function 'loop': path "
                       "extension: declares"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.rfind("offset ", 0), 0u) << err;
  }
  {
    TestRecord r{Tu("p.c", BALLARUS_META_F_PATH), {}, {}, 1};
    Function f = TestLoop("loop");
    const PathInfo info = AttachTestPathInfo(&f, PathInfo::kDense, 0, 0);
    r.counters.assign(info.n_paths + 1, 0);
    r.sparse.push_back({0, 1, 1});  // but loop counts densely
    r.tu.functions = {f};
    const std::string err = ReadError("sparse.profile", r);
    EXPECT_NE(err.find("sparse entry 0 names function 0 ('loop'), which has "
                       "no hashed path table"),
              std::string::npos)
        << err;
  }
  ProfileRecords p;
  std::string err;
  EXPECT_FALSE(ReadProfile("/nonexistent/ballarus.profile", &p, &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace ballarus
