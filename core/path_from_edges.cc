// path_from_edges.cc — see path_from_edges.h.
#include "core/path_from_edges.h"

#include <utility>
#include <vector>

namespace ballarus {

namespace {

// The paths' edge vectors (rows: DAG edges, columns: path numbers), with
// one more column for the right-hand side, reduced in place by exact
// Gauss-Jordan elimination.  Returns the rank; pivot[c] is the row of
// column c's pivot, or -1.
size_t ReducePathSystem(std::vector<std::vector<mpq_class>>* rows,
                        size_t n_cols, std::vector<int64_t>* pivot) {
  std::vector<std::vector<mpq_class>>& m = *rows;
  pivot->assign(n_cols, -1);
  size_t rank = 0;
  for (size_t c = 0; c < n_cols && rank < m.size(); ++c) {
    size_t p = rank;
    while (p < m.size() && sgn(m[p][c]) == 0) ++p;
    if (p == m.size()) continue;
    std::swap(m[p], m[rank]);
    const mpq_class lead = m[rank][c];
    for (mpq_class& x : m[rank]) x /= lead;
    for (size_t r = 0; r < m.size(); ++r) {
      if (r == rank || sgn(m[r][c]) == 0) continue;
      const mpq_class f = m[r][c];
      for (size_t k = c; k < m[r].size(); ++k) m[r][k] -= f * m[rank][k];
    }
    (*pivot)[c] = static_cast<int64_t>(rank);
    ++rank;
  }
  return rank;
}

// The system of PathsDeterminedByEdges / PathCountsFromEdges: rows are
// the DAG edges some path takes; false if the DAG has a cut block or more
// than max_paths paths.
bool PathSystem(const PathDag& dag, const PathNumbering& num,
                uint64_t max_paths, std::vector<std::vector<mpq_class>>* rows,
                std::vector<uint32_t>* row_edge, uint64_t* n_paths) {
  for (const DagEdge& e : dag.edges)
    if (e.kind == DagEdge::kCutEnd) return false;
  if (num.total() > mpz_class(static_cast<unsigned long>(max_paths)))
    return false;
  const uint64_t n = num.total().get_ui();
  *n_paths = n;
  std::vector<std::vector<uint32_t>> paths(n);
  std::vector<int64_t> row_of(dag.edges.size(), -1);
  row_edge->clear();
  for (uint64_t p = 0; p < n; ++p) {
    if (!DecodePath(dag, num, mpz_class(static_cast<unsigned long>(p)),
                    &paths[p]))
      return false;
    for (uint32_t d : paths[p])
      if (row_of[d] < 0) {
        row_of[d] = static_cast<int64_t>(row_edge->size());
        row_edge->push_back(d);
      }
  }
  rows->assign(row_edge->size(), std::vector<mpq_class>(n + 1));
  for (uint64_t p = 0; p < n; ++p)
    for (uint32_t d : paths[p]) (*rows)[row_of[d]][p] = 1;
  return true;
}

}  // namespace

bool PathsDeterminedByEdges(const PathDag& dag, const PathNumbering& num,
                            uint64_t max_paths) {
  std::vector<std::vector<mpq_class>> rows;
  std::vector<uint32_t> row_edge;
  uint64_t n = 0;
  if (!PathSystem(dag, num, max_paths, &rows, &row_edge, &n)) return false;
  std::vector<int64_t> pivot;
  return ReducePathSystem(&rows, n, &pivot) == n;
}

bool PathCountsFromEdges(const PathDag& dag, const PathNumbering& num,
                         const Function& fn,
                         const std::vector<std::optional<uint64_t>>& edge_counts,
                         std::map<uint64_t, uint64_t>* counts,
                         std::string* error) {
  counts->clear();
  std::vector<std::vector<mpq_class>> rows;
  std::vector<uint32_t> row_edge;
  uint64_t n = 0;
  if (!PathSystem(dag, num, ~uint64_t{0} >> 1, &rows, &row_edge, &n)) {
    *error = "the paths are not determined by the edge counts (a cut block)";
    return false;
  }
  auto model_count = [&](uint32_t e, mpz_class* out) {
    if (e >= edge_counts.size() || !edge_counts[e]) {
      *error = "the count of edge " + std::to_string(fn.edges[e].src) +
               "->" + std::to_string(fn.edges[e].dst) + " is unknown";
      return false;
    }
    *out += mpz_class(static_cast<unsigned long>(*edge_counts[e]));
    return true;
  };
  for (size_t r = 0; r < row_edge.size(); ++r) {
    const DagEdge& d = dag.edges[row_edge[r]];
    mpz_class b = 0;
    if (d.kind == DagEdge::kStart) {
      for (const DagEdge& x : dag.edges)
        if (x.kind == DagEdge::kBackEnd && fn.edges[x.ref].dst == d.ref &&
            !model_count(x.ref, &b))
          return false;
    } else if (!model_count(d.ref, &b)) {
      return false;
    }
    rows[r][n] = b;
  }
  std::vector<int64_t> pivot;
  if (ReducePathSystem(&rows, n, &pivot) != n) {
    *error = "the paths are not determined by the edge counts";
    return false;
  }
  for (size_t r = n; r < rows.size(); ++r)
    if (sgn(rows[r][n]) != 0) {
      *error = "the edge counts are not a sum of whole paths (their flow "
               "does not balance)";
      return false;
    }
  for (uint64_t p = 0; p < n; ++p) {
    const mpq_class& x = rows[pivot[p]][n];
    if (x.get_den() != 1 || sgn(x) < 0 ||
        x.get_num() > mpz_class(static_cast<unsigned long>(~uint64_t{0}))) {
      *error = "the edge counts give path " + std::to_string(p) +
               " the count " + x.get_str() + ", not a whole count";
      return false;
    }
    if (sgn(x) != 0) (*counts)[p] = x.get_num().get_ui();
  }
  return true;
}

}  // namespace ballarus
