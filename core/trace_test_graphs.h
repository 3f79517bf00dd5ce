// trace_test_graphs.h — hand-made traced programs for the tracing tests
// (trace_plan_test.cc, trace_regen_test.cc): CFGs in the model's
// conventions plus, per block, the function it calls (-1: none).
// Test-only (//core:trace_test_graphs).
#ifndef BALLARUS_CORE_TRACE_TEST_GRAPHS_H_
#define BALLARUS_CORE_TRACE_TEST_GRAPHS_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/test_graphs.h"

namespace ballarus {

struct TestFunction {
  Function fn;
  std::vector<int> callee;  // per block: function id called, or -1
};

inline TestFunction Fn(const std::string& name, uint32_t n,
                       const std::vector<E>& es,
                       const std::vector<std::pair<uint32_t, int>>& calls = {}) {
  TestFunction t{Make(n, es), std::vector<int>(n, -1)};
  t.fn.name = name;
  for (const auto& [block, callee] : calls) t.callee[block] = callee;
  return t;
}

// if (c) A else B.
inline TestFunction IfElse() {
  return Fn("if_else", 6, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse},
                           {3, 5, 0}, {4, 5, 0}, {5, 1, 0}});
}

// while (c) body.
inline TestFunction WhileLoop() {
  return Fn("while", 5, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse},
                         {3, 2, 0}, {4, 1, 0}});
}

// Outer header 2, inner header 3, inner body 4, outer latch 5, exit 6.
inline TestFunction NestedLoops() {
  return Fn("nested", 7, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 6, kEdgeFalse},
                          {3, 4, kEdgeTrue}, {3, 5, kEdgeFalse}, {4, 3, 0},
                          {5, 2, 0}, {6, 1, 0}});
}

// while (c) { if (d) break; body }.
inline TestFunction EarlyExitLoop() {
  return Fn("early_exit", 6, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 5, kEdgeFalse},
                              {3, 5, kEdgeTrue}, {3, 4, kEdgeFalse}, {4, 2, 0},
                              {5, 1, 0}});
}

// Three returns: 3 returns, 4 may return, 5 returns.
inline TestFunction MultipleExits() {
  return Fn("multi_exit", 6, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse},
                              {3, 1, 0}, {4, 5, kEdgeTrue}, {4, 1, kEdgeFalse},
                              {5, 1, 0}});
}

// Figure 13 of the paper: P=2, A=3, B=4, C=5.
inline TestFunction Figure13() {
  return Fn("figure13", 6, {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse},
                            {4, 3, kEdgeTrue}, {4, 5, kEdgeFalse}, {3, 5, 0},
                            {5, 2, kEdgeTrue}, {5, 1, kEdgeFalse}});
}

// do { switch (x) {3, 4, 5} } while (c): a three-way predicate.
inline TestFunction SwitchLoop() {
  return Fn("switch_loop", 7,
            {{0, 2, 0}, {2, 3, kEdgeSwitch}, {2, 4, kEdgeSwitch},
             {2, 5, kEdgeSwitch}, {3, 6, 0}, {4, 6, 0}, {5, 6, 0},
             {6, 2, kEdgeTrue}, {6, 1, kEdgeFalse}});
}

// while (c) g();  — block 3 calls function `callee`.
inline TestFunction CallInLoop(int callee) {
  return Fn("call_in_loop", 5,
            {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse}, {3, 2, 0},
             {4, 1, 0}},
            {{3, callee}});
}

// do g(); while (c) — the call block is itself a predicate with a self loop.
inline TestFunction CallingSelfLoop(int callee) {
  return Fn("calling_self_loop", 3,
            {{0, 2, 0}, {2, 2, kEdgeTrue}, {2, 1, kEdgeFalse}},
            {{2, callee}});
}

// if (c) { self(); } else { A } ; tail with a call to `callee`.
inline TestFunction Recursive(int self, int callee) {
  return Fn("recursive", 7,
            {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse}, {3, 5, 0},
             {4, 5, 0}, {5, 6, kEdgeTrue}, {5, 1, kEdgeFalse}, {6, 1, 0}},
            {{3, self}, {6, callee}});
}

// Figure 15's situation: calls at 5 and 6 below a diamond and a branch.
inline TestFunction CallsBelowBranches(int callee) {
  return Fn("calls_below", 8,
            {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 4, kEdgeFalse}, {3, 5, 0},
             {4, 5, 0}, {5, 6, kEdgeTrue}, {5, 7, kEdgeFalse}, {6, 7, 0},
             {7, 1, 0}},
            {{5, callee}, {6, callee}});
}

// An interpreter loop dispatched by a computed goto, as GCC factors it:
// block 3 is `goto *p` (abnormal edges to the handlers 4..7, a fake edge
// to EXIT; the handlers have fake ENTRY edges).  4 calls `callee` and
// dispatches again; 5 branches to 8 (dispatch) or falls into handler 6
// (a flow edge into a computed goto's target); 6 dispatches or returns;
// 7 halts.  Each block's first edge leads towards EXIT.
inline TestFunction ComputedGotoLoop(int callee) {
  constexpr uint32_t kA = kEdgeAbnormal | kEdgeIgnored;
  return Fn("computed_goto", 9,
            {{0, 2, 0}, {2, 3, 0}, {3, 7, kA}, {3, 4, kA}, {3, 5, kA},
             {3, 6, kA}, {4, 3, 0}, {5, 8, kEdgeFalse}, {5, 6, kEdgeTrue},
             {8, 3, 0}, {6, 1, kEdgeFalse}, {6, 3, kEdgeTrue}, {7, 1, 0},
             {3, 1, kEdgeFake}, {0, 4, kEdgeFake}, {0, 5, kEdgeFake},
             {0, 6, kEdgeFake}, {0, 7, kEdgeFake}},
            {{4, callee}});
}

// Two dispatch blocks (3 and 6) chosen by the branch at 2, both going to
// handler 4 (back to 2) or 5 (return).
inline TestFunction TwoDispatchBlocks() {
  constexpr uint32_t kA = kEdgeAbnormal | kEdgeIgnored;
  return Fn("two_dispatch", 7,
            {{0, 2, 0}, {2, 3, kEdgeTrue}, {2, 6, kEdgeFalse}, {3, 5, kA},
             {3, 4, kA}, {6, 5, kA}, {6, 4, kA}, {4, 2, 0}, {5, 1, 0},
             {3, 1, kEdgeFake}, {6, 1, kEdgeFake}, {0, 4, kEdgeFake},
             {0, 5, kEdgeFake}});
}

// The branch at 2 goes to the dispatch block 3 or straight into its
// target 5 (return); 4 loops back to 2.  No cycle joins the two branches,
// so only the flow edge 2->5's own witness tells them apart.
inline TestFunction DispatchOrDirect() {
  constexpr uint32_t kA = kEdgeAbnormal | kEdgeIgnored;
  return Fn("dispatch_or_direct", 6,
            {{0, 2, 0}, {2, 5, kEdgeFalse}, {2, 3, kEdgeTrue}, {3, 5, kA},
             {3, 4, kA}, {4, 2, 0}, {5, 1, 0}, {3, 1, kEdgeFake},
             {0, 4, kEdgeFake}, {0, 5, kEdgeFake}});
}

// A random CFG of 3..12 blocks: the chain ENTRY->2->...->n-1->EXIT (each
// block's first edge, so following first edges always ends) plus up to two
// random extra edges per block (forward, backward, self, to EXIT), no
// parallel edges; about one block in four calls function 0 (recursion).
template <typename Rng>
TestFunction RandomCfg(Rng& rng) {
  const uint32_t n = 3 + rng() % 10;
  std::vector<E> es{{0, 2, 0}};
  for (uint32_t b = 2; b < n; ++b) {
    std::vector<uint32_t> dsts{b + 1 < n ? b + 1 : kExitBlock};
    for (uint32_t k = rng() % 3; k > 0; --k) {
      uint32_t d = 1 + rng() % (n - 1);
      if (std::find(dsts.begin(), dsts.end(), d) == dsts.end())
        dsts.push_back(d);
    }
    for (uint32_t d : dsts) es.push_back({b, d, 0});
  }
  std::vector<std::pair<uint32_t, int>> calls;
  for (uint32_t b = 2; b < n; ++b)
    if (rng() % 4 == 0) calls.push_back({b, 0});
  return Fn("random", n, es, calls);
}

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_TEST_GRAPHS_H_
