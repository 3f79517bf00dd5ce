// trace_ids_test.cc — the word encoding of trace events and the trace plan
// extension (core/trace_ids.h): exact words for each kind, round trips,
// cut streams, and malformed plans rejected.
#include "core/trace_ids.h"

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
  EncodeTraceEvent(Ev(K::kWitness, 5), &w);
  EncodeTraceEvent(Ev(K::kEnter, 7, 2, 9), &w);
  EncodeTraceEvent(Ev(K::kLand, 4, 1, 6, 3), &w);
  TraceEvent end;
  end.kind = K::kEnd, end.depth = 2, end.site = 8;
  EncodeTraceEvent(end, &w);
  EXPECT_EQ(w, (std::vector<uint32_t>{20, 29, 2, 9, 18, 1, 6, 3, 11, 8}));
  DecodedTrace d = DecodeTraceWords(w);
  EXPECT_FALSE(d.cut);
  EXPECT_EQ(d.events, (std::vector<TraceEvent>{Ev(K::kWitness, 5),
                                              Ev(K::kEnter, 7, 2, 9),
                                              Ev(K::kLand, 4, 1, 6, 3), end}));
}

TEST(TraceIds, CutEventDropped) {
  std::vector<uint32_t> w;
  EncodeTraceEvent(Ev(K::kWitness, 1), &w);
  EncodeTraceEvent(Ev(K::kEnter, 3, 1, 2), &w);
  w.pop_back();
  DecodedTrace d = DecodeTraceWords(w);
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
  // One witness on edge 99 of a 5-edge function.
  std::vector<uint8_t> far = {0, 0, 0, 0, 1, 0, 0, 0, 99, 0, 0, 0};
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, far, &back, &error));
  // Edges not ascending.
  std::vector<uint8_t> order = {0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0};
  EXPECT_FALSE(DecodeTracePlanExtension(t.fn, order, &back, &error));
}

}  // namespace
}  // namespace ballarus
