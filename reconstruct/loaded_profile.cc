// loaded_profile.cc — read, decode, group, solve (see loaded_profile.h).
#include "reconstruct/loaded_profile.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "core/metadata.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

uint64_t Pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// COMDAT copies can be summed only if their graphs are the same.
bool SameGraph(const Function& a, const Function& b) {
  if (a.blocks.size() != b.blocks.size() || a.edges.size() != b.edges.size())
    return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].src != b.edges[i].src || a.edges[i].dst != b.edges[i].dst ||
        a.edges[i].flags != b.edges[i].flags ||
        (a.edges[i].counter < 0) != (b.edges[i].counter < 0))
      return false;
  return true;
}

// ... and their path numberings too (equal cuts give equal numbers; copies
// cut differently keep their paths apart, as separate functions).
bool SamePaths(const std::optional<LoadedPaths>& a,
               const std::optional<LoadedPaths>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->info.n_paths == b->info.n_paths &&
                a->info.cut_edges == b->info.cut_edges &&
                a->info.cut_blocks == b->info.cut_blocks);
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

// One function of one record, before COMDAT copies are summed.
struct Copy {
  std::vector<Count> known;
  bool edge_counters = false;
  std::optional<LoadedPaths> paths;
};

// Where record `index`'s pieces start in the file.
struct RecordOffsets {
  uint32_t index = 0;
  uint64_t record = 0;
  uint64_t metadata = 0;
  uint64_t sparse = 0;
};

std::string At(uint64_t offset, uint32_t record) {
  return "offset " + std::to_string(offset) + ": record " +
         std::to_string(record) + ": ";
}

// Rebuilds function `fi`'s path DAG and numbering, gathers its counts and
// derives its edge counts.  `sparse`/`n_sparse` are its own sparse entries.
bool LoadPaths(const Function& f, const PathInfo& info, const RecordOffsets& at,
               const ballarus_profile_record& rec,
               const ballarus_sparse_entry* sparse, size_t n_sparse,
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
  out->derived.assign(f.edges.size(), 0);
  std::vector<uint32_t> edges;
  for (const auto& [number, count] : out->counts) {
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

// Decodes every function's path extension of one record and loads its path
// data; checks that every sparse entry names a hashed path table.
bool LoadRecordCopies(const LoadedTu& lt, const RecordOffsets& at,
                      std::vector<Copy>* copies, std::string* error) {
  const ballarus_profile_record& rec = *lt.record;
  const size_t nf = lt.tu.functions.size();
  copies->assign(nf, Copy());
  std::vector<const PathInfo*> infos(nf, nullptr);
  std::vector<PathInfo> storage(nf);
  for (size_t i = 0; i < nf; ++i) {
    const Function& f = lt.tu.functions[i];
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
                         : " ('" + lt.tu.functions[fn].name +
                               "'), which has no hashed path table");
      return false;
    }
  }
  size_t next_sparse = 0;
  for (size_t i = 0; i < nf; ++i) {
    const Function& f = lt.tu.functions[i];
    Copy& c = (*copies)[i];
    for (const Edge& e : f.edges)
      if (e.counter != kNoCounter) c.edge_counters = true;
    if (lt.tu.flags & (BALLARUS_META_F_NAIVE | BALLARUS_META_F_EDGE))
      c.edge_counters = true;
    size_t first = next_sparse;
    while (next_sparse < rec.n_sparse && rec.sparse[next_sparse].function == i)
      ++next_sparse;
    if (infos[i]) {
      c.paths.emplace();
      const size_t n = next_sparse - first;
      if (!LoadPaths(f, *infos[i], at, rec, n ? rec.sparse + first : nullptr, n,
                     &*c.paths, error))
        return false;
    }
    if (c.edge_counters || !c.paths) {
      c.known = KnownFromCounters(f, rec.counters, rec.n_counters);
    } else {
      c.known.assign(f.edges.size(), std::nullopt);
      for (size_t e = 0; e < f.edges.size(); ++e)
        if (c.paths->in_dag(e)) c.known[e] = c.paths->derived[e];
    }
  }
  return true;
}

// Adds a COMDAT copy's path counts into the group's.
void MergePaths(const LoadedPaths& from, LoadedPaths* into) {
  into->info.flags &= from.info.flags;
  for (const auto& [number, count] : from.counts) {
    uint64_t& c = into->counts[number];
    c = ballarus_count_add(c, count);
    if (c == 0) into->counts.erase(number);
  }
  for (const auto& [key, count] : from.out_of_range_keys) {
    uint64_t& c = into->out_of_range_keys[key];
    c = ballarus_count_add(c, count);
    if (c == 0) into->out_of_range_keys.erase(key);
  }
  into->out_of_range =
      ballarus_count_add(into->out_of_range, from.out_of_range);
  for (size_t e = 0; e < into->derived.size(); ++e)
    into->derived[e] = ballarus_count_add(into->derived[e], from.derived[e]);
  into->total = ballarus_count_add(into->total, from.total);
}

}  // namespace

PathView DescribePath(const Function& f, const PathDag& dag,
                      const std::vector<uint32_t>& dag_edges) {
  PathView v;
  v.blocks = PathBlocks(dag, dag_edges);
  if (dag_edges.empty()) return v;
  const DagEdge& first = dag.edges[dag_edges.front()];
  if (first.kind == DagEdge::kStart)
    v.start = dag.cut_end_edge[first.dst] >= 0 ? PathView::kAfterCut
                                               : PathView::kAfterBackEdge;
  const DagEdge& last = dag.edges[dag_edges.back()];
  switch (last.kind) {
    case DagEdge::kBackEnd:
      v.end = PathView::kBackEdge;
      v.target = f.edges[last.ref].dst;
      break;
    case DagEdge::kCutEnd:
      v.end = PathView::kCut;
      v.target = last.ref;
      // PathBlocks lists the cut block the path's last CFG edge enters;
      // it runs on the next path.
      if (!v.blocks.empty() && v.blocks.back() == last.ref &&
          dag_edges.size() >= 2)
        v.blocks.pop_back();
      break;
    case DagEdge::kCfg:
      v.end = (f.edges[last.ref].flags & kEdgeFake) ? PathView::kNoReturn
                                                    : PathView::kReturn;
      break;
    case DagEdge::kStart:  // a DAG path never ends with a start dummy
      break;
  }
  return v;
}

LoadedProfile::~LoadedProfile() { ballarus_profile_free(&raw); }

bool LoadProfile(const std::string& path, LoadedProfile* out,
                 std::string* error) {
  out->path = path;
  char err[512];
  if (ballarus_profile_read_file(path.c_str(), &out->raw, err, sizeof err) !=
      0) {
    *error = err;
    return false;
  }

  // Decode every record's metadata; offsets are reported file-relative.
  uint64_t offset = BALLARUS_PROFILE_HEADER_SIZE;
  out->tus.resize(out->raw.n_records);
  std::vector<RecordOffsets> offsets(out->raw.n_records);
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
      *error = "offset " + std::to_string(meta_at + r.offset) + ": record " +
               std::to_string(i) + ": metadata: " + problem;
      return false;
    }
    if (lt.tu.n_counters != rec.n_counters) {
      *error = "offset " + std::to_string(offset) + ": record " +
               std::to_string(i) + ": " + std::to_string(rec.n_counters) +
               " counters, its metadata declares " +
               std::to_string(lt.tu.n_counters);
      return false;
    }
    offsets[i].index = i;
    offsets[i].record = offset;
    offsets[i].metadata = meta_at;
    offsets[i].sparse = meta_at + Pad8(rec.meta_size) + 8 * rec.n_counters;
    offset += BALLARUS_RECORD_HEADER_SIZE + Pad8(rec.meta_size) +
              8 * rec.n_counters +
              sizeof(ballarus_sparse_entry) * rec.n_sparse;
  }

  // Per record and function: measured (or path-derived) edge counts and
  // path data.
  std::vector<std::vector<Copy>> copies(out->tus.size());
  for (size_t t = 0; t < out->tus.size(); ++t) {
    if (!LoadRecordCopies(out->tus[t], offsets[t], &copies[t], error))
      return false;
    if (out->tus[t].tu.flags & BALLARUS_META_F_PATH) out->has_paths = true;
  }

  // Group functions: COMDAT copies by (name, cfg_checksum) if their graphs
  // and path numberings agree; everything else stands alone.
  std::map<std::pair<std::string, uint32_t>, std::vector<size_t>> comdat;
  for (size_t t = 0; t < out->tus.size(); ++t) {
    const LoadedTu& lt = out->tus[t];
    for (size_t fi = 0; fi < lt.tu.functions.size(); ++fi) {
      const Function& f = lt.tu.functions[fi];
      Copy& c = copies[t][fi];
      if (c.paths) out->has_paths = true;
      if (f.flags & kFunctionComdat) {
        std::vector<size_t>& group = comdat[{f.name, f.cfg_checksum}];
        bool merged = false;
        for (size_t gi : group) {
          LoadedFunction& g = out->functions[gi];
          if (!SameGraph(*g.function, f) || !SamePaths(g.paths, c.paths))
            continue;
          for (size_t e = 0; e < c.known.size(); ++e) {
            if (g.known[e] && c.known[e])
              g.known[e] = ballarus_count_add(*g.known[e], *c.known[e]);
            else
              g.known[e].reset();
          }
          if (g.paths) MergePaths(*c.paths, &*g.paths);
          g.tus.push_back(t);
          merged = true;
          break;
        }
        if (merged) continue;
        group.push_back(out->functions.size());
      }
      LoadedFunction lf;
      lf.function = &f;
      lf.tu = &lt.tu;
      lf.tus.push_back(t);
      lf.known = c.known;
      lf.edge_counters = c.edge_counters;
      lf.paths = std::move(c.paths);
      out->functions.push_back(std::move(lf));
    }
  }

  for (LoadedFunction& lf : out->functions) {
    std::stable_sort(lf.tus.begin(), lf.tus.end(), [&](size_t a, size_t b) {
      return out->tus[a].tu.source < out->tus[b].tu.source;
    });
    lf.flow = SolveFlow(*lf.function, lf.known);
    lf.lines = GcovLineCounts(
        {GcovFunctionInput{lf.function, &lf.flow.edges, &lf.flow.blocks}});
  }
  // gcov's line counts are a per-TU computation (gcov.cc accumulates all
  // functions of a .gcno before it counts lines): do the same, each TU with
  // its own copy's counts, and add the TUs up.
  for (size_t t = 0; t < out->tus.size(); ++t) {
    const LoadedTu& lt = out->tus[t];
    std::vector<FlowResult> flows;
    flows.reserve(lt.tu.functions.size());
    for (size_t fi = 0; fi < lt.tu.functions.size(); ++fi)
      flows.push_back(SolveFlow(lt.tu.functions[fi], copies[t][fi].known));
    std::vector<GcovFunctionInput> inputs;
    for (size_t i = 0; i < flows.size(); ++i)
      inputs.push_back(GcovFunctionInput{&lt.tu.functions[i], &flows[i].edges,
                                         &flows[i].blocks});
    for (const GcovLine& l : GcovLineCounts(inputs))
      out->file_lines[{lt.tu.files[l.file], l.line}] += l.count;
  }

  std::stable_sort(
      out->functions.begin(), out->functions.end(),
      [](const LoadedFunction& a, const LoadedFunction& b) {
        return std::make_tuple(std::cref(a.file_name()), a.function->line,
                               std::cref(a.function->name),
                               a.function->cfg_checksum,
                               std::cref(a.tu->source)) <
               std::make_tuple(std::cref(b.file_name()), b.function->line,
                               std::cref(b.function->name),
                               b.function->cfg_checksum,
                               std::cref(b.tu->source));
      });
  return true;
}

}  // namespace ballarus
