// loaded_profile.cc — line counts, COMDAT grouping (see loaded_profile.h).
#include "reconstruct/loaded_profile.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/gcov_arcs.h"
#include "core/paths.h"
#include "reconstruct/named_runs.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

using u128 = unsigned __int128;

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

// Adds a COMDAT copy's path counts into the group's.
void MergePaths(const LoadedPaths& from, LoadedPaths* into) {
  if (into->derived_problem.empty())
    into->derived_problem = from.derived_problem;
  into->info.flags &= from.info.flags;
  for (const auto& [number, count] : from.counts) {
    uint64_t& c = into->counts[number];
    c = ballarus_count_add(c, count);
    if (c == 0) {
      into->counts.erase(number);
      into->decoded.erase(number);
    } else {
      into->decoded.emplace(number, from.decoded.at(number));
    }
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
  into->updates = ballarus_count_add(into->updates, from.updates);
}

// a + b into *sum if both are known and the sum stays below UINT64_MAX
// (so neither side nor the sum was clamped by SolveFlow); true, leaving
// *sum alone, if both are unknown; false otherwise.
bool SumBelowMax(const Count& a, const Count& b, Count* sum) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  const u128 s = u128{*a} + *b;
  if (s >= UINT64_MAX) return false;
  *sum = static_cast<uint64_t>(s);
  return true;
}

bool SumCounts(const std::vector<Count>& a, const std::vector<Count>& b,
               std::vector<Count>* sum) {
  if (a.size() != b.size()) return false;
  sum->resize(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (!SumBelowMax(a[i], b[i], &(*sum)[i])) return false;
  return true;
}

// The solution of the summed counts from the two solutions, when that is
// exactly what SolveFlow(f, known_a + known_b) would give.  It is when both
// sides know the same edges, their known counts add up without wrapping
// modulo 2^64, neither met a negative derivation and no solved count comes
// near UINT64_MAX: SolveFlow then solves the same edges in the same order
// on both sides, each from a difference that is linear in the known counts
// and never negative, so the sum's solution is the sum of the solutions.
bool SumSolutions(const std::vector<Count>& known_a, const FlowResult& a,
                  const std::vector<Count>& known_b, const FlowResult& b,
                  FlowResult* sum) {
  if (!a.negatives.empty() || !b.negatives.empty()) return false;
  if (known_a.size() != known_b.size()) return false;
  for (size_t i = 0; i < known_a.size(); ++i) {
    if (known_a[i].has_value() != known_b[i].has_value()) return false;
    if (known_a[i] && u128{*known_a[i]} + *known_b[i] > UINT64_MAX)
      return false;
  }
  return SumCounts(a.edges, b.edges, &sum->edges) &&
         SumCounts(a.blocks, b.blocks, &sum->blocks) &&
         SumBelowMax(a.virtual_edge, b.virtual_edge, &sum->virtual_edge);
}

// Adds COMDAT copy `c` into group `g`.  *solved says whether g.flow is
// still SolveFlow(g.function, g.known); it becomes false when the sum of
// the solutions is not the solution of the sum.
void AddCopy(size_t t, uint32_t index, FunctionCopy* c, LoadedFunction* g,
             bool* solved) {
  if (g->copies.size() == 1 && g->copies[0].edges.empty()) {
    g->copies[0].edges = g->flow.edges;
    g->copies[0].blocks = g->flow.blocks;
  }
  g->copies.push_back(LoadedFunction::Copy{index, c->flow.edges, c->flow.blocks});
  if (*solved) {
    FlowResult sum;
    *solved = SumSolutions(g->known, g->flow, c->known, c->flow, &sum);
    if (*solved) g->flow = std::move(sum);
  }
  for (size_t e = 0; e < c->known.size(); ++e) {
    if (g->known[e] && c->known[e])
      g->known[e] = ballarus_count_add(*g->known[e], *c->known[e]);
    else
      g->known[e].reset();
  }
  if (g->paths) MergePaths(*c->paths, &*g->paths);
  g->tus.push_back(t);
}

// gcov's line counts are a per-TU computation (gcov.cc accumulates all
// functions of a .gcno before it counts lines): each TU with its own
// copies' solved counts, the TUs added up.
void CountFileLines(LoadedProfile* out) {
  // One file per absolute, lexically normalised path: every TU's names
  // resolved against its compile directory.
  std::map<std::string, std::set<std::string>> by_path;
  std::vector<std::vector<std::string>> tu_paths;
  for (const LoadedTu& lt : out->records.tus) {
    std::vector<std::string>& paths = tu_paths.emplace_back();
    for (const std::string& name : lt.tu.files) {
      paths.push_back(SourcePath(lt.tu.cwd, name));
      by_path[paths.back()].insert(name);
    }
  }
  // Shown as its shortest spelling; ordered by that, then by path (the
  // order of the names themselves when each path has one spelling).
  struct Group {
    std::string shown, path;
    std::vector<std::string> spellings;
  };
  std::vector<Group> groups;
  for (auto& [path, names] : by_path) {
    Group g{"", path, {names.begin(), names.end()}};
    g.shown = *std::min_element(
        names.begin(), names.end(), [](const std::string& a, const std::string& b) {
          return a.size() != b.size() ? a.size() < b.size() : a < b;
        });
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tie(a.shown, a.path) < std::tie(b.shown, b.path);
  });
  std::map<std::string, uint32_t> index_of;
  for (Group& g : groups) {
    index_of[g.path] = static_cast<uint32_t>(out->files.size());
    out->files.push_back(std::move(g.shown));
    out->paths.push_back(std::move(g.path));
    out->spellings.push_back(std::move(g.spellings));
  }
  // (file << 32 | line, line) of every TU's lines, then summed by key.
  std::vector<std::pair<uint64_t, GcovLine>> counts;
  for (size_t t = 0; t < out->records.tus.size(); ++t) {
    const LoadedTu& lt = out->records.tus[t];
    std::vector<uint32_t>& file_of = out->tu_files.emplace_back();
    for (const std::string& path : tu_paths[t])
      file_of.push_back(index_of.at(path));
    std::vector<GcovFunctionInput> inputs;
    inputs.reserve(lt.tu.functions.size());
    for (size_t i = 0; i < lt.tu.functions.size(); ++i)
      if (!IsProfileUseOnly(lt.tu.functions[i]))  // as gcov's reports
        inputs.push_back(GcovFunctionInput{&lt.tu.functions[i],
                                         &lt.copies[i].flow.edges,
                                         &lt.copies[i].flow.blocks});
    for (const GcovLine& l : GcovLineCounts(inputs))
      counts.emplace_back(uint64_t{file_of[l.file]} << 32 | l.line, l);
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, l] : counts) {
    if (out->file_lines.empty() ||
        (uint64_t{out->file_lines.back().file} << 32 |
         out->file_lines.back().line) != key)
      out->file_lines.push_back(LoadedProfile::FileLineCount{
          static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), 0});
    LoadedProfile::FileLineCount& fl = out->file_lines.back();
    fl.count = GcovAdd(fl.count, l.count);
    fl.unexecuted_block = fl.unexecuted_block || l.unexecuted_block;
    fl.exceptional = fl.exceptional && l.exceptional;
  }
}

// Groups functions: COMDAT copies by (name, cfg_checksum) if their graphs
// and path numberings agree; everything else stands alone.  Moves every
// copy's counts into out->functions.
void GroupFunctions(LoadedProfile* out) {
  std::map<std::pair<std::string, uint32_t>, std::vector<size_t>> comdat;
  std::vector<bool> solved;  // parallel to out->functions
  for (size_t t = 0; t < out->records.tus.size(); ++t) {
    LoadedTu& lt = out->records.tus[t];
    for (size_t fi = 0; fi < lt.tu.functions.size(); ++fi) {
      const Function& f = lt.tu.functions[fi];
      FunctionCopy& c = lt.copies[fi];
      if (IsProfileUseOnly(f)) continue;  // extern inline: for .gcda only
      if (f.flags & kFunctionComdat) {
        std::vector<size_t>& group = comdat[{f.name, f.cfg_checksum}];
        bool merged = false;
        for (size_t gi : group) {
          LoadedFunction& g = out->functions[gi];
          if (!SameGraph(*g.function, f) || !SamePaths(g.paths, c.paths))
            continue;
          bool s = solved[gi];
          AddCopy(t, static_cast<uint32_t>(fi), &c, &g, &s);
          solved[gi] = s;
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
      lf.copies.push_back(LoadedFunction::Copy{static_cast<uint32_t>(fi), {}, {}});
      lf.known = std::move(c.known);
      lf.edge_counters = c.edge_counters;
      lf.paths = std::move(c.paths);
      lf.flow = std::move(c.flow);
      lf.entry_from_calls = c.entry_from_calls;
      lf.entry_problem = std::move(c.entry_problem);
      out->functions.push_back(std::move(lf));
      solved.push_back(true);
    }
    lt.copies.clear();
  }
  for (size_t i = 0; i < out->functions.size(); ++i)
    if (!solved[i]) {
      LoadedFunction& lf = out->functions[i];
      lf.flow = SolveFlow(*lf.function, lf.known);
    }
}

// Everything after reading: line counts, groups, order.
void Finish(LoadedProfile* out);

// out->whole read, the records of `test` decoded from it.
bool LoadTest(const std::string& test, LoadedProfile* out, std::string* error) {
  const std::string label = out->path;
  return LoadPartOf(out->whole->raw, test, label, out, error);
}

}  // namespace

bool LoadProfile(const std::string& path, LoadedProfile* out,
                 std::string* error, const std::string& test) {
  out->path = path;
  if (!test.empty()) {
    out->whole = std::make_unique<ProfileRecords>();
    char err[512];
    if (ballarus_profile_read_file(path.c_str(), &out->whole->raw, err,
                                   sizeof err) != 0) {
      *error = err;
      return false;
    }
    return LoadTest(test, out, error);
  }
  if (!ReadProfile(path, &out->records, error)) return false;
  Finish(out);
  return true;
}

bool LoadProfileFrom(ballarus_profile* raw, const std::string& label,
                     LoadedProfile* out, std::string* error,
                     const std::string& test) {
  out->path = label;
  if (!test.empty()) {
    out->whole = std::make_unique<ProfileRecords>();
    out->whole->raw = *raw;
    *raw = ballarus_profile{};
    return LoadTest(test, out, error);
  }
  if (!ReadProfileFrom(raw, &out->records, error)) return false;
  Finish(out);
  return true;
}

bool LoadPartOf(const ballarus_profile& whole, const std::string& test,
                const std::string& label, LoadedProfile* out,
                std::string* error) {
  out->path = label;
  out->test = test;
  ballarus_profile part{};
  if (test.empty()) {
    UnnamedProfile(whole, &part);
  } else if (!TestProfile(whole, test, &part)) {
    *error = NoSuchTest(whole, test);
    return false;
  }
  if (!ReadProfileFrom(&part, &out->records, error)) return false;
  Finish(out);
  return true;
}

namespace {

void Finish(LoadedProfile* out) {
  CountFileLines(out);
  GroupFunctions(out);
  for (LoadedFunction& lf : out->functions) {
    std::vector<size_t> order(lf.tus.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return out->records.tus[lf.tus[a]].tu.source <
             out->records.tus[lf.tus[b]].tu.source;
    });
    std::vector<size_t> tus;
    std::vector<LoadedFunction::Copy> copies;
    for (size_t i : order) {
      tus.push_back(lf.tus[i]);
      copies.push_back(std::move(lf.copies[i]));
    }
    lf.tus = std::move(tus);
    lf.copies = std::move(copies);
    lf.lines = GcovLineCounts(
        {GcovFunctionInput{lf.function, &lf.flow.edges, &lf.flow.blocks}});
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
}

}  // namespace

}  // namespace ballarus
