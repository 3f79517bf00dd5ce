// disjoint_sets.h — union-find with path compression (halving) and union by
// rank, for the Kruskal spanning trees of edge mode (spanning_tree.cc) and
// path mode (path_profile.cc).
#ifndef BALLARUS_CORE_DISJOINT_SETS_H_
#define BALLARUS_CORE_DISJOINT_SETS_H_

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace ballarus {

class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n), rank_(n, 0) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }
  size_t Find(size_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  // Joins the sets of a and b; false if they were already one set.
  bool Union(size_t a, size_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    if (rank_[a] < rank_[b]) std::swap(a, b);
    parent_[b] = a;
    if (rank_[a] == rank_[b]) ++rank_[a];
    return true;
  }

 private:
  std::vector<size_t> parent_;
  std::vector<uint8_t> rank_;
};

}  // namespace ballarus

#endif  // BALLARUS_CORE_DISJOINT_SETS_H_
