// wu_larus.cc — Wu & Larus' static edge frequencies (MICRO 1994).
//
// 1. Graph.  The function's edges that are not kEdgeIgnored (and stay
//    inside it).  Fake, EH and abnormal edges are rare ways out: they get
//    probability 0 unless a block has no other successor.
// 2. Loops.  A back edge is an edge whose target dominates its source; a
//    header's natural loop is the header and every block that reaches one
//    of its back edges without passing the header (loops sharing a header
//    are one loop).  Retreating edges of irreducible regions are not back
//    edges: like GCC's propagate_freq, the propagation ignores them.
// 3. Heuristics (Ball & Larus, "Branch prediction for free", PLDI 1993),
//    on a block with exactly two ordinary successors reached by distinct
//    edges; each applies when it tells the two apart ("post-dominating"
//    below is a successor that post-dominates the branch, which runs
//    whichever way the branch goes; post-dominance ignores fake edges):
//      loop branch  one edge goes back (a back edge, or the edge into a
//                   latch whose only way on is a back edge): it is taken;
//      pointer      BlockHint::pointer;
//      call         a successor that calls and does not post-dominate is
//                   avoided;
//      opcode       BlockHint::opcode;
//      loop exit    neither edge goes back nor leads to a loop header,
//                   one leaves the branch's innermost loop: it is avoided;
//      return       a successor that returns (has an edge to EXIT, or its
//                   only successor returns) is avoided;
//      store        a successor that stores and does not post-dominate is
//                   avoided;
//      loop header  a successor entered by an edge that is not a back
//                   edge, that is a loop header or whose only successor
//                   is one by an edge that is not a back edge (a
//                   pre-header), and does not post-dominate is taken;
//      guard        a successor that uses a value the condition compares
//                   (BranchHints::guard_use) and does not post-dominate is
//                   taken.
//    Wu & Larus measured each heuristic's hit rate (HitRate); starting from
//    1/2, every one that applies is combined by Dempster–Shafer
//    (CombineEvidence).  Other blocks split evenly.
// 4. Frequencies (Wu & Larus §4, GCC's estimate_loops / propagate_freq):
//    loops innermost first, then the function from ENTRY; within each, the
//    head has frequency 1, and blocks in reverse post-order get the sum of
//    their forward in-edges' frequencies, divided by 1 - c where c (the
//    cyclic probability) is the sum of the back-edge probabilities an
//    inner loop's pass found for its header; an edge's frequency is its
//    source's times its probability, and an edge back to the current head
//    leaves that as its back-edge probability.  c is capped at
//    1 - 1/(kMaxPredictedIterations + 1), GCC's
//    param_max_predicted_iterations (100).
// 5. Weights: frequency per activation times kActivationWeight, rounded,
//    saturated at 2^62, at least 1.
#include "estimator/wu_larus.h"

#include <algorithm>
#include <cmath>

namespace ballarus {
namespace {

constexpr uint32_t kLowFlags = kEdgeFake | kEdgeEh | kEdgeAbnormal;
constexpr uint32_t kNone = UINT32_MAX;
constexpr double kMaxPredictedIterations = 100;
constexpr double kWeightLimit = 4611686018427387904.0;  // 2^62

using Adj = std::vector<std::vector<size_t>>;  // edge ids per block

// The graph of step 1 with the dominator trees and loops of step 2.
class Cfg {
 public:
  Cfg(const Function& fn, const BranchHints& hints);

  const Function& fn;
  const BranchHints& hints;
  uint32_t nb;
  Adj out, in;                // used edges
  std::vector<uint32_t> rpo;  // reverse post-order from ENTRY
  std::vector<uint32_t> rpo_index;
  std::vector<uint32_t> idom, ipdom;
  std::vector<bool> back;  // per edge
  // Loops, innermost (smallest) first: header, member blocks.
  std::vector<uint32_t> header;
  std::vector<std::vector<bool>> member;
  std::vector<int> innermost;  // per block, -1: none
  std::vector<bool> is_header;

  bool Ordinary(size_t e) const { return !(fn.edges[e].flags & kLowFlags); }
  bool Retreating(size_t e) const {
    const uint32_t s = fn.edges[e].src, d = fn.edges[e].dst;
    return rpo_index[s] == kNone || rpo_index[s] >= rpo_index[d];
  }
  // Whether `a` post-dominates `b` (every path from b to EXIT passes a).
  bool PostDominates(uint32_t a, uint32_t b) const {
    return Above(ipdom, a, b);
  }
  bool Returns(uint32_t b) const { return returns_[b] == 1; }
  // A back edge, or an edge into a latch: a block whose only ordinary
  // successor is reached by a back edge (GIMPLE gives loops such latches;
  // in the machine code Ball & Larus read, the branch itself jumps back).
  bool GoesBack(size_t e) const {
    if (back[e]) return true;
    const std::vector<size_t> o = OrdinaryOut(fn.edges[e].dst);
    return o.size() == 1 && back[o[0]];
  }
  std::vector<size_t> OrdinaryOut(uint32_t b) const {
    std::vector<size_t> r;
    for (size_t e : out[b])
      if (Ordinary(e)) r.push_back(e);
    return r;
  }

 private:
  static bool Above(const std::vector<uint32_t>& tree, uint32_t a,
                    uint32_t b);
  std::vector<uint32_t> PostOrder(uint32_t root, bool forward,
                                  bool with_fake) const;
  std::vector<uint32_t> Dominators(uint32_t root, bool forward,
                                   bool with_fake) const;
  void FindLoops();
  void FindReturns();
  std::vector<int8_t> returns_;  // per block: 1 returns, 0 not
};

bool Cfg::Above(const std::vector<uint32_t>& tree, uint32_t a, uint32_t b) {
  for (uint32_t v = b; v != kNone; v = tree[v] == v ? kNone : tree[v])
    if (v == a) return true;
  return false;
}

// The blocks reachable from `root` along (forward) or against the edges,
// in DFS post-order; fake edges only `with_fake`.
std::vector<uint32_t> Cfg::PostOrder(uint32_t root, bool forward,
                                     bool with_fake) const {
  std::vector<uint32_t> order;
  std::vector<bool> seen(nb, false);
  std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
  seen[root] = true;
  while (!stack.empty()) {
    auto& [v, i] = stack.back();
    const std::vector<size_t>& next = forward ? out[v] : in[v];
    if (i < next.size()) {
      const size_t e = next[i++];
      const uint32_t w = forward ? fn.edges[e].dst : fn.edges[e].src;
      if ((with_fake || !(fn.edges[e].flags & kEdgeFake)) && !seen[w]) {
        seen[w] = true;
        stack.push_back({w, 0});
      }
      continue;
    }
    order.push_back(v);
    stack.pop_back();
  }
  return order;
}

// Cooper, Harvey & Kennedy, "A simple, fast dominance algorithm" (2001):
// immediate dominators from `root` along (forward) or against the edges;
// the root is its own, unreachable blocks get kNone.
std::vector<uint32_t> Cfg::Dominators(uint32_t root, bool forward,
                                      bool with_fake) const {
  auto usable = [&](size_t e) {
    return with_fake || !(fn.edges[e].flags & kEdgeFake);
  };
  const std::vector<uint32_t> order = PostOrder(root, forward, with_fake);
  std::vector<uint32_t> index(nb, kNone);
  for (size_t k = 0; k < order.size(); ++k)
    index[order[k]] = static_cast<uint32_t>(k);
  std::vector<uint32_t> dom(nb, kNone);
  dom[root] = root;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (index[a] < index[b]) a = dom[a];
      while (index[b] < index[a]) b = dom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = order.size(); k-- > 0;) {
      const uint32_t v = order[k];
      if (v == root) continue;
      uint32_t d = kNone;
      for (size_t e : forward ? in[v] : out[v]) {
        const uint32_t p = forward ? fn.edges[e].src : fn.edges[e].dst;
        if (!usable(e) || index[p] == kNone || dom[p] == kNone) continue;
        d = d == kNone ? p : intersect(p, d);
      }
      if (d != dom[v]) {
        dom[v] = d;
        changed = true;
      }
    }
  }
  return dom;
}

Cfg::Cfg(const Function& f, const BranchHints& h)
    : fn(f), hints(h), nb(static_cast<uint32_t>(f.blocks.size())) {
  out.resize(nb);
  in.resize(nb);
  for (size_t e = 0; e < fn.edges.size(); ++e) {
    const Edge& x = fn.edges[e];
    if ((x.flags & kEdgeIgnored) || x.src >= nb || x.dst >= nb ||
        x.dst == kEntryBlock || x.src == kExitBlock)
      continue;
    out[x.src].push_back(e);
    in[x.dst].push_back(e);
  }
  idom = Dominators(kEntryBlock, true, true);
  ipdom = Dominators(kExitBlock, false, false);
  rpo = PostOrder(kEntryBlock, true, true);
  rpo_index.assign(nb, kNone);
  std::reverse(rpo.begin(), rpo.end());
  for (size_t k = 0; k < rpo.size(); ++k)
    rpo_index[rpo[k]] = static_cast<uint32_t>(k);
  FindLoops();
  FindReturns();
}

void Cfg::FindLoops() {
  back.assign(fn.edges.size(), false);
  is_header.assign(nb, false);
  innermost.assign(nb, -1);
  for (uint32_t b = 0; b < nb; ++b)
    for (size_t e : out[b])
      if (idom[b] != kNone && Above(idom, fn.edges[e].dst, b)) {
        back[e] = true;
        is_header[fn.edges[e].dst] = true;
      }
  std::vector<std::pair<size_t, uint32_t>> order;  // (body size, header)
  std::vector<std::vector<bool>> bodies(nb);
  for (uint32_t h = 0; h < nb; ++h) {
    if (!is_header[h]) continue;
    std::vector<bool> body(nb, false);
    body[h] = true;
    std::vector<uint32_t> work;
    for (size_t e : in[h])
      if (back[e] && !body[fn.edges[e].src]) {
        body[fn.edges[e].src] = true;
        work.push_back(fn.edges[e].src);
      }
    size_t size = 1 + work.size();
    while (!work.empty()) {
      const uint32_t v = work.back();
      work.pop_back();
      for (size_t e : in[v]) {
        const uint32_t p = fn.edges[e].src;
        if (body[p] || rpo_index[p] == kNone) continue;
        body[p] = true;
        ++size;
        work.push_back(p);
      }
    }
    order.push_back({size, h});
    bodies[h] = std::move(body);
  }
  std::sort(order.begin(), order.end());
  for (auto [size, h] : order) {
    const int l = static_cast<int>(header.size());
    header.push_back(h);
    member.push_back(std::move(bodies[h]));
    for (uint32_t b = 0; b < nb; ++b)
      if (member[l][b] && innermost[b] < 0) innermost[b] = l;
  }
}

// A block returns if it has an ordinary edge to EXIT, or if its only
// ordinary successor returns.
void Cfg::FindReturns() {
  returns_.assign(nb, 0);
  std::vector<bool> done(nb, false);
  for (uint32_t b = 0; b < nb; ++b) {
    std::vector<uint32_t> chain;
    uint32_t v = b;
    int8_t r = 0;
    while (!done[v]) {
      done[v] = true;
      chain.push_back(v);
      const std::vector<size_t> o = OrdinaryOut(v);
      bool to_exit = false;
      for (size_t e : o) to_exit |= fn.edges[e].dst == kExitBlock;
      if (to_exit) {
        r = 1;
        break;
      }
      if (o.size() != 1) break;
      v = fn.edges[o[0]].dst;
      if (done[v]) r = returns_[v];
    }
    for (uint32_t c : chain) returns_[c] = r;
  }
}

const double kHitRates[kHeuristicCount] = {0.88, 0.60, 0.78, 0.84, 0.80,
                                           0.72, 0.55, 0.75, 0.62};

// Which of the two edges of a two-way branch a one-sided property calls
// likelier: the one with it (`prefer`) or the one without; none if both or
// neither have it.
int Pick(bool has0, bool has1, bool prefer) {
  if (has0 == has1) return -1;
  return (has0 == prefer) ? 0 : 1;
}

// The side (0 or 1) a condition hint calls likelier: +1 means the true
// edge.
int PickCondition(const Cfg& g, int8_t hint, size_t e0, size_t e1) {
  if (hint == 0) return -1;
  const uint32_t want = hint > 0 ? kEdgeTrue : kEdgeFalse;
  if (g.fn.edges[e0].flags & want) return 0;
  if (g.fn.edges[e1].flags & want) return 1;
  return -1;
}

// The applied heuristics of a two-way block with ordinary edges e0, e1:
// (heuristic, side 0 or 1 called likelier).
std::vector<std::pair<Heuristic, int>> Apply(const Cfg& g, uint32_t b,
                                             size_t e0, size_t e1) {
  std::vector<std::pair<Heuristic, int>> r;
  const uint32_t d0 = g.fn.edges[e0].dst, d1 = g.fn.edges[e1].dst;
  if (d0 == d1) return r;
  const BlockHint none;
  auto hint = [&](uint32_t v) -> const BlockHint& {
    return v < g.hints.blocks.size() ? g.hints.blocks[v] : none;
  };
  auto guard = [&](size_t e) {
    return e < g.hints.guard_use.size() && g.hints.guard_use[e];
  };
  const bool pd0 = g.PostDominates(d0, b), pd1 = g.PostDominates(d1, b);
  auto add = [&](Heuristic h, int side) {
    if (side >= 0) r.push_back({h, side});
  };
  const bool back0 = g.GoesBack(e0), back1 = g.GoesBack(e1);
  add(Heuristic::kLoopBranch, Pick(back0, back1, true));
  add(Heuristic::kPointer, PickCondition(g, hint(b).pointer, e0, e1));
  add(Heuristic::kCall,
      Pick(hint(d0).call && !pd0, hint(d1).call && !pd1, false));
  add(Heuristic::kOpcode, PickCondition(g, hint(b).opcode, e0, e1));
  const int l = g.innermost[b];
  if (!back0 && !back1 && !g.is_header[d0] && !g.is_header[d1] && l >= 0)
    add(Heuristic::kLoopExit, Pick(!g.member[l][d0], !g.member[l][d1], false));
  add(Heuristic::kReturn, Pick(g.Returns(d0), g.Returns(d1), false));
  add(Heuristic::kStore,
      Pick(hint(d0).store && !pd0, hint(d1).store && !pd1, false));
  // Entering a loop, not going round one (that is the loop branch).
  auto enters_loop = [&](size_t e) {
    const uint32_t d = g.fn.edges[e].dst;
    if (g.back[e]) return false;
    if (g.is_header[d]) return true;
    const std::vector<size_t> o = g.OrdinaryOut(d);
    return o.size() == 1 && !g.back[o[0]] && g.is_header[g.fn.edges[o[0]].dst];
  };
  add(Heuristic::kLoopHeader,
      Pick(enters_loop(e0) && !pd0, enters_loop(e1) && !pd1, true));
  add(Heuristic::kGuard, Pick(guard(e0) && !pd0, guard(e1) && !pd1, true));
  return r;
}

// Step 3: per edge, the probability its source leaves by it.
std::vector<double> Probabilities(const Cfg& g) {
  std::vector<double> p(g.fn.edges.size(), 0.0);
  for (uint32_t b = 0; b < g.nb; ++b) {
    const std::vector<size_t> o = g.OrdinaryOut(b);
    if (o.size() == 2) {
      double p0 = 0.5;
      for (auto [h, side] : Apply(g, b, o[0], o[1]))
        p0 = CombineEvidence(p0, side == 0 ? HitRate(h) : 1 - HitRate(h));
      p[o[0]] = p0;
      p[o[1]] = 1 - p0;
    } else if (!o.empty()) {
      for (size_t e : o) p[e] = 1.0 / o.size();
    } else {
      for (size_t e : g.out[b]) p[e] = 1.0 / g.out[b].size();
    }
  }
  return p;
}

// Step 4: one pass from `head` over the blocks `in` admits.
template <typename In>
void Propagate(const Cfg& g, uint32_t head, In in,
               const std::vector<double>& prob, std::vector<double>* freq,
               std::vector<double>* edge_freq, std::vector<double>* back_prob) {
  const double max_cyclic = 1 - 1 / (kMaxPredictedIterations + 1);
  for (uint32_t b : g.rpo) {
    if (!in(b) || g.rpo_index[b] < g.rpo_index[head]) continue;
    double f = 0, cyclic = 0;
    if (b == head) {
      f = 1;
    } else {
      for (size_t e : g.in[b]) {
        if (!in(g.fn.edges[e].src)) continue;
        if (g.back[e])
          cyclic += (*back_prob)[e];
        else if (!g.Retreating(e))
          f += (*edge_freq)[e];
      }
      f /= 1 - std::min(cyclic, max_cyclic);
    }
    (*freq)[b] = f;
    for (size_t e : g.out[b]) {
      (*edge_freq)[e] = f * prob[e];
      if (g.back[e] && g.fn.edges[e].dst == head)
        (*back_prob)[e] = (*edge_freq)[e];
    }
  }
}

}  // namespace

double HitRate(Heuristic h) { return kHitRates[static_cast<int>(h)]; }

const char* HeuristicName(Heuristic h) {
  static const char* const kNames[kHeuristicCount] = {
      "loop-branch", "pointer", "call",  "opcode", "loop-exit",
      "return",      "store",   "loop-header", "guard"};
  return kNames[static_cast<int>(h)];
}

double CombineEvidence(double p, double q) {
  const double d = p * q + (1 - p) * (1 - q);
  return d == 0 ? 0.5 : p * q / d;
}

std::vector<double> WuLarusProbabilities(const Function& fn,
                                         const BranchHints& hints) {
  if (fn.blocks.size() < 2) return std::vector<double>(fn.edges.size(), 0);
  return Probabilities(Cfg(fn, hints));
}

std::vector<std::vector<AppliedHeuristic>> AppliedHeuristics(
    const Function& fn, const BranchHints& hints) {
  std::vector<std::vector<AppliedHeuristic>> r(fn.blocks.size());
  if (fn.blocks.size() < 2) return r;
  const Cfg g(fn, hints);
  for (uint32_t b = 0; b < g.nb; ++b) {
    const std::vector<size_t> o = g.OrdinaryOut(b);
    if (o.size() != 2) continue;
    for (auto [h, side] : Apply(g, b, o[0], o[1]))
      r[b].push_back({h, o[side]});
  }
  return r;
}

Weights WuLarusWeights(const Function& fn, const BranchHints& hints) {
  Weights w;
  w.edges.assign(fn.edges.size(), 0);
  if (fn.blocks.size() < 2) return w;
  const Cfg g(fn, hints);
  const std::vector<double> prob = Probabilities(g);
  std::vector<double> freq(g.nb, 0), edge_freq(fn.edges.size(), 0),
      back_prob(fn.edges.size(), 0);
  for (size_t l = 0; l < g.header.size(); ++l)
    Propagate(
        g, g.header[l], [&](uint32_t b) { return g.member[l][b]; }, prob,
        &freq, &edge_freq, &back_prob);
  Propagate(
      g, kEntryBlock, [](uint32_t) { return true; }, prob, &freq, &edge_freq,
      &back_prob);
  for (uint32_t b = 0; b < g.nb; ++b)
    for (size_t e : g.out[b]) {
      const double x = std::round(edge_freq[e] * kActivationWeight);
      w.edges[e] = x >= kWeightLimit ? uint64_t{1} << 62
                   : x < 1           ? 1
                                     : static_cast<uint64_t>(x);
    }
  // Edges into ENTRY or out of EXIT (never in GCC's CFGs) take no part in
  // the propagation; they still weigh 1 like every used edge.
  for (size_t e = 0; e < fn.edges.size(); ++e) {
    const Edge& x = fn.edges[e];
    if (!(x.flags & kEdgeIgnored) && x.src < g.nb && x.dst < g.nb &&
        w.edges[e] == 0)
      w.edges[e] = 1;
  }
  w.virtual_edge = kActivationWeight;
  return w;
}

}  // namespace ballarus
