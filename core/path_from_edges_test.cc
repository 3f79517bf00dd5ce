// path_from_edges_test.cc — paths whose counts follow from edge counts
// (core/path_from_edges.h), by hand and recovered from random counts.
#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/path_profile.h"
#include "core/test_graphs.h"
#include "core/test_path_checks.h"
#include "gtest/gtest.h"

namespace ballarus {
namespace {

using namespace path_testing;  // NOLINT: the shared oracles and checks

// Paths determined by edge counts (PathsDeterminedByEdges,
// PathCountsFromEdges).  By hand: one diamond has 2 paths in a 2-dimension
// flow space (6 edges, 5 vertices: 6 - 5 + 2 = 2, EXIT->ENTRY closing it),
// so its edge counts give both; two diamonds in a row have 4 paths in 3
// dimensions (a1 b2 + b1 a2 and a1 a2 + b1 b2 take the same edges).
TEST(PathsFromEdges, OneDiamondYesTwoNo) {
  for (uint32_t n : {1u, 2u}) {
    const Function f = DiamondChain(n);
    PathDag dag;
    std::string err;
    ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
    const PathNumbering num = NumberPaths(dag);
    EXPECT_EQ(PathsDeterminedByEdges(dag, num, 64), n == 1) << n;
    // Not above the limit.
    EXPECT_FALSE(PathsDeterminedByEdges(dag, num, 1)) << n;
  }
}

TEST(PathsFromEdges, DiamondCountsByHand) {
  const Function f = DiamondChain(1);  // edges 0->2, 2->3, 2->4, 3->5, 4->5, 5->1
  PathDag dag;
  std::string err;
  ASSERT_TRUE(BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) << err;
  const PathNumbering num = NumberPaths(dag);
  // 7 runs through a (block 3), 3 through b (block 4).
  std::vector<std::optional<uint64_t>> counts = {10, 7, 3, 7, 3, 10};
  std::map<uint64_t, uint64_t> paths;
  ASSERT_TRUE(PathCountsFromEdges(dag, num, f, counts, &paths, &err)) << err;
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& [id, count] : paths) {
    std::vector<uint32_t> edges;
    ASSERT_TRUE(DecodePath(dag, num, mpz_class(static_cast<unsigned long>(id)),
                           &edges));
    bool via_a = false;
    for (uint32_t d : edges)
      via_a = via_a || (dag.edges[d].kind == DagEdge::kCfg &&
                        dag.edges[d].ref == 1);
    EXPECT_EQ(count, via_a ? 7u : 3u) << id;
  }
  // Counts that do not balance (8 leave a, 7 enter it), or one unknown.
  counts[3] = 8;
  EXPECT_FALSE(PathCountsFromEdges(dag, num, f, counts, &paths, &err));
  EXPECT_NE(err.find("not a sum of whole paths"), std::string::npos) << err;
  counts[3] = 7;
  counts[2] = std::nullopt;
  EXPECT_FALSE(PathCountsFromEdges(dag, num, f, counts, &paths, &err));
  EXPECT_NE(err.find("edge 2->4 is unknown"), std::string::npos) << err;
  // No path runs at all: every count 0, no path listed.
  counts.assign(6, uint64_t{0});
  ASSERT_TRUE(PathCountsFromEdges(dag, num, f, counts, &paths, &err)) << err;
  EXPECT_TRUE(paths.empty());
}

// On random CFGs (loops, fake edges) cut at their back edges: wherever
// PathsDeterminedByEdges holds, random path counts are recovered from the
// edge counts they add up to (kCfg and kBackEnd edges count their model
// edge; a kStart edge's count is its block's cut edges').  Wherever it does
// not, two path vectors give the same edge counts: checked by finding a
// nonzero integer combination of the paths with zero edge sum -- here
// simply that the path count exceeds the DAG's flow dimension.
TEST(PathsFromEdges, RandomCountsRecovered) {
  std::mt19937_64 rng(20261123);
  int determined = 0, not_determined = 0;
  for (int g = 0; g < 600; ++g) {
    SCOPED_TRACE("graph " + std::to_string(g));
    const Function f = RandomCfg(rng, /*well_formed=*/true);
    PathDag dag;
    std::string err;
    if (!BuildPathDag(f, BackEdgeCuts(f), &dag, &err)) continue;
    const PathNumbering num = NumberPaths(dag);
    if (num.total() > 64) continue;
    const uint64_t n = num.total().get_ui();
    // The flow dimension of the DAG's used part: edges some path takes,
    // minus the vertices they touch, plus 2 (EXIT->ENTRY closes it).
    std::vector<bool> edge_used(dag.edges.size(), false);
    std::vector<bool> vertex_used(dag.n_vertices, false);
    std::vector<std::vector<uint32_t>> paths(n);
    for (uint64_t p = 0; p < n; ++p) {
      ASSERT_TRUE(DecodePath(dag, num, mpz_class(static_cast<unsigned long>(p)),
                             &paths[p]));
      for (uint32_t d : paths[p]) {
        edge_used[d] = true;
        vertex_used[dag.edges[d].src] = vertex_used[dag.edges[d].dst] = true;
      }
    }
    const int64_t dim = std::count(edge_used.begin(), edge_used.end(), true) -
                        std::count(vertex_used.begin(), vertex_used.end(), true) +
                        2;
    const bool det = PathsDeterminedByEdges(dag, num, 64);
    EXPECT_EQ(det, static_cast<int64_t>(n) == dim) << n << " paths, dim " << dim;
    if (!det) {
      ++not_determined;
      continue;
    }
    ++determined;
    std::map<uint64_t, uint64_t> truth;
    std::vector<std::optional<uint64_t>> edge_counts(f.edges.size(), uint64_t{0});
    for (uint64_t p = 0; p < n; ++p) {
      const uint64_t c = rng() % 3 == 0 ? 0 : rng() % 1000;
      if (c) truth[p] = c;
      for (uint32_t d : paths[p])
        if (dag.edges[d].kind == DagEdge::kCfg ||
            dag.edges[d].kind == DagEdge::kBackEnd)
          *edge_counts[dag.edges[d].ref] += c;
    }
    std::map<uint64_t, uint64_t> got;
    ASSERT_TRUE(PathCountsFromEdges(dag, num, f, edge_counts, &got, &err))
        << err;
    EXPECT_EQ(got, truth);
  }
  // Both kinds occur (the test is not vacuous).
  EXPECT_GE(determined, 30);
  EXPECT_GE(not_determined, 30);
}

}  // namespace
}  // namespace ballarus
