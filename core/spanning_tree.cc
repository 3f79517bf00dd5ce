// spanning_tree.cc — Kruskal maximum spanning tree over the closed CFG
// (see spanning_tree.h; Ball & Larus TOPLAS'94 §3.2).
#include "core/spanning_tree.h"

#include <algorithm>
#include <numeric>

#include "core/disjoint_sets.h"

namespace ballarus {

bool IsUncountableEdge(const Edge& e) {
  return (e.flags & (kEdgeFake | kEdgeAbnormal | kEdgeIgnored)) != 0;
}

std::vector<size_t> IgnoreUncountableCycles(Function* fn) {
  DisjointSets sets(fn->blocks.size());
  sets.Union(kExitBlock, kEntryBlock);  // the virtual edge
  std::vector<size_t> dropped;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < fn->edges.size(); ++i) {
      Edge& e = fn->edges[i];
      if ((e.flags & kEdgeIgnored) || !IsUncountableEdge(e)) continue;
      const bool from_entry = e.src == kEntryBlock;
      if ((pass == 0) != from_entry) continue;
      if (!sets.Union(e.src, e.dst)) {
        e.flags |= kEdgeIgnored;
        dropped.push_back(i);
      }
    }
  }
  std::sort(dropped.begin(), dropped.end());
  return dropped;
}

SpanningTree MaximumSpanningTree(const Function& fn,
                                 const std::vector<uint64_t>& weights,
                                 const std::vector<size_t>& known) {
  const size_t nb = fn.blocks.size();
  const size_t ne = fn.edges.size();
  SpanningTree t;
  t.in_tree.assign(ne, false);
  DisjointSets sets(nb);
  size_t unions = 0;

  auto used = [&](const Edge& e) {
    return !(e.flags & kEdgeIgnored) && e.src < nb && e.dst < nb;
  };
  std::vector<bool> is_known(ne, false);
  for (size_t i : known)
    if (i < ne && used(fn.edges[i]) && !IsUncountableEdge(fn.edges[i]))
      is_known[i] = true;
  std::vector<bool> chord(ne, false);
  auto add = [&](size_t i) {
    const Edge& e = fn.edges[i];
    if (sets.Union(e.src, e.dst)) {
      t.in_tree[i] = true;
      ++unions;
    } else {
      chord[i] = true;
    }
  };

  // 1. The virtual edge EXIT->ENTRY.
  if (nb > kExitBlock && sets.Union(kExitBlock, kEntryBlock)) ++unions;
  // 2. Edges that cannot hold a counter, in edge order.
  std::vector<size_t> rest;
  rest.reserve(ne);
  for (size_t i = 0; i < ne; ++i) {
    const Edge& e = fn.edges[i];
    if (!used(e) || is_known[i]) continue;
    if (IsUncountableEdge(e))
      add(i);
    else
      rest.push_back(i);
  }
  // 3. The others, heaviest first; ties: critical edges first (a counter on
  //    them would need a split), then lower index.  A total order, so the
  //    result does not depend on the sort algorithm.
  auto weight = [&](size_t i) { return i < weights.size() ? weights[i] : 0; };
  std::sort(rest.begin(), rest.end(), [&](size_t a, size_t b) {
    if (weight(a) != weight(b)) return weight(a) > weight(b);
    const bool ca = fn.edges[a].flags & kEdgeCritical;
    const bool cb = fn.edges[b].flags & kEdgeCritical;
    if (ca != cb) return ca;
    return a < b;
  });
  for (size_t i : rest) add(i);
  // 4. Edges known without a counter, only where the tree needs them.
  for (size_t i = 0; i < ne; ++i)
    if (is_known[i]) add(i);

  for (size_t i = 0; i < ne; ++i) {
    if (!chord[i]) continue;
    if (is_known[i])
      t.known_chords.push_back(i);
    else if (IsUncountableEdge(fn.edges[i]))
      t.uncountable_chords.push_back(i);
    else
      t.chords.push_back(i);
  }
  t.components = nb - unions;
  return t;
}

}  // namespace ballarus
