// gcda_export.cc — ballarus profiles to GCC 12 .gcda files; see
// gcda_export.h.
#include "reconstruct/gcda_export.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gcov_arcs.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

// One .gcda being built: one build (stamp) of one TU, over every input.
struct Unit {
  const TranslationUnit* tu = nullptr;  // the first occurrence's metadata
  GcovUnitInfo info;
  std::vector<GcovFunctionInfo> fns;  // parallel to tu->functions
  std::vector<std::vector<uint64_t>> arcs;
  std::vector<std::string> omit;  // non-empty: why the function is left out
  uint64_t runs = 0;
  uint64_t sum_max = 0;
  uint64_t stamp = 0;
};

std::string Resolve(const std::string& cwd, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  return cwd.empty() ? path : cwd + "/" + path;
}

std::string EdgeName(const Function& f, uint32_t e) {
  return std::to_string(f.edges[e].src) + "->" +
         std::to_string(f.edges[e].dst);
}

// Decodes the gcov extensions of one TU into `u` (first occurrence).
bool DecodeUnit(const std::string& file, const LoadedTu& lt, Unit* u,
                std::string* error) {
  const TranslationUnit& tu = lt.tu;
  const std::string where = file + ": " + tu.source + ": ";
  std::string err;
  const Extension* x =
      FindExtension(tu.functions.front(), kGcovUnitExtensionTag, &err);
  if (!x) {
    *error = where + (err.empty() ? "no gcov data in its metadata (built "
                                    "by a ballarus without -fprofile-use "
                                    "support); rebuild it"
                                  : err);
    return false;
  }
  if (!DecodeGcovUnitInfo(x->bytes, &u->info, &err)) {
    *error = where + err;
    return false;
  }
  u->tu = &tu;
  u->fns.resize(tu.functions.size());
  u->arcs.resize(tu.functions.size());
  u->omit.resize(tu.functions.size());
  for (size_t i = 0; i < tu.functions.size(); ++i) {
    const Function& f = tu.functions[i];
    const Extension* fx = FindExtension(f, kGcovExtensionTag, &err);
    if (!fx || !DecodeGcovFunctionInfo(fx->bytes, f, &u->fns[i], &err)) {
      *error = where + "function '" + f.name + "': " +
               (err.empty() ? "no gcov data" : err);
      return false;
    }
    u->arcs[i].assign(u->fns[i].counter_edges.size(), 0);
  }
  return true;
}

}  // namespace

bool BuildGcdaFiles(const std::vector<GcdaInput>& profiles,
                    const GcdaExportOptions& options, GcdaExport* out,
                    std::string* error) {
  *out = GcdaExport();
  std::map<uint64_t, Unit> units;  // by stamp
  bool merged_runs_noted = false;
  for (const GcdaInput& p : profiles) {
    uint64_t profile_max = 0;
    std::vector<Unit*> seen;
    for (const LoadedTu& lt : p.records->tus) {
      if (lt.tu.functions.empty()) continue;  // gcov writes no .gcda either
      const uint64_t stamp = lt.record->stamp;
      auto [it, fresh] = units.try_emplace(stamp);
      Unit& u = it->second;
      if (fresh) {
        u.stamp = stamp;
        if (!DecodeUnit(p.path, lt, &u, error)) return false;
      }
      u.runs = ballarus_sat_add(u.runs, lt.record->runs);
      if (lt.record->runs > 1 && !merged_runs_noted) {
        out->notes.push_back(
            p.path + ": " + std::to_string(lt.record->runs) +
            " runs merged: sum_max is the largest merged count, which equals "
            "gcov's sum of each run's largest count only when the same counter "
            "is the largest in every run (keep one profile per run, "
            "BALLARUS_PROFILE=...%p, for gcov's exact summary)");
        merged_runs_noted = true;
      }
      seen.push_back(&u);
      for (size_t i = 0; i < lt.tu.functions.size(); ++i) {
        const Function& f = lt.tu.functions[i];
        const GcovFunctionInfo& g = u.fns[i];
        if (!u.omit[i].empty()) continue;
        const FlowResult& flow = lt.copies[i].flow;
        for (size_t k = 0; k < g.counter_edges.size(); ++k) {
          const uint32_t e = g.counter_edges[k];
          const Count& c = flow.edges[e];
          if (!c) {
            u.omit[i] = "the count of edge " + EdgeName(f, e) +
                        ", which gcov counts, cannot be determined";
            break;
          }
          u.arcs[i][k] = ballarus_count_add(u.arcs[i][k], *c);
          profile_max = std::max(profile_max, *c);
        }
      }
    }
    for (Unit* u : seen) u->sum_max += profile_max;
  }

  std::map<std::string, const Unit*> by_path;
  for (auto& [stamp, u] : units) {
    const TranslationUnit& tu = *u.tu;
    GcdaOutput o;
    o.source = tu.source;
    if (options.where == GcdaExportOptions::kInPlace) {
      o.path = Resolve(tu.cwd, u.info.da_file_name);
    } else {
      o.path = GcdaFileName(u.info.aux_name, tu.cwd, options.dir,
                            u.info.prefix_path);
    }
    auto [it, fresh] = by_path.emplace(o.path, &u);
    if (!fresh) {
      *error = o.path + ": two different builds of " + tu.source +
               " (ballarus stamps " + std::to_string(it->second->stamp) +
               " and " + std::to_string(stamp) +
               ") would write it; give the profiles of one build";
      return false;
    }
    GcdaFile& g = o.file;
    g.version = u.info.version;
    g.stamp = static_cast<uint32_t>(stamp ^ (stamp >> 32));
    g.runs = static_cast<uint32_t>(std::min<uint64_t>(u.runs, 0xffffffffu));
    g.sum_max = u.sum_max;
    for (size_t i = 0; i < tu.functions.size(); ++i) {
      const Function& f = tu.functions[i];
      for (uint64_t c : u.arcs[i])
        if (u.omit[i].empty() && c >= (1ull << 63))
          u.omit[i] = "a count of gcov's counters is negative (a residue "
                      ">= 2^63: profiles of unfinished path counts)";
      if (!u.omit[i].empty()) {
        out->notes.push_back(tu.source + ": function '" + f.name + "': " +
                             u.omit[i] + "; left out of " + o.path +
                             " (GCC will report its profile missing)");
        continue;
      }
      GcdaFunction gf;
      gf.ident = u.fns[i].ident;
      // A thunk's record has checksums 0 (branch_prob (thunk = true)).
      const bool thunk = u.fns[i].flags & kGcovFunctionThunk;
      gf.lineno_checksum = thunk ? 0 : f.lineno_checksum;
      gf.cfg_checksum = thunk ? 0 : f.cfg_checksum;
      gf.arcs = u.arcs[i];
      g.functions.push_back(std::move(gf));
    }
    g.checksum = GcovObjectChecksum(g.functions);
    if (!u.info.not_instrumented.empty()) {
      std::string names;
      for (const GcovUnitInfo::Missing& m : u.info.not_instrumented)
        names += (names.empty() ? "" : ", ") + m.name + " (" + m.why + ")";
      out->notes.push_back(
          tu.source + ": " + std::to_string(u.info.not_instrumented.size()) +
          " function(s) that gcov profiles are not instrumented by ballarus, "
          "so " + o.path + " has no counts for them: " + names);
    }
    out->outputs.push_back(std::move(o));
  }
  std::sort(out->outputs.begin(), out->outputs.end(),
            [](const GcdaOutput& a, const GcdaOutput& b) {
              return a.path < b.path;
            });
  std::sort(out->notes.begin(), out->notes.end());
  return true;
}

}  // namespace ballarus
