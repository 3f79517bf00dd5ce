// path_test_fixtures.h — hand-made path-mode functions for the tests of
// `paths`, `show` and `verify` on path profiles: the test numbers each
// function's paths itself (core/path_profile.h), assigns counts to chosen
// paths, and builds the profiles of mode=path (PathOnly) and
// mode=edge,path (EdgeAndPath), with the JSON `paths --json` should print.
#ifndef BALLARUS_RECONSTRUCT_PATH_TEST_FIXTURES_H_
#define BALLARUS_RECONSTRUCT_PATH_TEST_FIXTURES_H_

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"
#include "runtime/profile_io.h"
#include "reconstruct/cli_test_util.h"

namespace ballarus {
namespace cli_test {

// loopif (a loop with an if inside):
//   2 {s = 0; i = 0}  3 {i < n}  4 {i & 1}  5 {s += i}  6 {i++}  7 {return}
//   edges 0:0->2 1:2->3 2:3->4(T) 3:3->7(F) 4:4->5(T) 5:4->6(F) 6:5->6
//         7:6->3 (the back edge) 8:7->1
// latchexit (a back edge whose latch also exits, and a call that may not
// return):
//   2 {entry}  3 {body: calls something that may exit()}  4 {latch}
//   edges 0:0->2 1:2->3 2:3->4 3:3->1(fake) 4:4->3(T, back edge)
//         5:4->1(F, return from the latch)
// With counters, every edge that can hold one has one, from `first`.
inline Function LoopIf(const std::string& name, uint32_t line, int64_t first) {
  Function f;
  f.name = name;
  f.demangled = name;
  f.line = line;
  f.end_line = line + 7;
  f.cfg_checksum = 4242;
  f.blocks.resize(8);
  for (uint32_t b = 2; b < 8; ++b) f.blocks[b].lines = {{0, line + b - 1}};
  f.blocks[2].lines.push_back({0, line + 2});  // `for` init shares line 3
  const std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint32_t>> es = {
      {{0, 2}, kEdgeFallthru}, {{2, 3}, kEdgeFallthru},
      {{3, 4}, kEdgeTrue},     {{3, 7}, kEdgeFalse},
      {{4, 5}, kEdgeTrue},     {{4, 6}, kEdgeFalse},
      {{5, 6}, kEdgeFallthru}, {{6, 3}, kEdgeFallthru},
      {{7, 1}, kEdgeFallthru}};
  for (size_t i = 0; i < es.size(); ++i)
    f.edges.push_back({es[i].first.first, es[i].first.second, es[i].second,
                       first < 0 ? kNoCounter : first + int64_t(i)});
  return f;
}

inline Function LatchExit(const std::string& name, uint32_t line, int64_t first) {
  Function f;
  f.name = name;
  f.demangled = name;
  f.line = line;
  f.end_line = line + 4;
  f.cfg_checksum = 4343;
  f.blocks.resize(5);
  for (uint32_t b = 2; b < 5; ++b) f.blocks[b].lines = {{0, line + b - 1}};
  int64_t c = first;
  auto next = [&] { return first < 0 ? kNoCounter : c++; };
  f.edges.push_back({0, 2, kEdgeFallthru, next()});
  f.edges.push_back({2, 3, kEdgeFallthru, next()});
  f.edges.push_back({3, 4, kEdgeFallthru, next()});
  f.edges.push_back({3, 1, kEdgeFake, kNoCounter});
  f.edges.push_back({4, 3, kEdgeTrue, next()});
  f.edges.push_back({4, 1, kEdgeFalse, next()});
  return f;
}

// A path as reconstruct lists it: blocks[0] is ENTRY, or the block a
// restarted path begins at; it ends at EXIT, or with the back edge
// blocks.back() -> back_to, or entering cut block cut_at.
struct PathSpec {
  bool restart = false;
  std::vector<uint32_t> blocks;
  int back_to = -1;
  int cut_at = -1;
  uint64_t count = 0;
};

inline size_t FindEdge(const Function& f, uint32_t src, uint32_t dst) {
  for (size_t i = 0; i < f.edges.size(); ++i)
    if (f.edges[i].src == src && f.edges[i].dst == dst) return i;
  ADD_FAILURE() << "no edge " << src << "->" << dst << " in " << f.name;
  return 0;
}

// The CFG edges a path takes, found from its blocks alone.
inline std::vector<size_t> CfgEdgesOf(const Function& f, const PathSpec& p) {
  std::vector<size_t> out;
  for (size_t i = 1; i < p.blocks.size(); ++i)
    out.push_back(FindEdge(f, p.blocks[i - 1], p.blocks[i]));
  if (p.back_to >= 0) out.push_back(FindEdge(f, p.blocks.back(), p.back_to));
  if (p.cut_at >= 0) out.push_back(FindEdge(f, p.blocks.back(), p.cut_at));
  return out;
}

// The function's numbering as the plugin would compute it.
struct Numbered {
  PathInfo info;
  PathDag dag;
  PathNumbering num;
};

inline Numbered Number(const Function& f, std::vector<uint32_t> cut_blocks,
                uint32_t storage, uint64_t base, uint32_t flags) {
  Numbered n;
  n.info.storage = storage;
  n.info.base = base;
  n.info.flags = flags;
  n.info.cut_blocks = cut_blocks;
  for (uint32_t e : FindBackEdges(f))
    if (std::find(cut_blocks.begin(), cut_blocks.end(), f.edges[e].dst) ==
        cut_blocks.end())
      n.info.cut_edges.push_back(e);
  std::string err;
  EXPECT_TRUE(BuildPathDag(f, PathCuts{n.info.cut_edges, n.info.cut_blocks},
                           &n.dag, &err))
      << err;
  n.num = NumberPaths(n.dag);
  n.info.n_paths = n.num.total().get_ui();
  return n;
}

inline void AttachPathInfo(Function* f, const PathInfo& info) {
  f->extensions.push_back({kPathExtensionTag, EncodePathInfo(info)});
}

inline uint64_t PathNumber(const Function& f, const Numbered& n, const PathSpec& p) {
  std::vector<uint32_t> d;
  if (p.restart) d.push_back(uint32_t(n.dag.start_edge[p.blocks[0]]));
  for (size_t e : CfgEdgesOf(f, p))
    d.push_back(uint32_t(n.dag.dag_edge_of_cfg[e]));
  if (p.cut_at >= 0) d.push_back(uint32_t(n.dag.cut_end_edge[p.cut_at]));
  const mpz_class id = EncodePath(n.num, d);
  std::vector<uint32_t> back;  // sanity: the numbering round-trips
  EXPECT_TRUE(DecodePath(n.dag, n.num, id, &back));
  EXPECT_EQ(back, d);
  return id.get_ui();
}

// Edge counts by hand: every path adds its count to each CFG edge it takes.
inline std::vector<uint64_t> EdgeCountsByHand(const Function& f,
                                       const std::vector<PathSpec>& ps) {
  std::vector<uint64_t> c(f.edges.size(), 0);
  for (const PathSpec& p : ps)
    for (size_t e : CfgEdgesOf(f, p)) c[e] += p.count;
  return c;
}

// loopif(4), loopif(4), loopif(0).
inline std::vector<PathSpec> LoopIfPaths() {
  return {
      {false, {0, 2, 3, 4, 6}, 3, -1, 2},     // i = 0
      {true, {3, 4, 5, 6}, 3, -1, 4},         // i = 1, 3
      {true, {3, 4, 6}, 3, -1, 2},            // i = 2
      {true, {3, 7, 1}, -1, -1, 2},           // i = 4: return
      {false, {0, 2, 3, 7, 1}, -1, -1, 1},    // n = 0
      {false, {0, 2, 3, 4, 5, 6}, 3, -1, 0},  // never
  };
}

// latchexit(3), latchexit(1), and one call that exit()s in its 2nd
// iteration.
inline std::vector<PathSpec> LatchExitPaths() {
  return {
      {false, {0, 2, 3, 4}, 3, -1, 2},  {true, {3, 4}, 3, -1, 1},
      {true, {3, 4, 1}, -1, -1, 1},     {false, {0, 2, 3, 4, 1}, -1, -1, 1},
      {true, {3, 1}, -1, -1, 1},         // did not return
      {false, {0, 2, 3, 1}, -1, -1, 0},  // never
  };
}

// loopif's CFG with its latch 6 as a cut block; cutfn(2) once.
inline std::vector<PathSpec> CutFnPaths() {
  return {
      {false, {0, 2, 3, 4}, -1, 6, 1},
      {true, {6}, 3, -1, 2},
      {true, {3, 4, 5}, -1, 6, 1},
      {true, {3, 7, 1}, -1, -1, 1},
  };
}

inline void PutDense(const Function& f, const Numbered& n,
              const std::vector<PathSpec>& ps, std::vector<uint64_t>* c) {
  if (c->size() < n.info.base + n.info.n_paths + 1)
    c->resize(n.info.base + n.info.n_paths + 1, 0);
  for (const PathSpec& p : ps)
    (*c)[n.info.base + PathNumber(f, n, p)] += p.count;
}

inline void PutSparse(const Function& f, const Numbered& n, uint64_t fn_index,
               const std::vector<PathSpec>& ps,
               std::vector<ballarus_sparse_entry>* out) {
  for (const PathSpec& p : ps)
    if (p.count) out->push_back({fn_index, PathNumber(f, n, p), p.count});
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.function, a.key) <
           std::make_pair(b.function, b.key);
  });
}

// mode=path: pd.c counts loopif and cutfn densely, ph.c latchexit in a
// hash table.
struct PathProfile {
  TranslationUnit pd, ph;
  Numbered loopif, cutfn, latch;
  std::vector<uint64_t> pd_counters;
  std::vector<ballarus_sparse_entry> ph_sparse;
  std::vector<Rec> Recs() const {
    Rec a{EncodeMetadata(pd), pd_counters};
    Rec b{EncodeMetadata(ph), {}};
    b.sparse = ph_sparse;
    return {a, b};
  }
};

inline PathProfile PathOnly() {
  PathProfile p;
  p.pd.source = "pd.c";
  p.pd.cwd = "/src";
  p.pd.flags = BALLARUS_META_F_PATH;
  p.pd.files = {"pd.c"};
  Function loop = LoopIf("loopif", 30, -1);
  Function cut = LoopIf("cutfn", 50, -1);
  p.loopif = Number(loop, {}, PathInfo::kDense, 0, kPathFlagEarlyTermination);
  p.cutfn = Number(cut, {6}, PathInfo::kDense, p.loopif.info.n_paths + 1,
                   kPathFlagEarlyTermination);
  PutDense(loop, p.loopif, LoopIfPaths(), &p.pd_counters);
  PutDense(cut, p.cutfn, CutFnPaths(), &p.pd_counters);
  AttachPathInfo(&loop, p.loopif.info);
  AttachPathInfo(&cut, p.cutfn.info);
  p.pd.functions = {cut, loop};
  p.pd.n_counters = p.pd_counters.size();

  p.ph.source = "ph.c";
  p.ph.cwd = "/src";
  p.ph.flags = BALLARUS_META_F_PATH;
  p.ph.files = {"ph.c"};
  Function latch = LatchExit("latchexit", 10, -1);
  p.latch = Number(latch, {}, PathInfo::kHashed, 0, kPathFlagEarlyTermination);
  PutSparse(latch, p.latch, 0, LatchExitPaths(), &p.ph_sparse);
  AttachPathInfo(&latch, p.latch.info);
  p.ph.functions = {latch};
  p.ph.n_counters = 0;
  return p;
}

// The JSON a path should have in `paths --json`.
inline json ExpectedPath(const Function& f, const Numbered& n, const PathSpec& p) {
  json j;
  j["id"] = std::to_string(PathNumber(f, n, p));
  j["count"] = p.count;
  j["blocks"] = p.blocks;
  const std::vector<uint32_t>& cuts = n.info.cut_blocks;
  j["start"] = !p.restart ? "entry"
               : std::count(cuts.begin(), cuts.end(), p.blocks[0])
                   ? "cut"
                   : "back_edge";
  if (p.back_to >= 0) {
    j["end"] = "back_edge";
    j["to"] = p.back_to;
  } else if (p.cut_at >= 0) {
    j["end"] = "cut";
    j["to"] = p.cut_at;
  } else {
    const Edge& last =
        f.edges[FindEdge(f, p.blocks[p.blocks.size() - 2], p.blocks.back())];
    j["end"] = (last.flags & kEdgeFake) ? "no_return" : "return";
  }
  return j;
}

// Executed paths in the documented order: count descending, number
// ascending.
// Each with its share of the function's executions (the specs' counts)
// and of the program's (`program_total` path executions).
inline json ExpectedPaths(const Function& f, const Numbered& n,
                   std::vector<PathSpec> ps, uint64_t program_total) {
  uint64_t function_total = 0;
  for (const PathSpec& p : ps) function_total += p.count;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, json>> v;
  for (const PathSpec& p : ps)
    if (p.count) {
      json j = ExpectedPath(f, n, p);
      j["function_share"] = static_cast<double>(p.count) / function_total;
      j["program_share"] = static_cast<double>(p.count) / program_total;
      v.push_back({{~p.count, PathNumber(f, n, p)}, j});
    }
  std::sort(v.begin(), v.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json out = json::array();
  for (auto& x : v) out.push_back(x.second);
  return out;
}

// mode=edge,path: ep.c has eloop (loopif's CFG, a counter on every edge,
// dense paths) and elatch (latchexit's, hashed paths).
struct EdgePath {
  TranslationUnit tu;
  std::vector<uint64_t> counters;
  std::vector<ballarus_sparse_entry> sparse;
};

inline EdgePath EdgeAndPath(bool latch_early, const std::vector<PathSpec>& latch_ps) {
  EdgePath ep;
  ep.tu.source = "ep.c";
  ep.tu.cwd = "/src";
  ep.tu.flags = BALLARUS_META_F_NAIVE | BALLARUS_META_F_PATH;
  ep.tu.files = {"ep.c"};
  Function loop = LoopIf("eloop", 30, 0);        // counters 0..8
  Function latch = LatchExit("elatch", 10, 16);  // counters 16..20
  const Numbered nl =
      Number(loop, {}, PathInfo::kDense, 9, kPathFlagEarlyTermination);
  const Numbered nh = Number(latch, {}, PathInfo::kHashed, 0,
                             latch_early ? kPathFlagEarlyTermination : 0);
  ep.counters.assign(21, 0);
  PutDense(loop, nl, LoopIfPaths(), &ep.counters);
  // The edge counters see every edge the run took, also on paths cut
  // short.
  const std::vector<uint64_t> lc = EdgeCountsByHand(loop, LoopIfPaths());
  for (size_t e = 0; e < lc.size(); ++e)
    ep.counters[loop.edges[e].counter] = lc[e];
  const std::vector<uint64_t> hc = EdgeCountsByHand(latch, LatchExitPaths());
  for (size_t e = 0; e < hc.size(); ++e)
    if (latch.edges[e].counter >= 0)
      ep.counters[latch.edges[e].counter] = hc[e];
  PutSparse(latch, nh, 1, latch_ps, &ep.sparse);
  AttachPathInfo(&loop, nl.info);
  AttachPathInfo(&latch, nh.info);
  ep.tu.functions = {loop, latch};
  ep.tu.n_counters = ep.counters.size();
  return ep;
}

inline std::string EdgePathProfile(const std::string& name, const EdgePath& ep) {
  Rec r{EncodeMetadata(ep.tu), ep.counters};
  r.sparse = ep.sparse;
  return WriteProfile(name, Profile({r}));
}

}  // namespace cli_test
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_PATH_TEST_FIXTURES_H_
