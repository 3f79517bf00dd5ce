// trace_plan.h — where tracing writes witnesses, and what a trace stream is.
//
// Ball & Larus, "Optimally Profiling and Tracing Programs", TOPLAS 16(4)
// 1994, §4.  A trace lets the exact sequence of executed blocks be rebuilt
// offline from the CFG (trace_regen.h, the paper's Figure 14).  Only some
// edges write a witness (their witness id); the regenerator decides every
// other branch from the CFG and the next witness still to be read.
//
// Placement (§4.2, the two-step algorithm the paper recommends):
//   1. blocking witnesses: for EXIT (and, with CallDecision::
//      kBlockingWitness, for every call block), the edges
//      blockers(G, v) = { p->x0 | p a predicate, x0..x(n-1) not predicates,
//      x(n) = v } — the predicate out-edges as far from v as possible.  Then
//      no witness-free path leads from a predicate to EXIT (or a call), so
//      a witness read to decide a branch was written by this activation, not
//      by the caller (or a callee);
//   2. the chords of the maximum spanning tree (core/spanning_tree.h) of the
//      CFG (without the closed graph's virtual edge EXIT->ENTRY, which
//      profiling needs and tracing does not) from which the blocking edges
//      are excluded: E - Ewit then holds no diamond and no directed cycle,
//      i.e. Trace(Ewit) is solved.
// Calls (CallDecision::kSite, the paper's footnote 3: the stream holds
// other data than witnesses): a call block is not blocked.  A predicate p
// may then reach call blocks witness-free; because E - Ewit holds no
// diamond, each such block s is reached from one successor of p only
// (site(p, q) = the call blocks reached witness-free from p through q:
// disjoint for the successors q of p).  When the regenerator stands at p
// and the next event is not a witness but one of a call this activation
// makes (a kEnter, kLand or kEnd naming it by depth, below), the event's
// site s picks the successor whose site set holds s.  A call whose callee
// is untraced writes nothing: the walk goes on past it as before.
// PlanTrace checks the disjointness on the plan it made, and falls back to
// blocking the call blocks where it does not hold (an inexact plan, with
// unwitnessable edges).
// Only flow edges take part (IsTraceFlowEdge): fake and ignored edges are
// never walked by ordinary control flow; abnormal re-entries are announced
// in the stream instead (TraceEventKind::kLand).
//
// Computed gotos (GCC's labels as values, `goto *p`): GCC factors them into
// one dispatch block per function, entered by flow edges, left only by
// abnormal edges to the labels' blocks, which cannot hold code.  Each
// target block of a dispatch block gets a block witness instead: its own
// witness id, written at the block's start on every entry, whichever edge
// came there.  The walk leaves a dispatch block for the block of the next
// witness; entering such a block by a flow edge it reads the block's
// witness after the edge's own.  To keep every branch's choice unique,
// flow edges into a witnessed block always carry an edge witness too, and
// with two or more dispatch blocks each is a blocking target like a call.
//
// A thread's trace stream is a sequence of TraceEvents:
//   kEnter  {id = function id, depth = d, site = s}  a traced activation
//           starts; d is the number of traced activations live on the
//           thread below it (0 for an outermost one), s the block of the
//           caller (the activation at depth d-1) whose call led here.
//           Written at the function's entry.  The site is needed: a call
//           block's callee may be untraced, and the next call block may
//           follow without a witness, so the depth alone cannot tell which
//           of the two calls this activation belongs to.
//   kWitness{id = witness id}  an edge of the current (innermost traced)
//           activation's function with a witness was taken.  Ids are per
//           function: 0..witness_edges.size()-1.
//   kLand   {id = block, depth = d, site = s, live = n}  control came back
//           abnormally into the live activation at depth d, which stands in
//           the call at one of its call blocks; every activation deeper
//           than d was abandoned.  When it was thrown / longjmp'ed, n
//           activations were live, the innermost in the call at its block
//           s.  `block` tells the two kinds apart:
//           * an exception landing pad L, reached by the EH edge from the
//             call block: written first thing on each EH edge that unwinds
//             out of a call (not on a resx's EH edge: a plain jump), before
//             the edge's witness; the walk takes that EH edge (and reads
//             its witness if it has one);
//           * the block B of a returns-twice call (setjmp, vfork ...; a
//             re-entry target: B has a fake ENTRY->B edge): written right
//             after the call, so at BOTH of its returns; the activation
//             resumes after B's call, without entering B again (no step),
//             then leaves B as usual.  At the first return the walk stands
//             at B in its call already (live = d + 1, site = B): nothing
//             changes but B's calls being done.
//           An exception caught in untraced code writes no kLand.
//   kEnd    {depth = d, site = s}  the thread ended normally (returned
//           from its start routine, exit, exec) with d traced activations
//           live (0 after a return from the outermost one), the innermost in
//           the call at its block s.  Written last; a stream without it was
//           cut (ring buffer, fatal signal).
// The sites come from a thread-local (block, depth) pair that a traced
// function stores before each call, and before each resx (a cleanup that
// goes on unwinding out of the function, as a throwing call does: its
// block is a call block).
// Normal returns write nothing: EXIT's blocking witnesses make the
// regenerator reach EXIT by itself.  Untraced callees write nothing.
#ifndef BALLARUS_CORE_TRACE_PLAN_H_
#define BALLARUS_CORE_TRACE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model.h"

namespace ballarus {

enum class TraceEventKind : uint8_t { kWitness, kEnter, kLand, kEnd };

// How a branch towards a call block is decided (see above).
enum class CallDecision : uint8_t {
  kBlockingWitness,  // blocking witnesses before every call (§4.2)
  kSite,             // the call's events, by their site
};

struct TraceEvent {
  TraceEventKind kind = TraceEventKind::kWitness;
  uint32_t id = 0;     // witness id, function id or landing block
  uint32_t depth = 0;  // kEnter, kLand, kEnd: activation depth
  uint32_t site = 0;   // kEnter, kLand, kEnd: a call block (see above)
  uint32_t live = 0;   // kLand: live activations at the throw
  bool operator==(const TraceEvent& o) const {
    return kind == o.kind && id == o.id && depth == o.depth &&
           site == o.site && live == o.live;
  }
};

inline constexpr int64_t kNoWitness = -1;

struct TracePlan {
  // Parallel to Function::edges: the edge's witness id, or kNoWitness.
  std::vector<int64_t> witness_of_edge;
  // Witness id -> edge index; ascending edge index.
  std::vector<size_t> witness_edges;
  // The blocking witnesses of step 1 (a subset of witness_edges), ascending.
  std::vector<size_t> blocking;
  // Edges that need a witness but cannot hold code (abnormal edges, e.g. of
  // a computed goto), ascending.  Empty for an exactly regenerable plan.
  std::vector<size_t> unwitnessable;
  // Parallel to Function::blocks: the block contains a call that may run
  // traced code, longjmp or throw (the input of PlanTrace).
  std::vector<bool> call_block;
  // Blocks with a block witness (the targets of computed gotos), ascending;
  // witness_blocks[k]'s witness id is witness_edges.size() + k.
  std::vector<uint32_t> witness_blocks;
  // Whether call blocks were blocked (kBlockingWitness) or are decided by
  // the events' sites (kSite).
  CallDecision calls = CallDecision::kBlockingWitness;
};

// The block witness id of `block`, or kNoWitness.
int64_t BlockWitness(const TracePlan& plan, uint32_t block);

// The computed-goto dispatch blocks of `fn`: entered by a flow edge, no
// flow out-edge, an abnormal out-edge to a block other than EXIT.
std::vector<bool> DispatchBlocks(const Function& fn);

// True if `e` leaves a dispatch block for one of its targets.
bool IsDispatchEdge(const Function& fn, const Edge& e);

// True if ordinary control flow walks `e`: not fake, not ignored, and not
// one of ballarus' model-only re-entry edges (a forked child's return goes
// on with the parent's trace state; no control moves).
bool IsTraceFlowEdge(const Edge& e);

// Number of flow out-edges of each block; a predicate has two or more.
std::vector<uint32_t> FlowOutDegrees(const Function& fn);

// The witness placement of `fn`.  weights[i] estimates fn.edges[i]'s
// frequency (missing entries count as 0); call_blocks[b] says block b holds
// a call (missing entries: no call).  With CallDecision::kSite the result's
// `calls` is kBlockingWitness if SitesDisjoint failed on the site-decided
// placement.  Deterministic.
TracePlan PlanTrace(const Function& fn, const std::vector<uint64_t>& weights,
                    const std::vector<bool>& call_blocks,
                    CallDecision calls = CallDecision::kBlockingWitness);

// Whether, for every predicate of `fn`, the call blocks its flow out-edges
// reach witness-free (through calls, up to a witness or a block witness)
// are disjoint: the events' sites then decide its branch.
bool SitesDisjoint(const Function& fn, const TracePlan& plan);

}  // namespace ballarus

#endif  // BALLARUS_CORE_TRACE_PLAN_H_
