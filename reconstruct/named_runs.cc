// named_runs.cc — see named_runs.h.
#include "reconstruct/named_runs.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <utility>

#include "core/profile_reader.h"

namespace ballarus {
namespace {

template <typename T>
T* Allocate(uint64_t n) {
  void* p = calloc(n + 1, sizeof(T));
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<T*>(p);
}

std::string NameOf(const ballarus_named_record& n) {
  return std::string(n.name, n.name_size);
}

// The index of the record with `stamp` (records are sorted by stamp; the
// parser checked that every named record's stamp is one of them).
uint32_t RecordOf(const ballarus_profile& whole, uint64_t stamp) {
  const ballarus_profile_record* begin = whole.records;
  const ballarus_profile_record* end = begin + whole.n_records;
  const ballarus_profile_record* r = std::lower_bound(
      begin, end, stamp,
      [](const ballarus_profile_record& a, uint64_t s) { return a.stamp < s; });
  if (r == end || r->stamp != stamp)
    throw std::logic_error("a named record of no TU record");
  return static_cast<uint32_t>(r - whole.records);
}

// `base` with zero counters and no sparse entries, its metadata borrowed.
void Blank(const ballarus_profile_record& base, ballarus_profile_record* r) {
  *r = ballarus_profile_record{};
  r->stamp = base.stamp;
  r->identity = base.identity;
  r->metadata = base.metadata;
  r->meta_size = base.meta_size;
  r->borrowed = 1;
  r->n_counters = base.n_counters;
  r->counters = Allocate<uint64_t>(base.n_counters);
  r->sparse = Allocate<ballarus_sparse_entry>(0);
}

void SetSparse(const ballarus_sparse_entry* from, uint64_t n,
               ballarus_profile_record* r) {
  free(r->sparse);
  r->sparse = nullptr;
  r->sparse = Allocate<ballarus_sparse_entry>(n);
  if (n > 0) memcpy(r->sparse, from, n * sizeof(ballarus_sparse_entry));
  r->n_sparse = n;
}

// *out gets one blank record per record of `whole`; on an exception it is
// freed.
template <typename Fill>
void Build(const ballarus_profile& whole, ballarus_profile* out, Fill fill) {
  *out = ballarus_profile{};
  try {
    out->records = Allocate<ballarus_profile_record>(whole.n_records);
    for (uint32_t i = 0; i < whole.n_records; ++i) {
      Blank(whole.records[i], &out->records[i]);
      ++out->n_records;
    }
    fill();
  } catch (...) {
    ballarus_profile_free(out);
    throw;
  }
  for (uint32_t i = 0; i < out->n_records; ++i)
    out->runs = std::max(out->runs, out->records[i].runs);
}

// Per test name, its named records (in (name, stamp) order).
std::map<std::string, std::vector<const ballarus_named_record*>> ByTest(
    const ballarus_profile& whole) {
  std::map<std::string, std::vector<const ballarus_named_record*>> by;
  for (uint64_t k = 0; k < whole.n_named; ++k)
    by[NameOf(whole.named[k])].push_back(&whole.named[k]);
  return by;
}

uint64_t MostRuns(const std::vector<const ballarus_named_record*>& named) {
  uint64_t most = 0;
  for (const ballarus_named_record* n : named) most = std::max(most, n->runs);
  return most;
}

// Whole record `r` minus the named records' sparse counts, modulo 2^64,
// zero counts dropped.
std::vector<ballarus_sparse_entry> SparseRemainder(
    const ballarus_profile_record& r,
    const std::vector<const ballarus_named_record*>& named) {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> counts;
  for (uint64_t j = 0; j < r.n_sparse; ++j)
    counts[{r.sparse[j].function, r.sparse[j].key}] = r.sparse[j].count;
  for (const ballarus_named_record* n : named)
    for (uint64_t j = 0; j < n->n_sparse; ++j)
      counts[{n->sparse[j].function, n->sparse[j].key}] -= n->sparse[j].count;
  std::vector<ballarus_sparse_entry> out;
  for (const auto& [key, count] : counts)
    if (count != 0) out.push_back(ballarus_sparse_entry{key.first, key.second, count});
  return out;
}

}  // namespace

bool TestProfile(const ballarus_profile& whole, const std::string& name,
                 ballarus_profile* out) {
  std::vector<const ballarus_named_record*> mine;
  for (uint64_t k = 0; k < whole.n_named; ++k)
    if (NameOf(whole.named[k]) == name) mine.push_back(&whole.named[k]);
  if (mine.empty()) {
    *out = ballarus_profile{};
    return false;
  }
  Build(whole, out, [&] {
    const uint64_t most = MostRuns(mine);
    for (uint32_t i = 0; i < out->n_records; ++i) out->records[i].runs = most;
    for (const ballarus_named_record* n : mine) {
      ballarus_profile_record& r = out->records[RecordOf(whole, n->stamp)];
      r.runs = n->runs;
      for (uint64_t j = 0; j < n->n_dense; ++j)
        r.counters[n->dense[j].index] = n->dense[j].count;
      SetSparse(n->sparse, n->n_sparse, &r);
    }
  });
  return true;
}

void UnnamedProfile(const ballarus_profile& whole, ballarus_profile* out) {
  const auto by_test = ByTest(whole);
  Build(whole, out, [&] {
    std::vector<std::vector<const ballarus_named_record*>> of(whole.n_records);
    std::vector<uint64_t> named_runs(whole.n_records, 0);
    for (const auto& [name, named] : by_test) {
      std::vector<uint64_t> runs(whole.n_records, MostRuns(named));
      for (const ballarus_named_record* n : named) {
        const uint32_t i = RecordOf(whole, n->stamp);
        of[i].push_back(n);
        runs[i] = n->runs;
      }
      for (uint32_t i = 0; i < whole.n_records; ++i)
        named_runs[i] = runs[i] > UINT64_MAX - named_runs[i]
                            ? UINT64_MAX
                            : named_runs[i] + runs[i];
    }
    for (uint32_t i = 0; i < whole.n_records; ++i) {
      const ballarus_profile_record& w = whole.records[i];
      ballarus_profile_record& r = out->records[i];
      r.runs = w.runs > named_runs[i] ? w.runs - named_runs[i] : 0;
      if (w.n_counters > 0)
        memcpy(r.counters, w.counters, w.n_counters * sizeof(uint64_t));
      for (const ballarus_named_record* n : of[i])
        for (uint64_t j = 0; j < n->n_dense; ++j)
          r.counters[n->dense[j].index] -= n->dense[j].count;  // mod 2^64
      const std::vector<ballarus_sparse_entry> sparse =
          SparseRemainder(w, of[i]);
      SetSparse(sparse.data(), sparse.size(), &r);
    }
  });
}

std::string NoSuchTest(const ballarus_profile& whole, const std::string& name) {
  const std::vector<std::string> names = TestNames(whole);
  std::string e = "no test '" + name + "' in the profile";
  if (names.empty()) return e + " (it has no named runs: see BALLARUS_TEST)";
  e += " (tests: ";
  const size_t shown = std::min<size_t>(names.size(), 10);
  for (size_t i = 0; i < shown; ++i) e += (i ? ", " : "") + names[i];
  if (shown < names.size())
    e += ", and " + std::to_string(names.size() - shown) + " more";
  return e + ")";
}

}  // namespace ballarus
