// estimator.cc — the Ball–Larus static edge-frequency heuristic, made exact.
//
// Ball & Larus, "Optimally Profiling and Tracing Programs", TOPLAS 16(4)
// 1994, §5: loops iterate LOOP_MULTIPLIER (10) times per entry, branches are
// equally likely, the exits of a loop together carry the loop's entry
// weight, the virtual edge EXIT->ENTRY has a fixed weight.  Their single
// topological pass presets the exit edges when the loop entry is visited;
// Neustifter ("Efficient Profiling in the LLVM Compiler Infrastructure",
// TU Wien 2010, §4.3) shows where that breaks on real CFGs — exits leaving
// from the loop body (4.3.1), too little flow left for preset exits deep in
// the body (4.3.2, "minimal weights"), loops without exits (4.3.3), rounding
// (4.3.4), non-natural loops (4.3.5).  This implementation builds the same
// weighting as a sum of flows that are each conservative by construction,
// so none of those cases can break conservation:
//
// 1. Graph.  Non-ignored edges; edges into ENTRY or out of EXIT (not in
//    GCC's CFGs) only get minimal weights (step 6).  Blocks unreachable from
//    ENTRY get a nominal entry ENTRY->b, blocks that cannot reach EXIT (an
//    infinite loop without even a fake exit edge — Neustifter 4.3.3 — or a
//    dead end) a nominal exit b->EXIT from the first such block in DFS
//    post-order (for a loop: its latch side).  These are Weights::extra.
// 2. Loops.  A loop-nesting forest by recursive strongly connected
//    components (Havlak / Ramalingam): each SCC of a region is a loop, its
//    header the block DFS from ENTRY reaches first (for a natural loop the
//    target of its DFS back edges, as in Ball & Larus); edges into the
//    header from inside are its back edges; the SCCs of the loop without
//    its back edges are its inner loops.  Natural loops come out exactly
//    as Ball & Larus' nat-loop(); an irreducible region is simply a loop
//    with entries besides its header (Neustifter 4.3.5's fall-back).
// 3. A region (the function, or a loop) is a DAG once its inner loops are
//    collapsed and its back edges removed.  Flow is pushed through it in
//    topological order, each amount toward a given set of target edges:
//    at a block it is split evenly over the successors that can still reach
//    a target (integer split, the first `remainder` successors in edge order
//    get one more: Neustifter 4.3.4 without any rounding loss).  Fake, EH
//    and abnormal edges (and nominal edges) get a share only if the block
//    has no other way to go: they carry the minimal weight of step 6.
// 4. A loop entered with weight W (amounts at its header or, irreducibly,
//    at other entries) gets:
//      circulation  (M-1)*W from the header around to its back edges, and
//      through-flow W from the header to the exits the enclosing region
//                     wants (those leading on to its targets); amounts
//                     entering elsewhere than the header (irreducible
//                     entries) first go round to the header through a back
//                     edge, so W at the header is known before propagating
//                     and each loop is propagated once (cost linear in the
//                     nesting depth).
//    So the header weighs M*W, the exits carry exactly W between them
//    (Ball & Larus rules 2 and 3), and every exit the through-flow can use
//    receives flow however deep in the body it is — the "minimal weights"
//    fix, by construction.  M = kLoopMultiplier up to loop depth
//    kMaxMultipliedLoopDepth, 1 below (no circulation).  Inner loops met on
//    the way are entered recursively, for each kind of amount (commodity)
//    with the targets it is heading for.  The function itself is the
//    outermost region: kActivationWeight from ENTRY to the edges into EXIT,
//    closed by the virtual edge.
// 5. Overflow: sums are 128-bit; if any weight would exceed 2^62, the whole
//    estimate is redone with loops multiplied only down to depth 6, then
//    not at all, then with activation weight 1, then from minimal weights
//    alone.  Reducible nests stay far below the limit (720720 * 10^12);
//    only irreducible nests dozens of levels deep (each level's irreducible
//    entries go round once more: up to 2x per level) reach the fall-backs.
// 6. Minimal weights: every used edge still at 0 (low-priority edges, edges
//    a split left empty) gets a unit cycle ENTRY ->* src -> dst ->* EXIT ->
//    ENTRY along BFS trees.  Conservation stays exact; every edge >= 1.
#include "estimator/estimator.h"

#include <algorithm>
#include <deque>

namespace ballarus {
namespace {

using u128 = unsigned __int128;
constexpr u128 kWeightLimit = u128{1} << 62;
constexpr uint32_t kLowPriorityFlags = kEdgeFake | kEdgeEh | kEdgeAbnormal;

// The function's closed graph as the estimator sees it (step 1).
struct Graph {
  uint32_t nb = 0;
  size_t n_model = 0;  // edges [0, n_model) are Function::edges
  std::vector<uint32_t> src, dst;
  std::vector<bool> used;  // takes part in conservation
  std::vector<bool> main;  // takes part in the propagation
  std::vector<bool> low;   // minimal weight unless it is the only way
  std::vector<std::vector<size_t>> out, in;  // main edges

  size_t Add(uint32_t s, uint32_t d, bool is_used, bool is_main,
             bool is_low) {
    const size_t e = src.size();
    src.push_back(s);
    dst.push_back(d);
    used.push_back(is_used);
    main.push_back(is_main);
    low.push_back(is_low);
    if (is_main) {
      out[s].push_back(e);
      in[d].push_back(e);
    }
    return e;
  }
};

// Marks everything reachable from `start` along main edges (forward or
// backward), in `mark`.
void Reach(const Graph& g, uint32_t start, bool forward,
           std::vector<bool>* mark) {
  if ((*mark)[start]) return;
  std::vector<uint32_t> stack{start};
  (*mark)[start] = true;
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    for (size_t e : forward ? g.out[v] : g.in[v]) {
      const uint32_t w = forward ? g.dst[e] : g.src[e];
      if (!(*mark)[w]) {
        (*mark)[w] = true;
        stack.push_back(w);
      }
    }
  }
}

// Iterative DFS from ENTRY over main edges: pre-order numbers and post-order.
void Dfs(const Graph& g, std::vector<uint32_t>* pre,
         std::vector<uint32_t>* post) {
  pre->assign(g.nb, UINT32_MAX);
  post->clear();
  uint32_t n = 0;
  std::vector<std::pair<uint32_t, size_t>> stack;  // block, next out index
  (*pre)[kEntryBlock] = n++;
  stack.push_back({kEntryBlock, 0});
  while (!stack.empty()) {
    auto& [v, i] = stack.back();
    if (i < g.out[v].size()) {
      const uint32_t w = g.dst[g.out[v][i++]];
      if ((*pre)[w] == UINT32_MAX) {
        (*pre)[w] = n++;
        stack.push_back({w, 0});
      }
    } else {
      post->push_back(v);
      stack.pop_back();
    }
  }
}

struct Loop {
  uint32_t header = 0;
  int parent = -1;  // -1: the function region
  int depth = 1;
  std::vector<size_t> back;   // sorted
  std::vector<size_t> exits;  // sorted
};

class Estimator {
 public:
  explicit Estimator(Graph* g) : g_(*g) {}

  // Step 2.
  void BuildLoops();
  // Steps 3–5: false on overflow (weights unusable).
  bool Run(uint64_t activation, int max_multiplied_depth);
  // Step 6.
  void AddMinimalWeights();
  const std::vector<u128>& weights() const { return w_; }
  u128 virtual_weight() const { return virtual_; }

 private:
  struct Region {
    std::vector<int> nodes;  // topological order; block b or nb + loop
    // Per node: its outgoing edges with the local index of the DAG node
    // they lead to, or -1 (back edge / exit of the region).
    std::vector<std::vector<std::pair<size_t, int>>> outs;
  };
  struct Commodity {
    std::vector<std::pair<uint32_t, u128>> sources;  // block, amount
    std::vector<size_t> targets;                     // sorted edge ids
    std::vector<std::pair<size_t, u128>> sinks;      // result
  };
  using Amounts = std::vector<std::pair<uint32_t, u128>>;
  using Sinks = std::vector<std::pair<size_t, u128>>;

  int Header(int r) const { return r < 0 ? -1 : int(loops_[r].header); }
  bool InRegion(uint32_t b, int r) const;
  int Rep(uint32_t b, int r) const;
  void FindLoops(int parent, const std::vector<uint32_t>& blocks);
  void BuildRegion(int r);
  void Propagate(int r, std::vector<Commodity>* cs);
  std::vector<Sinks> Enter(int l, const std::vector<Amounts>& arrivals,
                           const std::vector<std::vector<size_t>>& allowed);
  void AddWeight(size_t e, u128 x) {
    w_[e] += x;
    if (w_[e] > kWeightLimit) overflow_ = true;
  }

  Graph& g_;
  std::vector<int> loop_of_;  // innermost loop of each block, -1 none
  std::vector<Loop> loops_;
  std::vector<Region> regions_;  // [0] the function, [l + 1] loop l
  std::vector<int> local_;       // node id -> index in its region's nodes
  std::vector<uint64_t> mult_;   // per loop
  std::vector<u128> w_;
  u128 virtual_ = 0;
  bool overflow_ = false;
  // DFS pre-order numbers / post-order, and Tarjan's state.
  std::vector<uint32_t> pre_, post_, index_, low_;
  // Per region (index r + 1): its own blocks, its child loops.
  std::vector<std::vector<uint32_t>> blocks_of_;
  std::vector<std::vector<int>> children_of_;
  std::vector<bool> on_stack_;
  uint32_t counter_ = 0;
};

bool Estimator::InRegion(uint32_t b, int r) const {
  if (r < 0) return true;
  int l = loop_of_[b];
  while (l >= 0 && loops_[l].depth > loops_[r].depth) l = loops_[l].parent;
  return l == r;
}

int Estimator::Rep(uint32_t b, int r) const {
  int l = loop_of_[b];
  if (l == r) return static_cast<int>(b);
  while (loops_[l].parent != r) l = loops_[l].parent;
  return static_cast<int>(g_.nb) + l;
}

// Tarjan's SCCs over `blocks` (all with loop_of_ == parent), without the
// parent's back edges; every cyclic SCC becomes a loop, recursively.
void Estimator::FindLoops(int parent,
                          const std::vector<uint32_t>& blocks) {
  const int ph = Header(parent);
  auto inside = [&](size_t e) {
    const uint32_t d = g_.dst[e];
    return loop_of_[d] == parent && static_cast<int>(d) != ph;
  };
  std::vector<std::vector<uint32_t>> sccs;
  std::vector<uint32_t> stack;
  std::vector<std::pair<uint32_t, size_t>> calls;
  for (uint32_t root : blocks) {
    if (index_[root] != UINT32_MAX) continue;
    calls.push_back({root, 0});
    index_[root] = low_[root] = counter_++;
    stack.push_back(root);
    on_stack_[root] = true;
    while (!calls.empty()) {
      auto& [v, i] = calls.back();
      if (i < g_.out[v].size()) {
        const size_t e = g_.out[v][i++];
        if (!inside(e)) continue;
        const uint32_t w = g_.dst[e];
        if (index_[w] == UINT32_MAX) {
          index_[w] = low_[w] = counter_++;
          stack.push_back(w);
          on_stack_[w] = true;
          calls.push_back({w, 0});
        } else if (on_stack_[w]) {
          low_[v] = std::min(low_[v], index_[w]);
        }
        continue;
      }
      const uint32_t done = v;
      calls.pop_back();
      if (!calls.empty())
        low_[calls.back().first] =
            std::min(low_[calls.back().first], low_[done]);
      if (low_[done] != index_[done]) continue;
      std::vector<uint32_t> scc;
      uint32_t x;
      do {
        x = stack.back();
        stack.pop_back();
        on_stack_[x] = false;
        scc.push_back(x);
      } while (x != done);
      bool cyclic = scc.size() > 1;
      if (!cyclic)
        for (size_t e : g_.out[done])
          if (g_.dst[e] == done && inside(e)) cyclic = true;
      if (cyclic) sccs.push_back(std::move(scc));
    }
  }
  // Create the loops (deterministic: SCCs sorted by their least block).
  for (auto& scc : sccs) std::sort(scc.begin(), scc.end());
  std::sort(sccs.begin(), sccs.end());
  for (const auto& scc : sccs) {
    Loop loop;
    loop.parent = parent;
    loop.depth = parent < 0 ? 1 : loops_[parent].depth + 1;
    loop.header = scc[0];
    for (uint32_t b : scc)
      if (pre_[b] < pre_[loop.header]) loop.header = b;
    const int id = static_cast<int>(loops_.size());
    loops_.push_back(loop);
    for (uint32_t b : scc) loop_of_[b] = id;
    for (uint32_t b : scc) index_[b] = UINT32_MAX;  // reused one level down
    FindLoops(id, scc);
  }
}

void Estimator::BuildLoops() {
  Dfs(g_, &pre_, &post_);
  loop_of_.assign(g_.nb, -1);
  index_.assign(g_.nb, UINT32_MAX);
  low_.assign(g_.nb, 0);
  on_stack_.assign(g_.nb, false);
  std::vector<uint32_t> all;
  for (uint32_t b = 0; b < g_.nb; ++b) all.push_back(b);
  FindLoops(-1, all);
  // Back edges and exits: edge s->d exits every loop around s below the
  // innermost loop around both; it is a back edge if d heads that loop.
  for (size_t e = 0; e < g_.src.size(); ++e) {
    if (!g_.main[e]) continue;
    const uint32_t s = g_.src[e], d = g_.dst[e];
    int a = loop_of_[s], b = loop_of_[d];
    auto depth = [&](int l) { return l < 0 ? 0 : loops_[l].depth; };
    while (depth(b) > depth(a)) b = loops_[b].parent;
    while (depth(a) > depth(b)) {
      loops_[a].exits.push_back(e);
      a = loops_[a].parent;
    }
    while (a != b) {
      loops_[a].exits.push_back(e);
      a = loops_[a].parent;
      b = loops_[b].parent;
    }
    if (a >= 0 && loops_[a].header == d) loops_[a].back.push_back(e);
  }
  blocks_of_.assign(loops_.size() + 1, {});
  children_of_.assign(loops_.size() + 1, {});
  for (uint32_t b = 0; b < g_.nb; ++b) blocks_of_[loop_of_[b] + 1].push_back(b);
  for (size_t l = 0; l < loops_.size(); ++l)
    children_of_[loops_[l].parent + 1].push_back(int(l));
  regions_.resize(loops_.size() + 1);
  local_.assign(g_.nb + loops_.size(), -1);
  for (int r = -1; r < static_cast<int>(loops_.size()); ++r) BuildRegion(r);
}

// Topological order (Kahn, smallest node id first) of region r's DAG.
void Estimator::BuildRegion(int r) {
  std::vector<int> nodes;
  for (uint32_t b : blocks_of_[r + 1]) nodes.push_back(static_cast<int>(b));
  for (int l : children_of_[r + 1]) nodes.push_back(int(g_.nb) + l);
  const int h = Header(r);
  std::vector<std::vector<std::pair<size_t, int>>> outs(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) local_[nodes[i]] = int(i);
  std::vector<int> indeg(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int n = nodes[i];
    const std::vector<size_t>& es =
        n < int(g_.nb) ? g_.out[n] : loops_[n - g_.nb].exits;
    for (size_t e : es) {
      const uint32_t d = g_.dst[e];
      int to = -1;
      if (InRegion(d, r) && static_cast<int>(d) != h) {
        to = local_[Rep(d, r)];
        ++indeg[to];
      }
      outs[i].push_back({e, to});
    }
  }
  Region& reg = regions_[r + 1];
  std::deque<int> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (indeg[i] == 0) ready.push_back(int(i));
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (auto [e, to] : outs[i])
      if (to >= 0 && --indeg[to] == 0) ready.push_back(to);
  }
  // The DAG is acyclic by construction (inner SCCs are collapsed); nodes
  // left over would mean a bug, keep them anyway so nothing is lost.
  for (size_t i = 0; i < nodes.size(); ++i)
    if (indeg[i] > 0) order.push_back(int(i));
  for (int i : order) {
    reg.nodes.push_back(nodes[i]);
    reg.outs.push_back(std::move(outs[i]));
  }
  for (size_t i = 0; i < reg.nodes.size(); ++i) local_[reg.nodes[i]] = int(i);
  for (auto& o : reg.outs)
    for (auto& [e, to] : o)
      if (to >= 0) to = local_[nodes[to]];
}

void Estimator::Propagate(int r, std::vector<Commodity>* cs) {
  const Region& reg = regions_[r + 1];
  const size_t n = reg.nodes.size(), k = cs->size();
  if (k == 0 || overflow_) return;
  auto is_target = [&](size_t c, size_t e) {
    const auto& t = (*cs)[c].targets;
    return std::binary_search(t.begin(), t.end(), e);
  };
  std::vector<char> good(k * n, 0);
  auto good_edge = [&](size_t c, size_t e, int to) {
    return is_target(c, e) || (to >= 0 && good[c * n + to]);
  };
  for (size_t c = 0; c < k; ++c)
    for (size_t i = n; i-- > 0;)
      for (auto [e, to] : reg.outs[i])
        if (good_edge(c, e, to)) {
          good[c * n + i] = 1;
          break;
        }
  std::vector<u128> amount(k * n, 0);
  std::vector<Amounts> arrivals(k * n);  // super nodes: per entry block
  auto deliver = [&](size_t c, size_t e, int to, u128 x) {
    if (is_target(c, e)) {
      (*cs)[c].sinks.push_back({e, x});
    } else if (reg.nodes[to] < int(g_.nb)) {
      amount[c * n + to] += x;
    } else {
      arrivals[c * n + to].push_back({g_.dst[e], x});
    }
  };
  for (size_t c = 0; c < k; ++c)
    for (auto [b, x] : (*cs)[c].sources) {
      const int i = local_[Rep(b, r)];
      if (reg.nodes[i] < int(g_.nb))
        amount[c * n + i] += x;
      else
        arrivals[c * n + i].push_back({b, x});
    }
  std::vector<std::pair<size_t, int>> pick;
  for (size_t i = 0; i < n && !overflow_; ++i) {
    const int node = reg.nodes[i];
    if (node < int(g_.nb)) {
      for (size_t c = 0; c < k; ++c) {
        const u128 x = amount[c * n + i];
        if (x == 0) continue;
        // Even split over the good successors, low-priority ones only if
        // nothing else is good.
        pick.clear();
        bool normal = false;
        for (auto [e, to] : reg.outs[i])
          if (good_edge(c, e, to)) normal |= !g_.low[e];
        for (auto [e, to] : reg.outs[i])
          if (good_edge(c, e, to) && (!normal || !g_.low[e]))
            pick.push_back({e, to});
        if (pick.empty()) continue;  // cannot happen: sources are good
        const u128 q = x / pick.size(), rem = x % pick.size();
        for (size_t j = 0; j < pick.size(); ++j) {
          const u128 share = q + (j < rem ? 1 : 0);
          if (share == 0) continue;
          AddWeight(pick[j].first, share);
          deliver(c, pick[j].first, pick[j].second, share);
        }
      }
      continue;
    }
    // An inner loop: enter it with every commodity that reached it, each
    // heading for the exits that lead on to its own targets.
    const int l = node - int(g_.nb);
    std::vector<Amounts> in(k);
    std::vector<std::vector<size_t>> allowed(k);
    bool any = false;
    for (size_t c = 0; c < k; ++c) {
      in[c] = std::move(arrivals[c * n + i]);
      if (in[c].empty()) continue;
      any = true;
      for (auto [e, to] : reg.outs[i])
        if (good_edge(c, e, to)) allowed[c].push_back(e);
    }
    if (!any) continue;
    const std::vector<Sinks> outs = Enter(l, in, allowed);
    for (size_t c = 0; c < k; ++c)
      for (auto [e, x] : outs[c]) {
        int to = -1;
        for (auto [e2, t2] : reg.outs[i])
          if (e2 == e) to = t2;
        deliver(c, e, to, x);
      }
  }
}

std::vector<Estimator::Sinks> Estimator::Enter(
    int l, const std::vector<Amounts>& arrivals,
    const std::vector<std::vector<size_t>>& allowed) {
  const Loop& loop = loops_[l];
  const size_t k = arrivals.size();
  // One propagation, k + 2 commodities: per incoming commodity its
  // through-flow from the header to the exits it wants; the amounts that
  // entered elsewhere (irreducible entries) round to the header through a
  // back edge first (one "lap" commodity); the circulation.  Since the lap
  // delivers exactly what entered elsewhere, the header's through amounts
  // are known up front, and each loop is propagated once per enclosing
  // propagation (linear in the nesting depth, not exponential).
  std::vector<Commodity> flows(k);
  Commodity lap;
  u128 total = 0;
  for (size_t c = 0; c < k; ++c) {
    u128 sum = 0;
    for (auto [b, x] : arrivals[c]) {
      sum += x;
      if (b != loop.header) lap.sources.push_back({b, x});
    }
    total += sum;
    if (sum == 0) continue;
    flows[c].sources.push_back({loop.header, sum});
    flows[c].targets = allowed[c];
  }
  if (!lap.sources.empty()) {
    lap.targets = loop.back;
    flows.push_back(std::move(lap));
  }
  if (mult_[l] > 1 && total > 0) {
    Commodity circ;
    circ.sources.push_back({loop.header, total * (mult_[l] - 1)});
    circ.targets = loop.back;
    flows.push_back(std::move(circ));
  }
  Propagate(l, &flows);
  // Sinks of the lap and the circulation are back edges: they closed their
  // cycles at the header.
  std::vector<Sinks> out(k);
  for (size_t c = 0; c < k; ++c) out[c] = std::move(flows[c].sinks);
  return out;
}

bool Estimator::Run(uint64_t activation, int max_multiplied_depth) {
  w_.assign(g_.src.size(), 0);
  virtual_ = 0;
  overflow_ = false;
  mult_.resize(loops_.size());
  for (size_t l = 0; l < loops_.size(); ++l)
    mult_[l] = loops_[l].depth <= max_multiplied_depth ? kLoopMultiplier : 1;
  if (activation == 0) return true;
  std::vector<Commodity> top(1);
  top[0].sources.push_back({kEntryBlock, activation});
  for (size_t e : g_.in[kExitBlock]) top[0].targets.push_back(e);
  std::sort(top[0].targets.begin(), top[0].targets.end());
  Propagate(-1, &top);
  for (auto [e, x] : top[0].sinks) virtual_ += x;
  return !overflow_;
}

// Step 6: a unit cycle through every used edge still at 0.
void Estimator::AddMinimalWeights() {
  const size_t ne = g_.src.size();
  std::vector<std::vector<size_t>> out(g_.nb), in(g_.nb);
  for (size_t e = 0; e < ne; ++e)
    if (g_.used[e]) out[g_.src[e]].push_back(e), in[g_.dst[e]].push_back(e);
  // BFS trees: pred[v] = edge reaching v from ENTRY, next[v] = edge from v
  // toward EXIT.
  auto bfs = [&](uint32_t root, bool forward) {
    std::vector<size_t> tree(g_.nb, SIZE_MAX);
    std::vector<bool> seen(g_.nb, false);
    std::deque<uint32_t> q{root};
    seen[root] = true;
    while (!q.empty()) {
      const uint32_t v = q.front();
      q.pop_front();
      for (size_t e : forward ? out[v] : in[v]) {
        const uint32_t w = forward ? g_.dst[e] : g_.src[e];
        if (!seen[w]) {
          seen[w] = true;
          tree[w] = e;
          q.push_back(w);
        }
      }
    }
    return tree;
  };
  const std::vector<size_t> pred = bfs(kEntryBlock, true);
  const std::vector<size_t> next = bfs(kExitBlock, false);
  for (size_t e = 0; e < ne; ++e) {
    if (!g_.used[e] || w_[e] != 0) continue;
    for (uint32_t v = g_.src[e]; v != kEntryBlock; v = g_.src[pred[v]])
      ++w_[pred[v]];
    ++w_[e];
    for (uint32_t v = g_.dst[e]; v != kExitBlock; v = g_.dst[next[v]])
      ++w_[next[v]];
    ++virtual_;
  }
}

}  // namespace

Weights HeuristicWeights(const Function& fn) {
  Weights result;
  result.edges.assign(fn.edges.size(), 0);
  const uint32_t nb = static_cast<uint32_t>(fn.blocks.size());
  if (nb < 2) return result;

  Graph g;
  g.nb = nb;
  g.n_model = fn.edges.size();
  g.out.resize(nb);
  g.in.resize(nb);
  for (const Edge& e : fn.edges) {
    const bool used =
        !(e.flags & kEdgeIgnored) && e.src < nb && e.dst < nb;
    const bool main = used && e.dst != kEntryBlock && e.src != kExitBlock;
    g.Add(used ? e.src : 0, used ? e.dst : 0, used, main,
          (e.flags & kLowPriorityFlags) != 0);
  }
  // Step 1: nominal entries and exits.
  std::vector<bool> reached(nb, false);
  Reach(g, kEntryBlock, true, &reached);
  for (uint32_t b = 2; b < nb; ++b) {
    if (reached[b]) continue;
    g.Add(kEntryBlock, b, true, true, true);
    Reach(g, b, true, &reached);
  }
  std::vector<uint32_t> pre, post;
  Dfs(g, &pre, &post);
  std::vector<bool> reaches_exit(nb, false);
  Reach(g, kExitBlock, false, &reaches_exit);
  for (uint32_t b : post) {
    if (reaches_exit[b]) continue;
    g.Add(b, kExitBlock, true, true, true);
    Reach(g, b, false, &reaches_exit);
  }

  Estimator est(&g);
  est.BuildLoops();
  const uint64_t activation = kActivationWeight;
  if (!est.Run(activation, kMaxMultipliedLoopDepth) &&
      !est.Run(activation, kMaxMultipliedLoopDepth / 2) &&
      !est.Run(activation, 0) && !est.Run(1, 0))
    est.Run(0, 0);
  est.AddMinimalWeights();

  const std::vector<u128>& w = est.weights();
  for (size_t i = 0; i < fn.edges.size(); ++i)
    result.edges[i] = g.used[i] ? static_cast<uint64_t>(w[i]) : 0;
  for (size_t e = fn.edges.size(); e < g.src.size(); ++e)
    result.extra.push_back({g.src[e], g.dst[e], static_cast<uint64_t>(w[e])});
  result.virtual_edge = static_cast<uint64_t>(est.virtual_weight());
  return result;
}

Weights UniformWeights(const Function& fn) {
  Weights w;
  const size_t nb = fn.blocks.size();
  for (const Edge& e : fn.edges)
    w.edges.push_back(
        !(e.flags & kEdgeIgnored) && e.src < nb && e.dst < nb ? 1 : 0);
  w.virtual_edge = nb >= 2 ? 1 : 0;
  return w;
}

std::vector<uint32_t> ConservationViolations(const Function& fn,
                                             const Weights& w) {
  const size_t nb = fn.blocks.size();
  std::vector<u128> in(nb, 0), out(nb, 0);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if ((e.flags & kEdgeIgnored) || e.src >= nb || e.dst >= nb) continue;
    const u128 x = i < w.edges.size() ? w.edges[i] : 0;
    out[e.src] += x;
    in[e.dst] += x;
  }
  if (nb >= 2) {
    out[kExitBlock] += w.virtual_edge;
    in[kEntryBlock] += w.virtual_edge;
  }
  for (const ExtraEdge& x : w.extra) {
    if (x.src >= nb || x.dst >= nb) continue;
    out[x.src] += x.weight;
    in[x.dst] += x.weight;
  }
  std::vector<uint32_t> bad;
  for (size_t b = 0; b < nb; ++b)
    if (in[b] != out[b]) bad.push_back(static_cast<uint32_t>(b));
  return bad;
}

}  // namespace ballarus
