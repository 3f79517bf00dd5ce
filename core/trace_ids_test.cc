// trace_ids_test.cc — the word encoding of trace events and the trace plan
// extension (core/trace_ids.h): exact words for each kind, round trips,
// cut streams, and malformed plans rejected.
#include "core/trace_ids.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/trace_regen.h"
#include "core/trace_test_graphs.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using K = TraceEventKind;

TraceEvent Ev(K kind, uint32_t id, uint32_t depth = 0, uint32_t site = 0,
              uint32_t live = 0) {
  TraceEvent e;
  e.kind = kind, e.id = id, e.depth = depth, e.site = site, e.live = live;
  return e;
}

TEST(TraceIds, WordsOfEachKind) {
  std::vector<uint32_t> w;
  EncodeTraceEvent(Ev(K::kWitness, 5), 0, &w);
  EncodeTraceEvent(Ev(K::kEnter, 7, 2, 9), 0xabcd, &w);
  EncodeTraceEvent(Ev(K::kLand, 4, 1, 6, 3), 0, &w);
  TraceEvent end;
  end.kind = K::kEnd, end.depth = 2, end.site = 8;
  EncodeTraceEvent(end, 0, &w);
  EXPECT_EQ(w, (std::vector<uint32_t>{5, 0x80000007u, 0xabcd, 2, 9,
                                      0xfffffffeu, 4, 1, 6, 3,
                                      0xffffffffu, 2, 8}));
  // TU 0xabcd's function 7 is function id 12 of the program.
  auto resolve = [](uint32_t stamp, uint32_t index) -> int64_t {
    return stamp == 0xabcd && index == 7 ? 12 : -1;
  };
  DecodedTrace d = DecodeTraceWords(w, resolve);
  EXPECT_FALSE(d.cut);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.events, (std::vector<TraceEvent>{Ev(K::kWitness, 5),
                                              Ev(K::kEnter, 12, 2, 9),
                                              Ev(K::kLand, 4, 1, 6, 3), end}));
  w[2] = 0xabce;
  d = DecodeTraceWords(w, resolve);
  EXPECT_EQ(d.error, "event 1: kEnter of function 7 of a TU with stamp "
                     "43982 that no profile lists");
  EXPECT_EQ(d.events.size(), 1u);
}

TEST(TraceIds, CutEventDropped) {
  std::vector<uint32_t> w;
  EncodeTraceEvent(Ev(K::kWitness, 1), 0, &w);
  EncodeTraceEvent(Ev(K::kEnter, 3, 1, 2), 0, &w);
  w.pop_back();
  DecodedTrace d = DecodeTraceWords(
      w, [](uint32_t, uint32_t) -> int64_t { return 0; });
  EXPECT_TRUE(d.cut);
  EXPECT_EQ(d.events, (std::vector<TraceEvent>{Ev(K::kWitness, 1)}));
}

TEST(TraceIds, PlanExtensionRoundTrip) {
  TestFunction t = CallInLoop(1);
  std::vector<bool> calls(t.callee.size());
  for (size_t b = 0; b < calls.size(); ++b) calls[b] = t.callee[b] >= 0;
  TracePlan plan = PlanTrace(t.fn, {}, calls);
  ASSERT_FALSE(plan.witness_edges.empty());
  std::vector<uint8_t> bytes = EncodeTracePlanExtension(plan);
  TracePlan back;
  std::string error;
  ASSERT_TRUE(DecodeTracePlanExtension(t.fn, bytes, &back, &error)) << error;
  EXPECT_EQ(back.witness_edges, plan.witness_edges);
  EXPECT_EQ(back.witness_of_edge, plan.witness_of_edge);
  EXPECT_EQ(back.call_block, plan.call_block);
  // mode=trace-naive's plan: the same words, flags bit 0 set.
  std::vector<uint8_t> naive = EncodeTracePlanExtension(plan, true);
  ASSERT_EQ(naive.size(), bytes.size());
  EXPECT_EQ(naive[0], 1u);
  EXPECT_TRUE(std::equal(naive.begin() + 1, naive.end(), bytes.begin() + 1));
}

TEST(TraceIds, SiteDecidedPlanRoundTrip) {
  TestFunction t = CallInLoop(1);
  std::vector<bool> calls(t.callee.size());
  for (size_t b = 0; b < calls.size(); ++b) calls[b] = t.callee[b] >= 0;
  const TracePlan sites = PlanTrace(t.fn, {}, calls, CallDecision::kSite);
  ASSERT_EQ(sites.calls, CallDecision::kSite);
  std::vector<uint8_t> bytes = EncodeTracePlanExtension(sites);
  EXPECT_EQ(bytes[0], kTracePlanSites);
  TracePlan back;
  std::string error;
  ASSERT_TRUE(DecodeTracePlanExtension(t.fn, bytes, &back, &error)) << error;
  EXPECT_EQ(back.calls, CallDecision::kSite);
  EXPECT_EQ(back.witness_edges, sites.witness_edges);
  // A plan of the paper's placement (an older build's) has no bit 2 and
  // reads back as such.
  const TracePlan old = PlanTrace(t.fn, {}, calls);
  bytes = EncodeTracePlanExtension(old);
  EXPECT_EQ(bytes[0], 0u);
  ASSERT_TRUE(DecodeTracePlanExtension(t.fn, bytes, &back, &error)) << error;
  EXPECT_EQ(back.calls, CallDecision::kBlockingWitness);
  EXPECT_EQ(back.witness_edges, old.witness_edges);
}

TEST(TraceIds, BlockWitnessesRoundTrip) {
  TestFunction t = ComputedGotoLoop(1);
  std::vector<bool> calls(t.callee.size());
  for (size_t b = 0; b < calls.size(); ++b) calls[b] = t.callee[b] >= 0;
  const TracePlan plan = PlanTrace(t.fn, {}, calls);
  ASSERT_FALSE(plan.witness_blocks.empty());
  std::vector<uint8_t> bytes = EncodeTracePlanExtension(plan);
  EXPECT_EQ(bytes[0], kTracePlanBlockWitnesses);
  TracePlan back;
  std::string error;
  ASSERT_TRUE(DecodeTracePlanExtension(t.fn, bytes, &back, &error)) << error;
  EXPECT_EQ(back.witness_blocks, plan.witness_blocks);
  EXPECT_EQ(back.witness_edges, plan.witness_edges);
  EXPECT_EQ(back.call_block, plan.call_block);
  // The block list is there only with its flag, and is not empty then.
  std::vector<uint8_t> no_flag = bytes;
  no_flag[0] = 0;
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, no_flag, &back, &error));
  std::vector<uint8_t> empty = EncodeTracePlanExtension(PlanTrace(t.fn, {}, {}));
  empty.resize(empty.size() - 4 * (1 + plan.witness_blocks.size()));
  empty.insert(empty.end(), {0, 0, 0, 0});
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, empty, &back, &error));
  // An unknown flag bit.
  std::vector<uint8_t> unknown = bytes;
  unknown[0] |= 8;  // bits 0-2 are known (trace_ids.h)
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, unknown, &back, &error));
}

TEST(TraceIds, MalformedPlansRejected) {
  TestFunction t = WhileLoop();
  TracePlan plan = PlanTrace(t.fn, {}, {});
  std::vector<uint8_t> good = EncodeTracePlanExtension(plan);
  TracePlan back;
  std::string error;
  std::vector<uint8_t> cut(good.begin(), good.end() - 1);
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, cut, &back, &error));
  EXPECT_NE(error.find("bad trace plan"), std::string::npos);
  std::vector<uint8_t> extra = good;
  extra.push_back(0);
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, extra, &back, &error));
  // flags 0, no call block, witnesses (list), no unwitnessable edge.
  auto plan_bytes = [](std::vector<uint8_t> witnesses) {
    std::vector<uint8_t> b = {0, 0, 0, 0, 0, 0, 0, 0};
    b.insert(b.end(), witnesses.begin(), witnesses.end());
    b.insert(b.end(), {0, 0, 0, 0});
    return b;
  };
  std::vector<uint8_t> ok = plan_bytes({1, 0, 0, 0, 3, 0, 0, 0});
  EXPECT_TRUE(DecodeTracePlanExtension(t.fn, ok, &back, &error)) << error;
  EXPECT_EQ(back.witness_edges, (std::vector<size_t>{3}));
  // One witness on edge 99 of a 5-edge function.
  std::vector<uint8_t> far = plan_bytes({1, 0, 0, 0, 99, 0, 0, 0});
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, far, &back, &error));
  // Edges not ascending.
  std::vector<uint8_t> order =
      plan_bytes({2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0});
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, order, &back, &error));
  // mode=trace-naive's plan: refused with its own message.
  std::vector<uint8_t> naive = good;
  naive[0] = 1;
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, naive, &back, &error));
  EXPECT_EQ(error, "function while: mode=trace-naive traces are not "
                   "regenerated");
}

}  // namespace
}  // namespace ballarus
