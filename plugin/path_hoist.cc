// path_hoist.cc — count hoisting for path planning: where a path end (a
// return, a back edge, a cut block, a computed goto, a pre-count) may be
// counted on the edges into its block, or further back, instead of in the
// block.  Where one path prefix reaches an edge's source the register
// there is a known constant and GCC folds count[r + a] into one increment
// of a fixed counter, as an edge counter is; in the block, where the
// prefixes merge, the count goes through a variable address.  The steps
// of path_ends.cc ask these helpers; none of them adds an action.
#include <algorithm>
#include <cstdint>
#include <vector>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/options.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

namespace {

// For returns and back edges: at most this many of the edges a path end
// moves onto may come from a block that more than one path prefix reaches
// (elsewhere the count folds to a constant).
constexpr size_t kHoistMaxPreds = 8;

// How far back past blocks with one way on a path end may move.
constexpr int kMaxHoistDepth = 16;

}  // namespace

int RealSuccessors(basic_block bb) {
  int n = 0;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->succs) n += !(e->flags & EDGE_FAKE);
  return n;
}

// The GCC edges that carry a chord -- a nonzero increment on a DAG edge of
// their own -- ascending by address: code on such an edge splits it anyway
// (unless its source has it as its only successor, or its target only this
// predecessor), so a path end counted on it as well adds no block.
std::vector<edge> ChordEdges(const PathPlanState& s) {
  const ballarus::Function& fn = *s.fn;
  std::vector<edge> out;
  for (size_t i = 0; i < fn.edges.size() && i < s.gcc_edges.size(); ++i) {
    const int64_t d = s.dag.dag_edge_of_cfg[i];
    if (d < 0 || s.gcc_edges[i] == NULL ||
        s.dag.edges[d].kind != ballarus::DagEdge::kCfg || s.inc.inc[d] == 0 ||
        (fn.edges[i].flags & (ballarus::kEdgeFake | ballarus::kEdgeReentry)))
      continue;
    out.push_back(s.gcc_edges[i]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool SplitForChordAnyway(const PathPlanState& s, edge e) {
  return std::binary_search(s.chord_edges.begin(), s.chord_edges.end(), e);
}

// An edge a count can move onto: an ordinary edge from a block of the
// function (not ENTRY, not fake, abnormal or EH).
bool OrdinaryInEdge(const PathPlanState& s, edge e) {
  return !(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL |
                       EDGE_EH)) &&
         e->src != ENTRY_BLOCK_PTR_FOR_FN(cfun) && e->src->index >= 2 &&
         static_cast<uint32_t>(e->src->index) < s.nb;
}

// A path end u->EXIT (a return, or the fake edge of a block left by a
// computed goto) whose block u has no other way out in the DAG and is
// entered only by ordinary edges can count on each of those edges instead
// (*into).  Only where no edge needs splitting (each predecessor's only
// successor is u) -- with onto_chords, an edge from a branch that carries
// a chord (split for it anyway) too -- and, unless any_preds, where at
// most kHoistMaxPreds of the edges come from a block that more than one
// prefix reaches.  split_fixed: onto any edge, split or not, where every
// edge's source is reached by at most that many prefixes (a loop that
// takes registers: each count then lands in a local, or one of a few).
// What a return's count saves there: docs/performance.md, "Return
// hoisting".
bool HoistOnto(PathPlanState* s, uint32_t u, bool any_preds, bool onto_chords,
               std::vector<edge>* into, size_t split_fixed) {
  into->clear();
  if (u < 2 || u >= s->nb || s->bbs[u] == NULL || !g_options.path_hoist)
    return false;
  if (s->dag.in_vertex[u] != u || s->dag.start_edge[u] >= 0 ||
      s->dag.out[u].size() != 1)
    return false;
  size_t variable = 0;  // edges whose source many prefixes reach
  s->hoisted_onto_chords = 0;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s->bbs[u]->preds) {
    if (!OrdinaryInEdge(*s, e)) return false;
    if (split_fixed && s->FewPrefixes(e->src->index) > split_fixed)
      return false;
    if (RealSuccessors(e->src) != 1 && !split_fixed) {
      if (!onto_chords || !SplitForChordAnyway(*s, e)) return false;
      ++s->hoisted_onto_chords;
    }
    variable += s->prefixes[e->src->index] != 1;
    into->push_back(e);
  }
  return !into->empty() && (any_preds || variable <= kHoistMaxPreds);
}

bool InRegisterLoop(PathPlanState* s, edge e) {
  if (!s->loop_registers || e == NULL) return false;
  if (!s->register_loops) s->register_loops = FindRegisterLoops(/*dump=*/false);
  return s->register_loops->Of(e) >= 0;
}

// A back edge's path end hoisted onto the latch's in-edges, as a return's
// is.  A loop's latch is often a merge of the iteration's paths, so the
// register there is a PHI and the back edge counts through a variable
// address; on each edge into the latch the count is at a constant address
// where one prefix reaches the edge's source.  Never onto chords from
// branches (the new blocks cost more in tight loops than the count saves:
// docs/performance.md, "Back-edge hoisting").  In a loop that takes
// registers (counter_emit.h) the latch's in-edges may be split too, where
// one prefix reaches each edge's source (each count then lands in a local
// of its own), or, where more than kMaxCountChoices prefixes reach the
// latch, where up to kMaxCountChoices reach each source (each count lands
// in a pair of locals, PathAction::choices).
bool HoistBackEdgeEnd(PathPlanState* s, const ballarus::Edge& back,
                      edge gcc_back, std::vector<edge>* into) {
  if (back.src == ballarus::kEntryBlock) return false;
  if (HoistOnto(s, back.src, /*any_preds=*/false, /*onto_chords=*/false, into))
    return true;
  if (!InRegisterLoop(s, gcc_back)) return false;
  if (HoistOnto(s, back.src, /*any_preds=*/false, /*onto_chords=*/false, into,
                /*split_fixed=*/1))
    return true;
  return s->FewPrefixes(back.src) > kMaxCountChoices &&
         HoistOnto(s, back.src, /*any_preds=*/false, /*onto_chords=*/false,
                   into, /*split_fixed=*/kMaxCountChoices);
}

namespace {

// A block a count passes: one successor but fake ones and one DAG out edge
// (no pre-count, no cut, no return), a plain block (not a goto, receiver
// or re-entry), entered by ordinary edges only (an edge whose source has
// other successors is split for the count, as for a chord).
bool Passable(const PathPlanState& s, uint32_t p, std::vector<edge>* in) {
  in->clear();
  if (p < 2 || p >= s.nb || s.bbs[p] == NULL || s.returns_twice[p] ||
      s.dispatcher[p] || s.reentry_block[p] || s.goto_end[p] ||
      s.dag.in_vertex[p] != p || s.dag.start_edge[p] >= 0 ||
      s.dag.out[p].size() != 1)
    return false;
  if (RealSuccessors(s.bbs[p]) != 1) return false;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s.bbs[p]->preds) {
    if (!OrdinaryInEdge(s, e)) return false;
    in->push_back(e);
  }
  return !in->empty();
}

// A block's in-edges, where its count can go (path-cut-hoist): each
// ordinary, from a block with no other way on (no edge to split), or with
// onto_chords, from a branch whose edge is split anyway for a chord.
bool UnsplitInEdges(const PathPlanState& s, uint32_t w, std::vector<edge>* in,
                    bool onto_chords = false) {
  in->clear();
  if (w < 2 || w >= s.nb || s.bbs[w] == NULL || !g_options.path_hoist)
    return false;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s.bbs[w]->preds) {
    if (!OrdinaryInEdge(s, e)) return false;
    if (RealSuccessors(e->src) != 1 &&
        !(onto_chords && SplitForChordAnyway(s, e)))
      return false;
    in->push_back(e);
  }
  return !in->empty();
}

// A cut block's in-edges.  A call cut (CutCallBlocks) stands for the
// pre-count it replaces and is hoisted as one (onto chords too), and
// further: onto any edge, split or not, where every edge into the block
// then counts a fixed counter.
bool CutInEdges(const PathPlanState& s, uint32_t w, std::vector<edge>* in) {
  if (!g_options.path_cut_hoist) return false;
  if (UnsplitInEdges(s, w, in, /*onto_chords=*/s.call_cut[w])) return true;
  if (!s.call_cut[w] || s.bbs[w] == NULL) return false;
  in->clear();
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, s.bbs[w]->preds) {
    if (!OrdinaryInEdge(s, e) || s.prefixes[e->src->index] != 1) return false;
    in->push_back(e);
  }
  return !in->empty();
}

// The edges a path end at u may first move onto.
bool TopEdges(PathPlanState* s, uint32_t u, HoistFrom from,
              std::vector<edge>* into) {
  switch (from) {
    case HoistFrom::kGoto:
      return HoistOnto(s, u, /*any_preds=*/true, /*onto_chords=*/false, into);
    case HoistFrom::kCut:
      return CutInEdges(*s, u, into);
    case HoistFrom::kPreCount:
      return g_options.path_precount_hoist && s->dag.in_vertex[u] == u &&
             s->dag.start_edge[u] < 0 &&
             UnsplitInEdges(*s, u, into, /*onto_chords=*/true);
  }
  return false;
}

}  // namespace

// The count of a path end at block u -- a computed goto's (u the goto's
// block), a cut block's entry (kCut, u the cut block), or an
// early-termination pre-count (kPreCount, u the call's block, which is not
// a path start: its register is the one its in-edges leave) -- moved back
// onto edges, and on through blocks with no other way on (Passable) that
// several prefixes reach, until the source of an in-edge is reached by a
// single prefix: there the register is a constant and count[r + a] one
// increment of a fixed counter, with a the sum of the increments passed.
// Every execution still takes exactly one of the counted edges, so this
// never counts more often (an interpreter's dispatch: docs/performance.md,
// "Computed-goto targets").  *sites: the edges and their a; *depth: how
// many blocks back the count went.
bool HoistPathEnd(PathPlanState* s, uint32_t u, uint64_t a,
                  std::vector<std::pair<edge, uint64_t>>* sites, int* depth,
                  HoistFrom from) {
  sites->clear();
  *depth = 0;
  struct Item { uint32_t block; uint64_t a; int depth; };
  std::vector<Item> work_list{{u, a, 0}};
  std::vector<edge> in, in_p;
  while (!work_list.empty()) {
    const Item it = work_list.back();
    work_list.pop_back();
    if (!(it.block == u ? TopEdges(s, u, from, &in)
                        : Passable(*s, it.block, &in))) {
      if (it.block == u) return false;
      internal_error("ballarus: path end hoisting lost block %u", it.block);
    }
    for (edge e : in) {
      const uint32_t p = static_cast<uint32_t>(e->src->index);
      auto m = s->model_edge_of.find(e);
      const int d = m == s->model_edge_of.end()
                        ? -1
                        : s->dag.dag_edge_of_cfg[m->second];
      // Pass p only where its register is not known and p can be passed:
      // then each in-edge of p counts, with e's increment too.
      if (d >= 0 && s->prefixes[p] != 1 && it.depth < kMaxHoistDepth &&
          Passable(*s, p, &in_p)) {
        work_list.push_back({p, it.a + s->inc.inc[d], it.depth + 1});
        *depth = std::max(*depth, it.depth + 1);
        continue;
      }
      sites->push_back({e, it.a});
    }
  }
  return true;
}

}  // namespace ballarus::plugin
