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

}  // namespace

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
    offset += BALLARUS_RECORD_HEADER_SIZE + Pad8(rec.meta_size) +
              8 * rec.n_counters +
              sizeof(ballarus_sparse_entry) * rec.n_sparse;
  }

  // Group functions: COMDAT copies by (name, cfg_checksum) if their graphs
  // agree; everything else stands alone.
  std::map<std::pair<std::string, uint32_t>, std::vector<size_t>> comdat;
  for (size_t t = 0; t < out->tus.size(); ++t) {
    const LoadedTu& lt = out->tus[t];
    for (const Function& f : lt.tu.functions) {
      const std::vector<Count> known = KnownFromCounters(
          f, lt.record->counters, lt.record->n_counters);
      if (f.flags & kFunctionComdat) {
        std::vector<size_t>& group = comdat[{f.name, f.cfg_checksum}];
        bool merged = false;
        for (size_t gi : group) {
          LoadedFunction& g = out->functions[gi];
          if (!SameGraph(*g.function, f)) continue;
          for (size_t e = 0; e < known.size(); ++e) {
            if (g.known[e] && known[e])
              g.known[e] = ballarus_sat_add(*g.known[e], *known[e]);
            else
              g.known[e].reset();
          }
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
      lf.known = known;
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
  for (const LoadedTu& lt : out->tus) {
    std::vector<FlowResult> flows;
    flows.reserve(lt.tu.functions.size());
    for (const Function& f : lt.tu.functions)
      flows.push_back(SolveFlow(
          f, KnownFromCounters(f, lt.record->counters, lt.record->n_counters)));
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
