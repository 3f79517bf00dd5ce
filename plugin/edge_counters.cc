// edge_counters.cc — edge counters, from the choice of the edges that hold
// one to the GIMPLE that increments them.
//
// Edge mode (the default) places counters only on the chords of a maximum
// spanning tree of the closed CFG (Knuth 1973; Ball & Larus, TOPLAS 1994),
// weighted by estimator/ (or GCC's frequencies, or an earlier profile):
// |E|-|V|+1 counters per function, on the edges the weights call cold;
// ballarus-reconstruct derives every other edge by flow conservation.
// Edges that cannot hold a counter (fake, EH, abnormal) go into the tree
// first.  Naive mode places one 64-bit counter on every edge that can hold
// one.  Instrumentation of a counted edge, before and after:
//
//   <bb 3>:                          <bb 3>:
//   if (x_1 > 0) goto <bb 4>;        if (x_1 > 0) goto <bb 4>;
//   else goto <bb 5>;                else goto <bb 5>;
//                                    <bb 4>:            (edge 3->4 had one pred)
//   <bb 4>:                          BLRS_ctr_1 = __ballarus_counters[7];
//   ...                              BLRS_ctr_2 = BLRS_ctr_1 + 1;
//                                    __ballarus_counters[7] = BLRS_ctr_2;
//                                    ...
//
// (with update=atomic the three statements are one
// __atomic_fetch_add_8 (&__ballarus_counters[7], 1, RELAXED)).  Edge
// insertions go through gsi_insert_on_edge, so an edge is split only when
// neither its source nor its target can hold the code.  How the add itself
// is built (single, atomic, per thread, in a loop's local) is decided by
// counter_emit.cc and loop_registers.cc.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/spanning_tree.h"
#include "plugin/options.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/edge_counters.h"
#include "plugin/loop_registers.h"

namespace ballarus::plugin {

namespace {

// Fake edges do not exist at run time and abnormal edges cannot be split;
// neither can hold a counter.  EH edges can: GIMPLE splits them by giving
// the new block its own landing pad, as gcov relies on too.  Counting them
// matters: a block ending in a throwing call that may also not return has
// an EH and a fake successor, and landing pads shared by several such
// blocks would otherwise close cycles of unknown edges.
bool CanHoldCounter(uint32_t flags) {
  return !(flags & (ballarus::kEdgeAbnormal | ballarus::kEdgeFake |
                    ballarus::kEdgeIgnored));
}

// Builds `counters[index] += 1` on edge E, queued with gsi_insert_on_edge.
void QueueIncrement(edge e, tree counters, uint64_t index, bool atomic) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  gimple_seq seq = NULL;
  if (const int loop = RegisterLoopOf(e); loop >= 0) {
    AppendRegisterAdd(&seq, loop, counters, index, build_int_cst(u64, 1));
    gsi_insert_seq_on_edge(e, seq);
    return;
  }
  tree ref = build4(ARRAY_REF, u64, counters,
                    build_int_cst(integer_type_node, index), NULL_TREE,
                    NULL_TREE);
  AppendCounterAdd(&seq, ref, build_int_cst(u64, 1), atomic,
                   RunsPerIteration(e));
  gsi_insert_seq_on_edge(e, seq);
}

// Which of fn's edges get a counter under mode= (and spanning_tree, as for
// PlaceEdgeCounters).  Dumps the spanning tree.
std::vector<bool> ChooseCountedEdges(const ballarus::Function& fn,
                                     const std::vector<uint64_t>& weights,
                                     bool spanning_tree,
                                     const std::vector<size_t>& known) {
  std::vector<bool> counted(fn.edges.size(), false);
  if (g_options.mode == Mode::kNone && !spanning_tree) {
    // Path mode alone: no edge counters.
    if (dump_file) fprintf(dump_file, "  edge counters: none (mode=path)\n");
  } else if (g_options.mode == Mode::kNaive) {
    size_t n = 0;
    for (size_t i = 0; i < fn.edges.size(); ++i)
      n += counted[i] = CanHoldCounter(fn.edges[i].flags);
    if (dump_file)
      fprintf(dump_file,
              "  naive: %zu of %zu edges get counters (every edge that can "
              "hold one)\n",
              n, fn.edges.size());
  } else {
    ballarus::SpanningTree tree =
        ballarus::MaximumSpanningTree(fn, weights, known);
    for (size_t i : tree.chords) counted[i] = true;
    if (dump_file) {
      fprintf(dump_file,
              "  maximum spanning tree: %zu chords get counters "
              "(|E|-|V|+1 with the virtual EXIT->ENTRY edge)\n",
              tree.chords.size());
      for (size_t i = 0; i < fn.edges.size(); ++i)
        if (tree.in_tree[i])
          fprintf(dump_file, "  edge %u->%u on tree (weight %llu)\n",
                  fn.edges[i].src, fn.edges[i].dst,
                  (unsigned long long)weights[i]);
    }
    for (size_t i : tree.known_chords)
      if (dump_file)
        fprintf(dump_file,
                "  edge %u->%u is a chord whose count the calls give: no "
                "counter\n",
                fn.edges[i].src, fn.edges[i].dst);
    for (size_t i : tree.uncountable_chords) {
      // Only when fake/EH/abnormal edges alone close a cycle (gcov drops
      // such a fake edge).  Its count stays unknown; verify reports it.
      if (dump_file)
        fprintf(dump_file,
                "  edge %u->%u is a chord but cannot hold a counter: its "
                "count is not derivable\n",
                fn.edges[i].src, fn.edges[i].dst);
    }
  }
  return counted;
}

}  // namespace

void PlaceEdgeCounters(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       uint64_t* next_counter, EdgeCounters* out,
                       bool spanning_tree, const std::vector<size_t>& known) {
  const std::vector<bool> counted =
      ChooseCountedEdges(*fn, weights, spanning_tree, known);
  for (size_t i = 0; i < fn->edges.size(); ++i) {
    ballarus::Edge& me = fn->edges[i];
    if (counted[i]) {
      me.counter = static_cast<int64_t>(*next_counter);
      // A re-entry edge (no GCC edge) is counted at its call's return
      // (reentry.cc), not by an increment on an edge.
      if (gcc_edges[i] != nullptr) {
        out->counted.emplace_back(gcc_edges[i], *next_counter);
        out->counted_model_edge.push_back(i);
      }
      ++*next_counter;
    } else if (dump_file && !CanHoldCounter(me.flags)) {
      const char* why = (me.flags & ballarus::kEdgeIgnored)
                            ? "abnormal, replaced by fake edges; count unknown"
                        : (me.flags & ballarus::kEdgeFake)
                            ? "fake; derived by flow conservation"
                            : "abnormal; derived by flow conservation";
      fprintf(dump_file, "  edge %d->%d no counter (%s)\n", me.src, me.dst,
              why);
    }
  }
}

void EmitEdgeCounters(const EdgeCounters& work, ballarus::Function* fn,
                      tree counters, bool atomic) {
  for (const auto& ec : work.counted)
    QueueIncrement(ec.first, counters, ec.second, atomic);
  for (size_t i = 0; i < work.counted.size(); ++i) {
    edge e = work.counted[i].first;
    int src = e->src->index, dst = e->dest->index;
    // Where gimple_find_edge_insert_loc will put the code, for the dump.
    const char* where =
        (single_pred_p(e->dest) && gimple_seq_empty_p(phi_nodes(e->dest)) &&
         e->dest != EXIT_BLOCK_PTR_FOR_FN(cfun))
            ? "in target block"
            : "in source block";
    // How the increment is made, for the dump (before e may be split).
    const int reg_loop = RegisterLoopOf(e);
    const bool barrier =
        reg_loop < 0 && !atomic && g_options.loop_barrier &&
        RunsPerIteration(e);
    basic_block new_bb = NULL;
    gsi_commit_one_edge_insert(e, &new_bb);
    ballarus::Edge& me = fn->edges[work.counted_model_edge[i]];
    if (new_bb) {
      me.flags |= ballarus::kEdgeSplit;
      where = "edge split";
    }
    if (dump_file)
      fprintf(dump_file, "  edge %d->%d counter #%llu (%s)\n", src, dst,
              (unsigned long long)work.counted[i].second, where);
    if (dump_file && reg_loop >= 0)
      fprintf(dump_file,
              "  edge %d->%d counter #%llu: added to a local of the loop at "
              "block %d (loop registers)\n",
              src, dst, (unsigned long long)work.counted[i].second,
              reg_loop);
    else if (dump_file && barrier)
      fprintf(dump_file,
              "  edge %d->%d counter #%llu: followed by a barrier (a loop "
              "that may touch counter memory)\n",
              src, dst, (unsigned long long)work.counted[i].second);
  }
}

}  // namespace ballarus::plugin
