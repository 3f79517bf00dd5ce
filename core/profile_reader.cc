// profile_reader.cc — read, decode, gather counts, solve (see
// profile_reader.h).
#include "core/profile_reader.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/entry_calls.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

uint64_t Pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Where record `index`'s pieces start in the file.
struct RecordOffsets {
  uint32_t index = 0;
  uint64_t metadata = 0;
  uint64_t sparse = 0;
};

std::string At(uint64_t offset, uint32_t record) {
  return "offset " + std::to_string(offset) + ": record " +
         std::to_string(record) + ": ";
}

const PathInfo* FindPathInfo(const Function& f, PathInfo* storage,
                             std::string* error) {
  const PathInfo* found = nullptr;
  for (const Extension& x : f.extensions) {
    if (x.tag != kPathExtensionTag) continue;
    if (found) {
      *error = "two path extensions";
      return nullptr;
    }
    if (!DecodePathInfo(x.bytes, storage, error)) return nullptr;
    found = storage;
  }
  if (!found) error->clear();
  return found;
}

// Rebuilds function `f`'s path DAG and numbering, gathers its counts and
// derives its edge counts.  `sparse`/`n_sparse` are its own sparse entries.
bool DecodeCountedPaths(const Function& f, const std::string& where,
                        LoadedPaths* out, std::string* error);

// Adds the counts of info.derived (kPathFlagDerivedCounts) to out->counts:
// each path's count is its edge's or block's count in `flow`, the
// function's solved edge profile.  False with *error when the path does not
// pass there (damaged metadata); an edge or block the flow left unknown
// (racy or damaged counters) leaves the path's count as stored and is
// reported in out->derived_problem.
bool AddDerivedCounts(const Function& f, const FlowResult* flow,
                      LoadedPaths* out, std::string* error) {
  if (!flow) {
    *error = "derived path counts, but the function has no edge counters";
    return false;
  }
  std::vector<uint32_t> edges;
  for (const PathInfo::Derived& d : out->info.derived) {
    edges.clear();
    if (!DecodePath(out->dag, out->numbering,
                    mpz_class(static_cast<unsigned long>(d.path)), &edges)) {
      *error = "derived path " + std::to_string(d.path) + " cannot be decoded";
      return false;
    }
    bool passes = false;
    if (d.block) {
      for (uint32_t b : PathBlocks(out->dag, edges)) passes |= b == d.where;
    } else {
      for (uint32_t e : edges) {
        const DagEdge& de = out->dag.edges[e];
        passes |= (de.kind == DagEdge::kCfg || de.kind == DagEdge::kBackEnd) &&
                  de.ref == d.where;
      }
    }
    if (!passes) {
      *error = "derived path " + std::to_string(d.path) + " does not pass " +
               (d.block ? "block " : "edge ") + std::to_string(d.where);
      return false;
    }
    const Count c = d.block ? flow->blocks.at(d.where) : flow->edges.at(d.where);
    if (!c) {
      if (out->derived_problem.empty())
        out->derived_problem =
            "the count of path " + std::to_string(d.path) + " comes from " +
            (d.block ? "block " : "edge ") + std::to_string(d.where) +
            ", which the edge counters leave unknown";
      continue;
    }
    if (*c == 0) continue;
    uint64_t& slot = out->counts[d.path];
    slot = ballarus_count_add(slot, *c);
    if (slot == 0) out->counts.erase(d.path);
  }
  return true;
}

bool LoadPaths(const Function& f, const PathInfo& info, const RecordOffsets& at,
               const ballarus_profile_record& rec,
               const ballarus_sparse_entry* sparse, size_t n_sparse,
               const FlowResult* flow, const Count& invocations,
               LoadedPaths* out, std::string* error) {
  const std::string where = At(at.metadata, at.index) + "metadata: function '" +
                            f.name + "': path extension: ";
  out->info = info;
  std::string err;
  if (!BuildPathDag(f, PathCuts{info.cut_edges, info.cut_blocks}, &out->dag,
                    &err)) {
    *error = where + err;
    return false;
  }
  out->numbering = NumberPaths(out->dag);
  if (out->numbering.total() !=
      mpz_class(static_cast<unsigned long>(info.n_paths))) {
    *error = where + "declares " + std::to_string(info.n_paths) +
             " paths, the CFG with its cuts has " +
             out->numbering.total().get_str();
    return false;
  }
  if (info.storage == PathInfo::kFromEdges) {
    // No path counters: FinishPathsFromEdges solves the counts once the
    // function's edge counts are known.
    out->derived.assign(f.edges.size(), 0);
    return true;
  }
  if (info.storage == PathInfo::kDense) {
    // DecodeMetadata checked the range already; never trust twice-removed
    // invariants with an out-of-bounds read.
    if (info.base > rec.n_counters ||
        info.n_paths + 1 > rec.n_counters - info.base) {
      *error = where + "dense path counters exceed the record's counters";
      return false;
    }
    const uint64_t* c = rec.counters + info.base;
    for (uint64_t p = 0; p < info.n_paths; ++p)
      if (c[p] != 0) out->counts.emplace_hint(out->counts.end(), p, c[p]);
    out->out_of_range = c[info.n_paths];
  } else {
    for (size_t k = 0; k < n_sparse; ++k) {
      const ballarus_sparse_entry& s = sparse[k];
      if (s.count == 0) continue;
      if (s.key < info.n_paths) {
        out->counts.emplace_hint(out->counts.end(), s.key, s.count);
      } else {
        out->out_of_range_keys[s.key] = s.count;
        out->out_of_range = ballarus_count_add(out->out_of_range, s.count);
      }
    }
  }
  for (const auto& [number, count] : out->counts)
    out->updates = ballarus_count_add(out->updates, count);
  if ((info.flags & kPathFlagDerivedCounts) &&
      !AddDerivedCounts(f, flow, out, &err)) {
    *error = where + err;
    return false;
  }
  if (info.flags & kPathFlagPrecountsKept) {
    // The stored count of a path cut short at a pre-counting call also
    // counts the executions that went on past the call: subtract them.
    if (!SettlePrecounts(out->dag, out->numbering, f, info.precount_edges,
                         &out->counts, &err)) {
      *error = where + err;
      return false;
    }
  }
  if (info.flags & kPathFlagBalancedStarts) {
    // Truncated paths whose pre-count was not made: what balances their
    // start's paths against its starts.
    std::vector<std::pair<uint64_t, uint32_t>> balanced;
    for (const PathInfo::Balanced& b : info.balanced)
      balanced.emplace_back(b.path, b.start);
    if (!BalanceStarts(out->dag, out->numbering, f, balanced, &out->counts,
                       &err)) {
      *error = where + err;
      return false;
    }
  }
  if (info.flags & kPathFlagEntryBalanced) {
    // The truncated path from the entry whose pre-count was not made: what
    // balances the paths from the entry against the calls of the function.
    if (!invocations) {
      if (out->derived_problem.empty())
        out->derived_problem =
            "the count of path " + std::to_string(info.entry_path) +
            " comes from the blocks that call the function, whose counts "
            "are unknown";
    } else if (!BalanceEntry(out->dag, out->numbering, f, info.entry_path,
                             *invocations, &out->counts, &err)) {
      *error = where + err;
      return false;
    }
  }
  return DecodeCountedPaths(f, where, out, error);
}

// Decodes out->counts into out->decoded, out->derived and out->total.
bool DecodeCountedPaths(const Function& f, const std::string& where,
                        LoadedPaths* out, std::string* error) {
  out->derived.assign(f.edges.size(), 0);
  for (const auto& [number, count] : out->counts) {
    std::vector<uint32_t>& edges =
        out->decoded.emplace_hint(out->decoded.end(), number,
                                  std::vector<uint32_t>())
            ->second;
    if (!DecodePath(out->dag, out->numbering,
                    mpz_class(static_cast<unsigned long>(number)), &edges)) {
      *error = where + "path " + std::to_string(number) +
               " cannot be decoded";  // cannot happen: number < n_paths
      return false;
    }
    AddPathToEdgeCounts(out->dag, edges, count, &out->derived);
    out->total = ballarus_count_add(out->total, count);
  }
  return true;
}

// Each function's callers whose flows its entry needs: those of its path
// entry balance and of its entry calls (core/entry_calls.h), which go into
// (*entry)[i].
std::vector<std::vector<uint32_t>> EntryDependencies(
    const LoadedTu& lt, const std::vector<const PathInfo*>& infos,
    std::vector<std::optional<EntryCalls>>* entry) {
  const size_t nf = lt.tu.functions.size();
  std::vector<std::vector<uint32_t>> callers(nf);
  for (size_t i = 0; i < nf; ++i) {
    if (infos[i])
      for (const PathInfo::Call& call : infos[i]->entry_calls)
        callers[i].push_back(call.function);
    EntryCalls ec;
    std::string err;
    if (FindEntryCalls(lt.tu.functions[i], &ec, &err)) {
      for (const PathInfo::Call& call : ec.calls)
        callers[i].push_back(call.function);
      (*entry)[i] = std::move(ec);
    }
  }
  return callers;
}

// Every function copy of one record: its path data (checking that every
// sparse entry names a hashed path table), its measured or path-derived
// edge counts, and its solved flow.
bool ReadCopies(const RecordOffsets& at, LoadedTu* lt, std::string* error) {
  const ballarus_profile_record& rec = *lt->record;
  const size_t nf = lt->tu.functions.size();
  lt->copies.assign(nf, FunctionCopy());
  std::vector<const PathInfo*> infos(nf, nullptr);
  std::vector<PathInfo> storage(nf);
  for (size_t i = 0; i < nf; ++i) {
    const Function& f = lt->tu.functions[i];
    std::string err;
    infos[i] = FindPathInfo(f, &storage[i], &err);
    if (!infos[i] && !err.empty()) {
      *error = At(at.metadata, at.index) + "metadata: function '" + f.name +
               "': " + err;
      return false;
    }
  }
  // Sparse entries are sorted by (function, key) (checked by profile_io).
  for (uint64_t k = 0; k < rec.n_sparse; ++k) {
    const uint64_t fn = rec.sparse[k].function;
    if (fn >= nf || !infos[fn] || infos[fn]->storage != PathInfo::kHashed) {
      *error = At(at.sparse + k * sizeof(ballarus_sparse_entry), at.index) +
               "sparse entry " + std::to_string(k) + " names function " +
               std::to_string(fn) +
               (fn >= nf ? " of " + std::to_string(nf)
                         : " ('" + lt->tu.functions[fn].name +
                               "'), which has no hashed path table");
      return false;
    }
  }
  // Each function's sparse entries: [first[i], end[i]).
  std::vector<size_t> sparse_first(nf, 0), sparse_end(nf, 0);
  size_t next_sparse = 0;
  for (size_t i = 0; i < nf; ++i) {
    sparse_first[i] = next_sparse;
    while (next_sparse < rec.n_sparse && rec.sparse[next_sparse].function == i)
      ++next_sparse;
    sparse_end[i] = next_sparse;
  }
  // A function whose entry is balanced by its calls (PathInfo::
  // entry_calls) or whose entry count they give (EntryCalls) comes after
  // its callers, whose flows give the calls' counts; DecodeMetadata checked
  // that the dependencies have no cycle.
  std::vector<std::optional<EntryCalls>> entry(nf);
  const std::vector<uint32_t> order =
      CallersFirstOrder(EntryDependencies(*lt, infos, &entry));
  if (order.size() != nf) {
    *error = At(at.metadata, at.index) +
             "metadata: entry balances depend on one another in a cycle";
    return false;
  }
  std::vector<const FlowResult*> flows(nf, nullptr);  // solved so far
  for (const uint32_t i : order) {
    const Function& f = lt->tu.functions[i];
    FunctionCopy& c = lt->copies[i];
    for (const Edge& e : f.edges)
      if (e.counter != kNoCounter) c.edge_counters = true;
    if (lt->tu.flags & (BALLARUS_META_F_NAIVE | BALLARUS_META_F_EDGE))
      c.edge_counters = true;
    const size_t first = sparse_first[i];
    // The invocations of an entry-balanced function: its calls' counts.
    Count invocations;
    if (infos[i] && (infos[i]->flags & kPathFlagEntryBalanced)) {
      std::string ignored;
      invocations = CountOfCalls(infos[i]->entry_calls, flows, lt->tu.functions, &ignored);
    }
    // With edge counters the edge profile comes first: derived path
    // counts (PathInfo::derived) are read off it.
    const bool flow_first = c.edge_counters;
    if (flow_first) {
      c.known = KnownFromCounters(f, rec.counters, rec.n_counters);
      if (entry[i]) {
        // Its entry count: the sum of its call blocks' counts.
        c.entry_from_calls = entry[i]->edge;
        c.known[entry[i]->edge] =
            CountOfCalls(entry[i]->calls, flows, lt->tu.functions, &c.entry_problem);
      }
      c.flow = SolveFlow(f, c.known);
    }
    if (infos[i]) {
      c.paths.emplace();
      const size_t n = sparse_end[i] - first;
      if (!LoadPaths(f, *infos[i], at, rec, n ? rec.sparse + first : nullptr, n,
                     flow_first ? &c.flow : nullptr, invocations, &*c.paths,
                     error))
        return false;
    }
    const bool from_edges =
        c.paths && c.paths->info.storage == PathInfo::kFromEdges;
    if (!flow_first) {
      // mode=path: the edge counts come from the paths, but for functions
      // without paths or whose paths the edge counters determine.
      if (!c.paths || from_edges) {
        c.known = KnownFromCounters(f, rec.counters, rec.n_counters);
        if (from_edges) c.edge_counters = true;
      } else {
        c.known.assign(f.edges.size(), std::nullopt);
        for (size_t e = 0; e < f.edges.size(); ++e)
          if (c.paths->in_dag(e)) c.known[e] = c.paths->derived[e];
      }
      c.flow = SolveFlow(f, c.known);
    }
    if (from_edges) {
      // The path counts follow from the edge counts (PathCountsFromEdges).
      // Counts that do not decompose into whole paths are reported, not
      // fatal: the edge profile stays readable.
      LoadedPaths& lp = *c.paths;
      std::string err;
      if (!PathCountsFromEdges(lp.dag, lp.numbering, f, c.flow.edges,
                               &lp.counts, &err)) {
        lp.counts.clear();
        lp.from_edges_problem = err;
      }
      const std::string where = At(at.metadata, at.index) +
                                "metadata: function '" + f.name +
                                "': path extension: ";
      if (!DecodeCountedPaths(f, where, &lp, error)) return false;
    }
    flows[i] = &c.flow;
  }
  return true;
}

}  // namespace

ProfileRecords::~ProfileRecords() { ballarus_profile_free(&raw); }

bool ReadProfile(const std::string& path, ProfileRecords* out,
                 std::string* error) {
  char err[512];
  if (ballarus_profile_read_file(path.c_str(), &out->raw, err, sizeof err) !=
      0) {
    *error = err;
    return false;
  }
  return DecodeProfile(out, error);
}

bool ReadProfileFrom(ballarus_profile* raw, ProfileRecords* out,
                     std::string* error) {
  out->raw = *raw;
  *raw = ballarus_profile{};
  return DecodeProfile(out, error);
}

bool DecodeProfile(ProfileRecords* out, std::string* error) {
  // Decode every record's metadata; offsets are reported file-relative.
  uint64_t offset = BALLARUS_PROFILE_HEADER_SIZE;
  out->tus.resize(out->raw.n_records);
  for (uint32_t i = 0; i < out->raw.n_records; ++i) {
    const ballarus_profile_record& rec = out->raw.records[i];
    LoadedTu& lt = out->tus[i];
    lt.record = &rec;
    lt.file_offset = offset;
    const uint64_t meta_at = offset + BALLARUS_RECORD_HEADER_SIZE;
    DecodeResult r = DecodeMetadata(rec.metadata, rec.meta_size, &lt.tu);
    if (!r.ok) {
      // r.error reads "offset N: problem" with N blob-relative.
      const std::string problem = r.error.substr(r.error.find(": ") + 2);
      *error = At(meta_at + r.offset, i) + "metadata: " + problem;
      return false;
    }
    if (lt.tu.n_counters != rec.n_counters) {
      *error = At(offset, i) + std::to_string(rec.n_counters) +
               " counters, its metadata declares " +
               std::to_string(lt.tu.n_counters);
      return false;
    }
    offset += BALLARUS_RECORD_HEADER_SIZE + Pad8(rec.meta_size) +
              8 * rec.n_counters +
              sizeof(ballarus_sparse_entry) * rec.n_sparse;
  }
  // Then every record's functions (the error of the first bad metadata
  // wins over any problem of the counts, as the file is read in order).
  for (uint32_t i = 0; i < out->raw.n_records; ++i) {
    LoadedTu& lt = out->tus[i];
    RecordOffsets at;
    at.index = i;
    at.metadata = lt.file_offset + BALLARUS_RECORD_HEADER_SIZE;
    at.sparse = at.metadata + Pad8(lt.record->meta_size) +
                8 * lt.record->n_counters;
    if (!ReadCopies(at, &lt, error)) return false;
    if (lt.tu.flags & BALLARUS_META_F_PATH) out->has_paths = true;
    for (const FunctionCopy& c : lt.copies)
      if (c.paths) out->has_paths = true;
  }
  return true;
}

std::vector<std::string> TestNames(const ProfileRecords& all) {
  return TestNames(all.raw);
}

std::vector<std::string> TestNames(const ballarus_profile& raw) {
  std::vector<std::string> names;
  for (uint64_t k = 0; k < raw.n_named; ++k) {
    const ballarus_named_record& n = raw.named[k];
    std::string name(n.name, n.name_size);
    if (names.empty() || names.back() != name) names.push_back(name);
  }
  return names;  // named records are sorted by name
}

namespace {

// A record of test `n`'s counts, borrowing `base`'s metadata; false when
// out of memory.
bool NamedRecord(const ballarus_profile_record& base,
                 const ballarus_named_record& n, ballarus_profile_record* r) {
  *r = ballarus_profile_record{};
  r->stamp = base.stamp;
  r->identity = base.identity;
  r->runs = n.runs;
  r->metadata = base.metadata;
  r->meta_size = base.meta_size;
  r->borrowed = 1;
  r->n_counters = base.n_counters;
  r->counters = static_cast<uint64_t*>(calloc(base.n_counters + 1, 8));
  r->sparse = static_cast<ballarus_sparse_entry*>(
      malloc((n.n_sparse + 1) * sizeof(ballarus_sparse_entry)));
  if (r->counters == nullptr || r->sparse == nullptr) return false;
  for (uint64_t j = 0; j < n.n_dense; ++j)
    r->counters[n.dense[j].index] = n.dense[j].count;
  if (n.n_sparse > 0)
    memcpy(r->sparse, n.sparse, n.n_sparse * sizeof(ballarus_sparse_entry));
  r->n_sparse = n.n_sparse;
  return true;
}

}  // namespace

bool ReadNamedRun(const ProfileRecords& all, const std::string& name,
                  ProfileRecords* out, std::string* error) {
  ballarus_profile& p = out->raw;
  p = ballarus_profile{};
  p.records = static_cast<ballarus_profile_record*>(
      calloc(all.raw.n_records + 1, sizeof(ballarus_profile_record)));
  if (p.records == nullptr) {
    *error = "out of memory";
    return false;
  }
  for (uint64_t k = 0; k < all.raw.n_named; ++k) {
    const ballarus_named_record& n = all.raw.named[k];
    if (std::string(n.name, n.name_size) != name) continue;
    // The parser checked that the stamp is one of the records'; named
    // records of one name are sorted by stamp, as records are.
    for (uint32_t i = 0; i < all.raw.n_records; ++i) {
      if (all.raw.records[i].stamp != n.stamp) continue;
      if (!NamedRecord(all.raw.records[i], n, &p.records[p.n_records++])) {
        *error = "out of memory";
        return false;
      }
      p.runs = std::max(p.runs, n.runs);
    }
  }
  if (p.n_records == 0) {
    *error = "no named run '" + name + "' in the profile";
    return false;
  }
  return DecodeProfile(out, error);
}

}  // namespace ballarus
