// gcov_arcs_test.cc — GCC 12's counted-edge choice on hand-made graphs,
// worked out by hand from profile.cc, and the extension codecs.  (The
// end-to-end check against real .gcno files is tests/pgo_test.cc.)
#include "core/gcov_arcs.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_graphs.h"

namespace ballarus {
namespace {

// ENTRY -> 2; 2 -> 3 (true), 2 -> 4 (false); 3 -> 5; 4 -> 5; 5 -> EXIT.
Function Diamond() {
  return Make(6, {{0, 2, kEdgeFallthru},
                  {2, 3, kEdgeTrue},
                  {2, 4, kEdgeFalse},
                  {3, 5, kEdgeFallthru},
                  {4, 5, kEdgeFallthru},
                  {5, 1, kEdgeFallthru}});
}

std::vector<GcovEdgeKey> Keys(const Function& f,
                              const std::vector<int64_t>& weights) {
  std::vector<GcovEdgeKey> k(f.edges.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i].weight = weights[i];
    k[i].src = static_cast<int32_t>(f.edges[i].src);
    k[i].dst = static_cast<int32_t>(f.edges[i].dst);
  }
  return k;
}

TEST(GcovCounterEdges, LightestEdgesGetTheCounters) {
  Function f = Diamond();
  // 2->3 is hot, 2->4 cold.  |E| + 1 - (|V| - 1) = 2 chords get counters.
  std::vector<uint32_t> c =
      GcovCounterEdges(f, Keys(f, {10001, 9001, 1001, 9001, 1001, 10001}));
  // Round 1: 5->EXIT.  Round 2 by weight: ENTRY->2 (10001), then 3->5 and
  // 2->3 (9001; 3->5 first: source 3 > 2): 2->3 closes 2-3-5-EXIT-ENTRY-2;
  // then 4->5 and 2->4 (1001; 4->5 first): 2->4 closes a cycle.
  EXPECT_EQ(c, (std::vector<uint32_t>{1, 2}));
}

TEST(GcovCounterEdges, TiesFollowTheOldBlockIndices) {
  Function f = Diamond();
  std::vector<GcovEdgeKey> k = Keys(f, {10001, 9001, 1001, 9001, 1001, 10001});
  // Before compact_blocks, block 3 had a lower index than block 2 (e.g. a
  // block created by a split): now 2->3 sorts before 3->5 and joins the
  // tree; 3->5 closes the cycle instead.
  for (GcovEdgeKey& x : k) {
    if (x.src == 3) x.src = 1;
    if (x.dst == 3) x.dst = 1;
  }
  EXPECT_EQ(GcovCounterEdges(f, k), (std::vector<uint32_t>{2, 3}));
}

TEST(GcovCounterEdges, CriticalWeightAndExitEdges) {
  // A loop: ENTRY -> 2; 2 -> 3; 3 -> 3 (back edge, heavy); 3 -> 4; 4 -> EXIT.
  Function f = Make(5, {{0, 2, kEdgeFallthru},
                        {2, 3, kEdgeFallthru},
                        {3, 3, kEdgeTrue},
                        {3, 4, kEdgeFalse},
                        {4, 1, kEdgeFallthru}});
  // A self loop never joins the tree: it is always counted, however heavy;
  // one more chord besides: ENTRY->2 closes ENTRY-2-3-4-EXIT-ENTRY only if
  // the others joined first (they are heavier).
  std::vector<uint32_t> c =
      GcovCounterEdges(f, Keys(f, {1000, 2000, 90000, 1500, 1000}));
  EXPECT_EQ(c, (std::vector<uint32_t>{0, 2}));
}

TEST(GcovCounterEdges, FakeNeverCountedAbnormalIgnored) {
  // 2 calls something that may not return (fake 2->EXIT), then 3; 3 has an
  // abnormal edge to 4 (a setjmp receiver, with its fake ENTRY edge), 4
  // returns.
  Function f = Make(5, {{0, 2, kEdgeFallthru},
                        {0, 4, kEdgeFake},
                        {2, 3, kEdgeFallthru},
                        {2, 1, kEdgeFake},
                        {3, 4, kEdgeFallthru},
                        {3, 4 + 0, kEdgeAbnormal},  // parallel: ignored
                        {4, 1, kEdgeFallthru}});
  std::vector<uint32_t> c =
      GcovCounterEdges(f, Keys(f, {100, 10000, 100, 10000, 100, 100, 100}));
  // The abnormal 3->4 is ignored.  Round 1 (fake and EXIT-bound edges, in
  // weight order): fake 2->EXIT and fake ENTRY->4 join 2 and 4 to
  // EXIT/ENTRY; 4->EXIT then closes a cycle.  Round 2: 3->4 joins 3; 2->3
  // and ENTRY->2 close cycles.  Counters: the real edges off the tree —
  // never a fake or abnormal one.
  for (uint32_t e : c) {
    EXPECT_FALSE(f.edges[e].flags & (kEdgeFake | kEdgeAbnormal)) << e;
  }
  EXPECT_EQ(c, (std::vector<uint32_t>{0, 2, 6}));
}

TEST(GcovCounterEdges, FakeEdgesOffTheTreeAreDropped) {
  // 2 ends with a call that may not return and returns itself: a fake
  // 2->EXIT beside the real 2->EXIT; ENTRY->3 is a fake entry (a setjmp
  // receiver) beside 3's fake 3->EXIT.  Round 1 takes, by weight, real
  // 2->EXIT (heavier) before fake 2->EXIT, which then closes a cycle; fake
  // ENTRY->3 before fake 3->EXIT, which then closes one.
  Function f = Make(4, {{0, 2, kEdgeFallthru},
                        {0, 3, kEdgeFake},
                        {2, 1, kEdgeFallthru},
                        {2, 1, kEdgeFake},
                        {2, 3, kEdgeFalse},
                        {3, 1, kEdgeFake}});
  std::vector<uint32_t> dropped = {99};
  const std::vector<uint32_t> c = GcovCounterEdges(
      f, Keys(f, {100, 5000, 9000, 10, 100, 20}), &dropped);
  EXPECT_EQ(dropped, (std::vector<uint32_t>{3, 5}));
  // Lighter real edges: 2->EXIT keeps its place; ENTRY->2 and 2->3 close
  // cycles in round 2 and are counted.
  EXPECT_EQ(c, (std::vector<uint32_t>{0, 4}));
  // The same edges, the fakes heavier: now the real 2->EXIT is counted and
  // fake 3->EXIT's ENTRY twin is the one dropped.
  const std::vector<uint32_t> c2 = GcovCounterEdges(
      f, Keys(f, {100, 10, 20, 9000, 100, 5000}), &dropped);
  EXPECT_EQ(dropped, (std::vector<uint32_t>{1}));
  EXPECT_EQ(c2, (std::vector<uint32_t>{0, 2, 4}));
}

TEST(GcovCounterEdges, CountIsEdgesMinusVerticesPlusOne) {
  // Without fake/abnormal edges every chord is counted: |E| + 1 - (|V| - 1).
  Function f = Make(7, {{0, 2, 0},
                        {2, 3, kEdgeTrue},
                        {2, 4, kEdgeFalse},
                        {3, 5, 0},
                        {4, 5, 0},
                        {5, 2, kEdgeTrue},
                        {5, 6, kEdgeFalse},
                        {6, 1, 0}});
  std::vector<uint32_t> c = GcovCounterEdges(f, Keys(f, {1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(c.size(), f.edges.size() + 1 - (f.blocks.size() - 1));
}

TEST(GcovExtensions, RoundTrip) {
  Function f = Diamond();
  GcovFunctionInfo fi;
  fi.ident = 108032747;
  fi.flags = kGcovFunctionExternInline;
  fi.counter_edges = {1, 2};
  GcovFunctionInfo back;
  std::string err;
  ASSERT_TRUE(DecodeGcovFunctionInfo(EncodeGcovFunctionInfo(fi), f, &back,
                                     &err))
      << err;
  EXPECT_EQ(back.ident, fi.ident);
  EXPECT_EQ(back.flags, fi.flags);
  EXPECT_EQ(back.counter_edges, fi.counter_edges);
  EXPECT_FALSE(IsProfileUseOnly(f));
  f.extensions.push_back({kGcovExtensionTag, EncodeGcovFunctionInfo(fi)});
  EXPECT_TRUE(IsProfileUseOnly(f));

  GcovUnitInfo ui;
  ui.version = 0x4232322a;
  ui.da_file_name = "/b/x.gcda";
  ui.aux_name = "x";
  ui.has_profile_dir = true;
  ui.profile_dir = "pd";
  ui.prefix_path = "/b";
  ui.not_instrumented.push_back({"_ZThn8_N1B1fEv", 42, "thunk"});
  GcovUnitInfo ub;
  ASSERT_TRUE(DecodeGcovUnitInfo(EncodeGcovUnitInfo(ui), &ub, &err)) << err;
  EXPECT_EQ(ub.version, ui.version);
  EXPECT_EQ(ub.da_file_name, ui.da_file_name);
  EXPECT_EQ(ub.aux_name, ui.aux_name);
  EXPECT_TRUE(ub.has_profile_dir);
  EXPECT_EQ(ub.profile_dir, "pd");
  EXPECT_EQ(ub.prefix_path, "/b");
  ASSERT_EQ(ub.not_instrumented.size(), 1u);
  EXPECT_EQ(ub.not_instrumented[0].name, "_ZThn8_N1B1fEv");
  EXPECT_EQ(ub.not_instrumented[0].ident, 42u);
  EXPECT_EQ(ub.not_instrumented[0].why, "thunk");
}

TEST(GcovExtensions, RejectsBadCounterEdges) {
  Function f = Diamond();
  std::string err;
  GcovFunctionInfo fi, back;
  fi.counter_edges = {2, 1};
  EXPECT_FALSE(
      DecodeGcovFunctionInfo(EncodeGcovFunctionInfo(fi), f, &back, &err));
  EXPECT_EQ(err, "gcov info: counter edges not ascending");
  fi.counter_edges = {6};
  EXPECT_FALSE(
      DecodeGcovFunctionInfo(EncodeGcovFunctionInfo(fi), f, &back, &err));
  EXPECT_EQ(err, "gcov info: counter edge 6 of 6");
  std::vector<uint8_t> b = EncodeGcovFunctionInfo(GcovFunctionInfo{});
  b.push_back(0);
  EXPECT_FALSE(DecodeGcovFunctionInfo(b, f, &back, &err));
  EXPECT_NE(err.find("trailing"), std::string::npos);
  b = {0x80};
  EXPECT_FALSE(DecodeGcovFunctionInfo(b, f, &back, &err));
  GcovUnitInfo u;
  EXPECT_FALSE(DecodeGcovUnitInfo({1, 0, 0, 0, 0, 0, 0}, &u, &err));
  EXPECT_EQ(err, "gcov info: empty da_file_name");
}

}  // namespace
}  // namespace ballarus
