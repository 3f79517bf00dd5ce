// path_cuts.cc — see path_cuts.h.
#include "core/path_cuts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/path_count128.h"
#include "core/path_increments.h"

namespace ballarus {

using count128::u128;
using count128::SatAdd;
using count128::CountPaths128;

bool PlanPaths(const Function& fn, const std::vector<bool>& may_cut_block,
               uint64_t max_paths, PathPlan* plan, std::string* error) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  auto may_cut = [&](uint32_t b) {
    if (b == kEntryBlock || b == kExitBlock || b >= nb) return false;
    return may_cut_block.empty() || (b < may_cut_block.size() &&
                                     may_cut_block[b]);
  };
  const std::vector<uint32_t> back = FindBackEdges(fn);
  if (max_paths == 0) max_paths = 1;

  // The DAG with back edges cut only: its topological order is the order in
  // which the greedy pass below visits blocks (vertex cuts never reorder).
  PathCuts base;
  base.edges = back;
  PathDag dag0;
  if (!BuildPathDag(fn, base, &dag0, error)) return false;

  u128 limit = max_paths;
  for (int round = 0; round < 130; ++round) {
    // Greedy, in reverse topological order: when a block's paths exceed
    // `limit`, cut its successors with the most paths (a cut successor
    // contributes one path: the one ending at its cut) until they are far
    // below it.
    std::vector<bool> cut(nb, false);
    std::vector<u128> np(nb, 0);
    np[kExitBlock] = 1;
    for (size_t i = dag0.topo.size(); i-- > 0;) {
      uint32_t v = dag0.topo[i];
      if (v == kExitBlock || v >= nb) continue;
      struct Succ {
        u128 paths;
        uint32_t block;  // UINT32_MAX: not cuttable
      };
      std::vector<Succ> succ;
      u128 sum = 0;
      for (uint32_t e : dag0.out[v]) {
        const DagEdge& d = dag0.edges[e];
        u128 p;
        uint32_t w = UINT32_MAX;
        if (d.kind == DagEdge::kBackEnd) {
          p = 1;
        } else if (d.kind == DagEdge::kCfg) {
          w = d.dst;
          p = cut[w] ? 1 : np[w];
          if (cut[w] || !may_cut(w) || p <= 1) w = UINT32_MAX;
        } else {  // kStart from ENTRY
          p = np[d.dst];
        }
        succ.push_back({p, w});
        sum = SatAdd(sum, p);
      }
      // Once over the limit, cut down to far below it: cutting just enough
      // would leave v near the limit and force a cut at every predecessor.
      const u128 low = limit >> 16;
      bool over = sum > limit;
      while (over && sum > low) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < succ.size(); ++k)
          if (succ[k].block != UINT32_MAX &&
              (best == SIZE_MAX || succ[k].paths > succ[best].paths))
            best = k;
        if (best == SIZE_MAX) break;  // nothing left to cut here
        uint32_t w = succ[best].block;
        cut[w] = true;
        // Every edge of v into w now contributes 1.
        sum = 0;
        for (Succ& s : succ) {
          if (s.block == w) {
            s.paths = 1;
            s.block = UINT32_MAX;
          }
          sum = SatAdd(sum, s.paths);
        }
      }
      np[v] = sum;
    }
    // Exact count with these cuts (back edges into cut blocks stop being
    // cut edges: the vertex cut ends those paths).
    PathCuts cuts;
    for (uint32_t i : back)
      if (!cut[fn.edges[i].dst]) cuts.edges.push_back(i);
    for (uint32_t b = 0; b < nb; ++b)
      if (cut[b]) cuts.blocks.push_back(b);
    PathDag dag;
    if (!BuildPathDag(fn, cuts, &dag, error)) return false;
    u128 total = CountPaths128(dag)[kEntryBlock];
    if (total <= max_paths) {
      plan->cuts = std::move(cuts);
      plan->n_paths = static_cast<uint64_t>(total);
      return true;
    }
    if (limit <= 1) break;
    // The paths starting at ENTRY and at every cut still add up to too
    // many: ask every block for fewer.
    limit /= 2;
  }
  *error = "cannot cut the function's paths below " + std::to_string(max_paths);
  return false;
}

namespace {

// The cuts so far: the back edges (minus those into cut blocks), the cut
// blocks.
PathCuts CutsOf(const Function& fn, const std::vector<uint32_t>& back,
                const std::vector<bool>& cut) {
  PathCuts c;
  for (uint32_t i : back)
    if (!cut[fn.edges[i].dst]) c.edges.push_back(i);
  for (uint32_t b = 0; b < cut.size(); ++b)
    if (cut[b]) c.blocks.push_back(b);
  return c;
}

// What a cut at each block costs: the estimated frequency of what enters
// it along path edges, except (headers_free) its back edges -- their paths
// end there already (a counted back edge), and a cut block ends them
// instead.  So a loop header costs only its entries from outside the loop.
std::vector<long double> CutCosts(const Function& fn,
                                  const std::vector<uint32_t>& back,
                                  const std::vector<uint64_t>& cfg_weights,
                                  bool headers_free) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  std::vector<bool> is_back(fn.edges.size(), false);
  for (uint32_t i : back) is_back[i] = true;
  std::vector<long double> freq(nb, 0);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (e.dst < nb && IsPathEdge(e) && !(headers_free && is_back[i]))
      freq[e.dst] += i < cfg_weights.size() ? cfg_weights[i] : 1;
  }
  return freq;
}

// The block whose cut reduces the number of paths most (in log scale) per
// unit of cost, among the blocks not cut yet that may be; UINT32_MAX if no
// single cut helps.
uint32_t BestCut(const PathDag& dag, const std::vector<bool>& cut,
                 const std::vector<bool>& cuttable,
                 const std::vector<long double>& freq) {
  // Paths from every start to each vertex (in) and from it to an end
  // (out), in floating point: only to rank the candidates.
  std::vector<long double> in(dag.n_vertices, 0), out(dag.n_vertices, 0);
  in[kEntryBlock] = 1;
  for (uint32_t v : dag.topo)
    for (uint32_t e : dag.out[v]) in[dag.edges[e].dst] += in[v];
  out[kExitBlock] = 1;
  for (size_t k = dag.topo.size(); k-- > 0;) {
    const uint32_t v = dag.topo[k];
    for (uint32_t e : dag.out[v]) out[v] += out[dag.edges[e].dst];
  }
  const long double t = out[kEntryBlock];
  uint32_t best = UINT32_MAX;
  long double best_score = 0;
  for (uint32_t w = 2; w < cut.size(); ++w) {
    if (cut[w] || !cuttable[w]) continue;
    const long double i = in[w], o = out[w];
    const long double starts = dag.start_edge[w] >= 0 ? 1 : 0;
    // Paths through w become prefixes ending at w and suffixes from it.
    const long double after = t - i * o + (i - starts) + o;
    if (!(after < t) || after < 1) continue;
    const long double score = (logl(t) - logl(after)) / (freq[w] + 1);
    if (score > best_score) {
      best_score = score;
      best = w;
    }
  }
  return best;
}

// Greedy adds cuts that later ones make unnecessary: takes back every cut
// the function still fits without, the costliest first (reverse delete);
// *total follows.
void ReverseDelete(const Function& fn, const std::vector<uint32_t>& back,
                   const std::vector<long double>& freq, uint64_t max_paths,
                   std::vector<bool>* cut, u128* total, std::string* error) {
  std::vector<uint32_t> taken;
  for (uint32_t b = 0; b < cut->size(); ++b)
    if ((*cut)[b]) taken.push_back(b);
  std::stable_sort(taken.begin(), taken.end(),
                   [&](uint32_t a, uint32_t b) { return freq[a] > freq[b]; });
  // One pass.  Not monotone (a cut where one prefix arrives, or whence one
  // suffix leaves, adds a path), so a cut kept early could sometimes go
  // after later ones; repeating the pass until nothing changes takes back
  // more cuts but runs slower (cold cuts make the register a known constant
  // downstream; docs/performance.md, "Reverse delete").
  for (uint32_t b : taken) {
    (*cut)[b] = false;
    PathDag without;
    u128 n = 0;
    if (BuildPathDag(fn, CutsOf(fn, back, *cut), &without, error) &&
        (n = CountPaths128(without)[kEntryBlock]) <= max_paths) {
      *total = n;
    } else {
      (*cut)[b] = true;
    }
  }
}

// PlanPathsWeighted's greedy.  headers_free: a block's cost leaves out its
// back edges; reverse_delete: then take back the cuts not needed.
bool GreedyPlan(const Function& fn, const std::vector<bool>& may_cut_block,
                const std::vector<uint64_t>& cfg_weights, uint64_t max_paths,
                bool headers_free, bool reverse_delete, PathPlan* plan,
                std::string* error) {
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  if (max_paths == 0) max_paths = 1;
  std::vector<bool> cuttable(nb, false);
  for (uint32_t b = 0; b < nb; ++b)
    cuttable[b] = b != kEntryBlock && b != kExitBlock &&
                  (may_cut_block.empty() ||
                   (b < may_cut_block.size() && may_cut_block[b]));
  const std::vector<uint32_t> back = FindBackEdges(fn);
  std::vector<bool> cut(nb, false);
  PathDag dag;
  if (!BuildPathDag(fn, CutsOf(fn, back, cut), &dag, error)) return false;
  u128 total = CountPaths128(dag)[kEntryBlock];
  if (total > (static_cast<u128>(1) << 120)) {
    // Beyond what the estimates below handle well: coarse cuts first.
    PathPlan coarse;
    if (!PlanPaths(fn, may_cut_block, kMaxInstrumentedPaths, &coarse, error))
      return false;
    for (uint32_t b : coarse.cuts.blocks) cut[b] = true;
    if (!BuildPathDag(fn, CutsOf(fn, back, cut), &dag, error)) return false;
    total = CountPaths128(dag)[kEntryBlock];
  }
  const std::vector<long double> freq =
      CutCosts(fn, back, cfg_weights, headers_free);
  while (total > max_paths) {
    const uint32_t best = BestCut(dag, cut, cuttable, freq);
    if (best == UINT32_MAX) {
      // No single cut helps: take the coarse planner's cuts (then trimmed
      // below like the greedy's).
      PathPlan coarse;
      if (!PlanPaths(fn, may_cut_block, max_paths, &coarse, error))
        return false;
      std::fill(cut.begin(), cut.end(), false);
      for (uint32_t b : coarse.cuts.blocks) cut[b] = true;
      total = coarse.n_paths;
      break;
    }
    cut[best] = true;
    if (!BuildPathDag(fn, CutsOf(fn, back, cut), &dag, error)) return false;
    total = CountPaths128(dag)[kEntryBlock];
  }
  if (reverse_delete)
    ReverseDelete(fn, back, freq, max_paths, &cut, &total, error);
  error->clear();
  plan->cuts = CutsOf(fn, back, cut);
  plan->n_paths = static_cast<uint64_t>(total);
  return true;
}

}  // namespace

long double EstimatePlanCost(const Function& fn, const PathCuts& cuts,
                             const std::vector<uint64_t>& cfg_weights) {
  PathDag dag;
  std::string err;
  PathIncrements inc;
  if (!BuildPathDag(fn, cuts, &dag, &err) ||
      !PlaceIncrements(fn, dag, cfg_weights, &inc, &err))
    return HUGE_VALL;
  auto w = [&](uint32_t i) -> long double {
    return i < cfg_weights.size() ? cfg_weights[i] : 1;
  };
  std::vector<long double> freq(dag.n_blocks, 0);
  for (uint32_t i = 0; i < fn.edges.size(); ++i)
    if (fn.edges[i].dst < dag.n_blocks && IsPathEdge(fn.edges[i]))
      freq[fn.edges[i].dst] += w(i);
  // One prefix or several reach each vertex: is the register a constant?
  const std::vector<uint8_t> prefixes = CountPrefixes(dag);
  long double cost = 0;
  for (size_t d = 0; d < dag.edges.size(); ++d) {
    const DagEdge& de = dag.edges[d];
    const bool var = prefixes[de.src] > 1;
    switch (de.kind) {
      case DagEdge::kStart:
        break;
      case DagEdge::kBackEnd:
        cost += w(de.ref) * (var ? 2 : 1);
        break;
      case DagEdge::kCutEnd:
        cost += freq[de.ref] * (prefixes[de.src] > 1 ? 2 : 1);
        break;
      case DagEdge::kCfg:
        if (de.dst == kExitBlock) {
          // A return, or a call that may not return: counted before the
          // call, every time its block runs.
          const bool fake = fn.edges[de.ref].flags & kEdgeFake;
          cost += (fake ? freq[de.src] : w(de.ref)) * (var ? 2 : 1);
        } else if (!inc.in_tree[d] && inc.inc[d] != 0 && var &&
                   de.src != kEntryBlock) {
          cost += w(de.ref);  // an addition GCC cannot fold
        }
        break;
    }
  }
  return cost;
}

bool PlanPathsWeighted(const Function& fn,
                       const std::vector<bool>& may_cut_block,
                       const std::vector<uint64_t>& cfg_weights,
                       uint64_t max_paths, PathPlan* plan, std::string* error) {
  // Two plans, the cheaper by EstimatePlanCost: the greedy pricing a cut
  // by everything entering its block, and the greedy pricing loop headers
  // by their entries only, then trimmed (reverse delete).
  PathPlan a, b;
  if (!GreedyPlan(fn, may_cut_block, cfg_weights, max_paths, false, false,
                  &a, error))
    return false;
  if (a.cuts.blocks.empty() ||
      !GreedyPlan(fn, may_cut_block, cfg_weights, max_paths, true, true, &b,
                  error)) {
    error->clear();
    *plan = std::move(a);
    return true;
  }
  const long double ca = EstimatePlanCost(fn, a.cuts, cfg_weights);
  const long double cb = EstimatePlanCost(fn, b.cuts, cfg_weights);
  *plan = cb < ca ? std::move(b) : std::move(a);
  return true;
}

}  // namespace ballarus
