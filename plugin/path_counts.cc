// path_counts.cc — path planning's last steps, over the planned actions:
// which counts need not be made (derived from the edge counters, or taken
// from a balance of paths) and which can be made in a loop's locals
// because they land on one path or one of a few.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/path_plan_steps.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/options.h"
#include "plugin/path_plan_state.h"

namespace ballarus::plugin {

namespace {

bool IsCount(PathAction::Kind k) {
  return k == PathAction::kCount || k == PathAction::kCountReset ||
         k == PathAction::kStartCut || k == PathAction::kPreCount ||
         k == PathAction::kEndCount || k == PathAction::kEndCountReset;
}

// v + a, sorted (modulo 2^64: the order may change).
std::vector<uint64_t> Plus(std::vector<uint64_t> v, uint64_t a) {
  for (uint64_t& x : v) x += a;
  std::sort(v.begin(), v.end());
  return v;
}

// The counts that at most `max` path prefixes reach, each with the paths
// it can land on (sorted; one when one prefix reaches it): f(act, paths,
// e, bb) for the action on edge e (bb null) or in block bb (e null).  The
// register on each edge and in each block is followed exactly as
// path_emit.cc sets it: r = a (kInit), r += a (kAdd), then the counts, in
// Kind order; an edge or block whose register another action may change
// first (re-entry checks, fork epochs, counted loops) is left out.
template <typename F>
void ForEachCountPaths(PathPlanState* s, size_t max, F f) {
  const auto& reg = s->prefix_sets;
  PathWork* work = s->work;
  // A vertex that more than `max` prefixes reach (none: more than reg
  // holds) is left out.
  auto few = [&](uint32_t v) {
    return !reg[v].empty() && reg[v].size() <= max;
  };
  // On edges: the actions of one edge are adjacent once sorted by edge.
  std::map<std::pair<int, int>, std::vector<size_t>> by_edge;
  for (size_t i = 0; i < work->on_edges.size(); ++i) {
    const edge e = work->on_edges[i].first;
    by_edge[{e->src->index, e->dest->index}].push_back(i);
  }
  for (auto& [key, idx] : by_edge) {
    const edge e = work->on_edges[idx.front()].first;
    const uint32_t src = static_cast<uint32_t>(e->src->index);
    if (src >= s->nb || !few(src) || (src >= 2 && s->reentry_block[src]))
      continue;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
      return work->on_edges[x].second.kind < work->on_edges[y].second.kind;
    });
    std::vector<uint64_t> r = reg[src];
    for (size_t i : idx) {
      PathAction& act = work->on_edges[i].second;
      if (act.kind == PathAction::kInit) {
        r = {act.a};
      } else if (act.kind == PathAction::kAdd) {
        r = Plus(std::move(r), act.a);
      } else if (IsCount(act.kind)) {
        f(act, Plus(r, act.a), e, basic_block{nullptr});
        if (act.kind == PathAction::kCountReset) r = {act.b};
      } else if (act.kind != PathAction::kSetFlag &&
                 act.kind != PathAction::kSaveRegister) {
        break;  // the register may change in a way not followed here
      }
    }
  }
  // In blocks: a cut block counts the register it is entered with (its
  // w_in vertex), everything else the block's own.
  for (auto& [bb, act] : work->in_blocks) {
    const uint32_t u = static_cast<uint32_t>(bb->index);
    if (!IsCount(act.kind) || u < 2 || u >= s->nb || s->reentry_block[u])
      continue;
    const uint32_t v =
        act.kind == PathAction::kStartCut ? s->dag.in_vertex[u] : u;
    if (!few(v)) continue;
    f(act, Plus(reg[v], act.a), edge{nullptr}, bb);
  }
}

// Drops the counts that DeriveCountsFromEdges marked derived and that have
// nothing else to do (no register reset).
void DropDerivedCounts(PathWork* work) {
  auto gone = [](const PathAction& act) {
    return act.derived && (act.kind == PathAction::kCount ||
                           act.kind == PathAction::kPreCount ||
                           act.kind == PathAction::kEndCount);
  };
  work->on_edges.erase(
      std::remove_if(work->on_edges.begin(), work->on_edges.end(),
                     [&](const auto& x) { return gone(x.second); }),
      work->on_edges.end());
  work->in_blocks.erase(
      std::remove_if(work->in_blocks.begin(), work->in_blocks.end(),
                     [&](const auto& x) { return gone(x.second); }),
      work->in_blocks.end());
}

}  // namespace

// Path counts the edge counters give (path-derive; mode=edge,path or
// naive,path).  Where one path prefix reaches a count -- a path end on an
// edge, a pre-count before a call, a cut block's or a computed goto's end
// -- the register there is one known value, so the count always lands on
// the same path p, once per execution of the edge or block that holds it:
// p's count is that edge's or block's count, which the edge profile has.
// Such a count is not made; PathInfo::derived tells reconstruct where to
// take it from (before SettlePrecounts, which then settles a pre-count as
// if it had been counted).  A count behind a register reset keeps the
// reset.  Run only without counted loops (their counts are in locals).
void DeriveCountsFromEdges(PathPlanState* s) {
  PathWork* work = s->work;
  std::vector<ballarus::PathInfo::Derived> derived;
  std::vector<PathAction*> acts;  // parallel to derived
  ForEachCountPaths(s, 1, [&](PathAction& act,
                              const std::vector<uint64_t>& paths, edge e,
                              basic_block bb) {
    const uint64_t path = paths.front();
    if (e != nullptr) {
      auto m = s->model_edge_of.find(e);
      if (m == s->model_edge_of.end()) return;
      derived.push_back({path, m->second, false});
    } else {
      derived.push_back({path, static_cast<uint32_t>(bb->index), true});
    }
    acts.push_back(&act);
  });
  if (derived.empty()) return;
  // Each path is counted at one place at most, below n_paths; should the
  // following above ever disagree, every count is made as usual.
  std::vector<size_t> order(derived.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return derived[x].path < derived[y].path;
  });
  std::vector<ballarus::PathInfo::Derived> sorted;
  for (size_t i : order) {
    if (derived[i].path >= work->info.n_paths ||
        (!sorted.empty() && sorted.back().path == derived[i].path)) {
      if (dump_file)
        fprintf(dump_file, "  path: derived count of path %llu refused: "
                "every count made\n", (unsigned long long)derived[i].path);
      return;
    }
    sorted.push_back(derived[i]);
  }
  for (PathAction* act : acts) act->derived = true;
  work->info.derived = std::move(sorted);
  work->info.flags |= ballarus::kPathFlagDerivedCounts;
  DropDerivedCounts(work);
  if (dump_file) {
    fprintf(dump_file, "  path: %zu counts derived from the edge counters\n",
            work->info.derived.size());
    for (const auto& d : work->info.derived)
      fprintf(dump_file, "  path: path %llu counted by %s %u's count\n",
              (unsigned long long)d.path, d.block ? "block" : "edge",
              d.where);
  }
}

namespace {

// The pre-counts made in blocks, for FirstPreCounts.
std::vector<ballarus::PreCountSite> PreCountSites(const PathPlanState& s) {
  std::vector<ballarus::PreCountSite> sites;
  const auto& ib = s.work->in_blocks;
  for (size_t i = 0; i < ib.size(); ++i) {
    const auto& [bb, act] = ib[i];
    if (act.kind != PathAction::kPreCount || act.derived) continue;
    ballarus::PreCountSite site{i, static_cast<uint32_t>(bb->index), act.a,
                                std::nullopt};
    if (!s.measured_weights && bb->count.initialized_p())
      site.guess = static_cast<uint64_t>(bb->count.to_gcov_type());
    sites.push_back(site);
  }
  return sites;
}

// Entry balance (path-entry-balance): the paths from the function's entry
// begin once per invocation, and a function that only direct calls of
// path-profiled functions of its TU call is invoked as often as those
// calls' blocks execute, which their profiles give.  So, as at a loop
// header, one pre-count on the entry's paths can be left out: the first
// one on the only prefix from the entry that reaches it, the hottest by
// the weights (FirstPreCounts).  This picks it (entry_block, entry_path);
// pass.cc decides once it has seen every call of the function, and
// ApplyEntryBalance drops it.
void FindEntryTruncation(
    const std::map<uint32_t, ballarus::FirstPreCount>& first,
    PathWork* work) {
  const auto it = first.find(ballarus::kFromEntry);
  if (it == first.end() || it->second.path >= work->info.n_paths) return;
  work->entry_block = work->in_blocks[it->second.index].first;
  work->entry_path = it->second.path;
  if (dump_file)
    fprintf(dump_file, "  path: path %llu (cut short at block %u's call) "
            "may be left to the balance of the function's calls\n",
            (unsigned long long)it->second.path, it->second.block);
}

// Applies the balances ChooseBalances picked: the pre-counts go, and each
// loop entry cut's count becomes a plain reset (r = b).
void ApplyStartBalances(ballarus::BalanceChoice choice, PathWork* work) {
  if (dump_file) {
    for (const auto& [s, pick] : choice.pre_counts)
      fprintf(dump_file, "  path: path %llu (cut short at a call) counted "
              "by the balance of block %u's paths: no pre-count\n",
              (unsigned long long)pick.path, s);
    for (const auto& [s, end] : choice.ends)
      fprintf(dump_file, "  path: path %llu (ending at a loop entry cut) "
              "counted by the balance of block %u's paths: no count\n",
              (unsigned long long)end.path, s);
  }
  for (const auto& [s, end] : choice.ends) {
    PathAction& act = work->on_edges[end.index].second;
    gcc_assert(act.kind == PathAction::kCountReset);
    act = PathAction{PathAction::kInit, act.b, 0};
  }
  std::vector<bool> drop(work->in_blocks.size(), false);
  for (const auto& [s, pick] : choice.pre_counts) drop[pick.index] = true;
  size_t k = 0;
  std::vector<std::pair<basic_block, PathAction>> kept;
  for (auto& x : work->in_blocks)
    if (!drop[k++]) kept.push_back(x);
  work->in_blocks = std::move(kept);
  work->info.balanced = std::move(choice.balanced);
  work->info.flags |= ballarus::kPathFlagBalancedStarts;
}

}  // namespace

// Without edge counters (with them the counts are derived), one count per
// loop header or cut block taken from the balance of its paths
// (path-balance: a path from S begins each time a path ends into S, and
// every one then ends once, so either side may lose one count), and one
// pre-count on the entry's paths where pass.cc finds every call of the
// function (path-entry-balance).  A loop that calls an unknown function
// once per iteration then counts nothing for the call, and a loop entered
// once per invocation and mostly left at once nothing for its entry cut
// (docs/performance.md, "Balances").
void PlanBalances(PathPlanState* s) {
  PathWork* work = s->work;
  if (s->derive_counts || !g_options.early_termination ||
      !work->loops.empty() ||
      !(g_options.path_balance || g_options.path_entry_balance))
    return;
  const std::map<uint32_t, ballarus::FirstPreCount> first =
      ballarus::FirstPreCounts(*s->fn, s->dag, s->prefix_reg, s->prefixes,
                               s->weights, s->reentry_block, s->nb,
                               PreCountSites(*s));
  if (g_options.path_entry_balance) FindEntryTruncation(first, work);
  if (!g_options.path_balance) return;
  // Only where nothing else runs on the entry cut edge: its count becomes
  // a plain reset, which runs before other actions there.
  for (auto it = s->entry_ends.begin(); it != s->entry_ends.end();) {
    const edge e = work->on_edges[it->second.index].first;
    size_t on_e = 0;
    for (const auto& x : work->on_edges) on_e += x.first == e;
    if (dump_file && on_e != 1)
      fprintf(dump_file, "  path: loop entry cut %d->%d: other actions on "
              "the edge, its count stays\n", e->src->index, e->dest->index);
    it = on_e == 1 ? std::next(it) : s->entry_ends.erase(it);
  }
  std::optional<ballarus::BalanceChoice> choice = ballarus::ChooseBalances(
      first, s->entry_ends, *s->fn, s->dag, s->prefixes,
      work->info.precount_edges, s->nb, work->info.n_paths);
  if (choice)
    ApplyStartBalances(std::move(*choice), work);
  else if (dump_file && (first.size() > first.count(ballarus::kFromEntry) ||
                         !s->entry_ends.empty()))
    fprintf(dump_file, "  path: no count left to a balance of paths\n");
}

void ApplyEntryBalance(const std::vector<ballarus::PathInfo::Call>& calls,
                       PathWork* work) {
  gcc_assert(work->entry_block != nullptr && !calls.empty());
  auto& ib = work->in_blocks;
  const auto it = std::find_if(ib.begin(), ib.end(), [&](const auto& x) {
    return x.first == work->entry_block &&
           x.second.kind == PathAction::kPreCount && !x.second.derived;
  });
  gcc_assert(it != ib.end());
  ib.erase(it);
  work->info.flags |= ballarus::kPathFlagEntryBalanced;
  work->info.entry_path = work->entry_path;
  work->info.entry_calls = calls;
  std::sort(work->info.entry_calls.begin(), work->info.entry_calls.end());
  work->entry_block = nullptr;
  if (dump_file)
    fprintf(dump_file, "  path: path %llu (cut short at a call) counted by "
            "the balance of the function's %zu calls: no pre-count\n",
            (unsigned long long)work->info.entry_path, calls.size());
}

// Counts that land on one path, or on one of a few, which a loop's locals
// can make (loop-registers, counter_emit.h): the path (known) or the
// choices.  Run only without counted loops.
void MarkLoopRegisterCounts(PathPlanState* s) {
  size_t known = 0, choices = 0;
  ForEachCountPaths(s, kMaxCountChoices,
                    [&](PathAction& act, const std::vector<uint64_t>& paths,
                        edge, basic_block) {
                      if (paths.size() == 1) {
                        act.known = true;
                        act.path = paths.front();
                        ++known;
                      } else {
                        act.choices = paths;
                        ++choices;
                      }
                    });
  if (dump_file)
    fprintf(dump_file, "  path: %zu counts land on a known path, %zu on one "
            "of two (made in locals in loops that take registers)\n", known,
            choices);
}

}  // namespace ballarus::plugin
