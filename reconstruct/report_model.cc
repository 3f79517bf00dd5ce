// report_model.cc — BuildReport and DecodePathReport (see report_model.h).
#include "reconstruct/report_model.h"

#include <algorithm>
#include <map>

#include "core/path_profile.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace report {
namespace {

// Which cut edges are loop entries rather than back edges: the plugin cuts
// the retreating edges of FindBackEdges' depth-first search, and with
// tune-path-loop-cuts also the entry edges of some loops (plugin/path_cuts.cc).
// Per model edge: a cut edge that is not a retreating edge.  Block b is a
// loop header with cut entries: some cut entry edge ends at b.
struct CutKinds {
  std::vector<bool> entry_cut;
  std::vector<bool> entered_by_cut;
};

CutKinds CutKindsOf(const FunctionReport& fr, const PathInfo& info) {
  CutKinds k;
  k.entry_cut.assign(fr.edges.size(), false);
  k.entered_by_cut.assign(fr.blocks.size(), false);
  if (info.cut_edges.empty() || fr.loaded == nullptr ||
      fr.loaded->function == nullptr)
    return k;
  const std::vector<uint32_t> back = FindBackEdges(*fr.loaded->function);
  for (uint32_t i : info.cut_edges)
    if (i < k.entry_cut.size() &&
        !std::binary_search(back.begin(), back.end(), i)) {
      k.entry_cut[i] = true;
      if (fr.edges[i].dst < k.entered_by_cut.size())
        k.entered_by_cut[fr.edges[i].dst] = true;
    }
  return k;
}

// The path's blocks, how it began and ended, and its source lines.
PathReport Describe(const FunctionReport& fr, const PathDag& dag,
                    const CutKinds& cuts,
                    const std::vector<uint32_t>& dag_edges) {
  PathReport v;
  v.blocks = PathBlocks(dag, dag_edges);
  if (!dag_edges.empty()) {
    const DagEdge& first = dag.edges[dag_edges.front()];
    if (first.kind == DagEdge::kStart)
      v.start = dag.cut_end_edge[first.dst] >= 0 ? PathReport::kAfterCut
                : first.dst < cuts.entered_by_cut.size() &&
                        cuts.entered_by_cut[first.dst]
                    ? PathReport::kAtCutLoop
                    : PathReport::kAfterBackEdge;
    const DagEdge& last = dag.edges[dag_edges.back()];
    switch (last.kind) {
      case DagEdge::kBackEnd:
        v.end = last.ref < cuts.entry_cut.size() && cuts.entry_cut[last.ref]
                    ? PathReport::kLoopEntry
                    : PathReport::kBackEdge;
        v.target = fr.edges[last.ref].dst;
        break;
      case DagEdge::kCutEnd:
        v.end = PathReport::kCut;
        v.target = last.ref;
        // PathBlocks lists the cut block the path's last CFG edge enters;
        // it runs on the next path.
        if (!v.blocks.empty() && v.blocks.back() == last.ref &&
            dag_edges.size() >= 2)
          v.blocks.pop_back();
        break;
      case DagEdge::kCfg:
        v.end = (fr.edges[last.ref].flags & kEdgeFake) ? PathReport::kNoReturn
                                                       : PathReport::kReturn;
        // GCC replaces abnormal edges by fake ones (src -> EXIT, ENTRY ->
        // dst): a fake exit from a block with such an edge is that jump.
        if (v.end == PathReport::kNoReturn)
          for (const EdgeReport& e : fr.edges)
            if (e.src == fr.edges[last.ref].src && e.ignored()) {
              v.end = PathReport::kAbnormal;
              break;
            }
        break;
      case DagEdge::kStart:  // a DAG path never ends with a start dummy
        break;
    }
  }
  for (uint32_t b : v.blocks)
    for (const SourceLine& l : fr.blocks[b].lines)
      if (v.lines.empty() || v.lines.back() != l) v.lines.push_back(l);
  return v;
}

bool DecodeInto(const FunctionReport& fr, const LoadedPaths& lp,
                uint64_t number, PathReport* out) {
  std::vector<uint32_t> edges;
  if (!DecodePath(lp.dag, lp.numbering,
                  mpz_class(static_cast<unsigned long>(number)), &edges))
    return false;
  *out = Describe(fr, lp.dag, CutKindsOf(fr, lp.info), edges);
  out->number = number;
  return true;
}

PathProfileReport PathsOf(const FunctionReport& fr, const LoadedPaths& lp) {
  PathProfileReport r;
  r.n_paths = lp.info.n_paths;
  r.storage = lp.info.storage;
  r.early_termination = lp.early_termination();
  r.cut_edges = lp.info.cut_edges;
  r.cut_blocks = lp.info.cut_blocks;
  r.total = lp.total;
  r.updates = lp.updates;
  r.from_edges_problem = lp.from_edges_problem;
  r.derived_problem = lp.derived_problem;
  r.derived_paths = lp.info.derived.size();
  r.balanced_paths = lp.info.balanced.size();
  r.entry_balanced_paths =
      (lp.info.flags & kPathFlagEntryBalanced) != 0 ? 1 : 0;
  r.out_of_range = lp.out_of_range;
  r.out_of_range_keys.assign(lp.out_of_range_keys.begin(),
                             lp.out_of_range_keys.end());
  std::vector<std::pair<uint64_t, uint64_t>> sorted(lp.counts.begin(),
                                                    lp.counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) {
                     return a.second != b.second ? a.second > b.second
                                                 : a.first < b.first;
                   });
  r.executed.resize(sorted.size());
  const CutKinds cuts = CutKindsOf(fr, lp.info);
  for (uint32_t e : r.cut_edges)
    if (e < cuts.entry_cut.size() && cuts.entry_cut[e])
      r.loop_entry_edges.push_back(e);
  for (size_t i = 0; i < sorted.size(); ++i) {
    PathReport& p = r.executed[i];
    p = Describe(fr, lp.dag, cuts, lp.decoded.at(sorted[i].first));
    p.number = sorted[i].first;
    p.count = sorted[i].second;
  }
  return r;
}

FunctionReport FunctionOf(const LoadedFunction& lf,
                          const std::vector<uint32_t>& files) {
  const Function& f = *lf.function;
  FunctionReport fr;
  fr.name = f.name;
  fr.demangled = f.demangled;
  fr.file = files[f.file];
  fr.line = f.line;
  fr.end_line = f.end_line;
  const GcovReportInfo gcov = GcovReportInfoOf(f);
  fr.start_column = gcov.start_column;
  fr.end_column = gcov.end_column;
  fr.checksum = f.cfg_checksum;
  fr.flags = f.flags;
  fr.tus.assign(lf.tus.begin(), lf.tus.end());
  fr.edge_counters = lf.edge_counters;
  fr.edges_from_paths = lf.edges_from_paths();
  // Activations started, as gcov counts them: ENTRY's count minus the
  // re-entries on ballarus' own edges (plugin/reentry.cc).
  fr.execution_count = lf.flow.blocks[kEntryBlock];
  for (size_t i = 0; i < f.edges.size(); ++i) {
    if (!(f.edges[i].flags & kEdgeReentry) || !fr.execution_count) continue;
    if (f.edges[i].flags & kEdgeIgnored) continue;
    if (!lf.flow.edges[i])
      fr.execution_count.reset();
    else
      *fr.execution_count -= *lf.flow.edges[i];
  }
  fr.exit_to_entry = lf.flow.virtual_edge;
  fr.entry_from_calls = lf.entry_from_calls.has_value();
  fr.entry_problem = lf.entry_problem;
  fr.blocks.resize(f.blocks.size());
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    BlockReport& br = fr.blocks[b];
    br.count = lf.flow.blocks[b];
    br.lines.reserve(f.blocks[b].lines.size());
    for (const Location& l : f.blocks[b].lines)
      br.lines.push_back(SourceLine{files[l.file], l.line});
  }
  fr.edges.resize(f.edges.size());
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    EdgeReport& er = fr.edges[i];
    er.src = e.src;
    er.dst = e.dst;
    er.flags = e.flags;
    er.kind = KindOfEdge(e.flags);
    er.count = lf.flow.edges[i];
    er.from_calls = lf.entry_from_calls && *lf.entry_from_calls == i;
    er.counted = lf.known[i].has_value() && !er.from_calls;
    er.has_counter = e.counter != kNoCounter;
    if (lf.paths) {
      er.in_path_dag = lf.paths->in_dag(i);
      er.path_derived = lf.paths->derived[i];
    }
    // An ignored fake edge is one ballarus dropped from a cycle of
    // uncountable edges (core/spanning_tree.h); GCC may have kept it.
    // Without GcovReportInfo every ignored edge is taken for gcov's too.
    er.gcov_arc = !er.ignored() || (gcov.recorded && (e.flags & kEdgeFake) &&
                                    !(e.flags & kEdgeAbnormal));
    if (std::binary_search(gcov.dropped_edges.begin(),
                           gcov.dropped_edges.end(), static_cast<uint32_t>(i)) ||
        (e.flags & kEdgeReentry))  // ballarus' own: gcov has no such arc
      er.gcov_arc = false;
    if (er.ignored()) continue;
    ++fr.arcs;
    if (!er.has_counter) continue;
    ++fr.counters;
    if (lf.known[i])
      fr.increments = ballarus_sat_add(fr.increments, *lf.known[i]);
  }
  fr.lines.reserve(lf.lines.size());
  for (const GcovLine& l : lf.lines)
    fr.lines.push_back(LineCount{SourceLine{files[l.file], l.line}, l.count,
                                 l.unexecuted_block, l.exceptional});
  fr.flow_issues = CheckConservation(f, lf.flow);
  fr.loaded = &lf;
  if (lf.paths) fr.paths = PathsOf(fr, *lf.paths);
  return fr;
}

void AddToTotals(const FunctionReport& f, Totals* t) {
  t->blocks += f.blocks.size();
  t->edges += f.edges.size();
  t->arcs += f.arcs;
  t->counters += f.counters;
  t->increments = ballarus_sat_add(t->increments, f.increments);
  if (!f.paths) return;
  const PathProfileReport& p = *f.paths;
  ++t->path_functions;
  if (p.storage == PathInfo::kHashed)
    ++t->path_hashed_functions;
  else if (p.storage == PathInfo::kDense)
    t->path_dense_slots += p.n_paths + 1;
  t->path_increments = ballarus_count_add(
      t->path_increments, ballarus_count_add(p.updates, p.out_of_range));
  t->distinct_paths += p.executed.size();
}

// Per file: its functions, and its lines with their counts and blocks.
void IndexFiles(const LoadedProfile& p, Report* r) {
  r->by_file.resize(r->files.size());
  // (file, line) and (function, block) of every block line, sorted.
  std::vector<std::pair<uint64_t, uint64_t>> on;
  for (uint32_t fi = 0; fi < r->functions.size(); ++fi) {
    const FunctionReport& f = r->functions[fi];
    r->by_file[f.file].functions.push_back(fi);
    for (uint32_t b = 0; b < f.blocks.size(); ++b)
      for (const SourceLine& l : f.blocks[b].lines)
        on.emplace_back(uint64_t{l.file} << 32 | l.line,
                        uint64_t{fi} << 32 | b);
  }
  std::sort(on.begin(), on.end());
  on.erase(std::unique(on.begin(), on.end()), on.end());
  // Both sequences ascend by (file, line): merge them.
  auto counted = p.file_lines.begin();
  size_t k = 0;
  while (counted != p.file_lines.end() || k < on.size()) {
    uint64_t at = k < on.size() ? on[k].first : UINT64_MAX;
    FileLine fl;
    if (counted != p.file_lines.end() &&
        (uint64_t{counted->file} << 32 | counted->line) <= at) {
      at = uint64_t{counted->file} << 32 | counted->line;
      fl.count = counted->count;
      fl.unexecuted_block = counted->unexecuted_block;
      fl.exceptional = counted->exceptional;
      ++counted;
    }
    FileReport& file = r->by_file[at >> 32];
    fl.line = static_cast<uint32_t>(at);
    fl.first_block = static_cast<uint32_t>(file.blocks.size());
    for (; k < on.size() && on[k].first == at; ++k)
      file.blocks.push_back(BlockRef{static_cast<uint32_t>(on[k].second >> 32),
                                     static_cast<uint32_t>(on[k].second)});
    fl.n_blocks = static_cast<uint32_t>(file.blocks.size()) - fl.first_block;
    file.lines.push_back(fl);
  }
}

}  // namespace

EdgeKind KindOfEdge(uint32_t f) {
  if (f & kEdgeEh) return EdgeKind::kEh;
  if (f & kEdgeAbnormal) return EdgeKind::kAbnormal;
  if (f & kEdgeFake) return EdgeKind::kFake;
  if (f & kEdgeReentry) return EdgeKind::kReentry;
  if (f & kEdgeTrue) return EdgeKind::kTrue;
  if (f & kEdgeFalse) return EdgeKind::kFalse;
  if (f & kEdgeSwitch) return EdgeKind::kSwitch;
  if (f & kEdgeFallthru) return EdgeKind::kFallthrough;
  return EdgeKind::kJump;
}

const char* EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kEh:
      return "eh";
    case EdgeKind::kAbnormal:
      return "abnormal";
    case EdgeKind::kFake:
      return "fake";
    case EdgeKind::kTrue:
      return "true";
    case EdgeKind::kFalse:
      return "false";
    case EdgeKind::kSwitch:
      return "switch";
    case EdgeKind::kFallthrough:
      return "fallthrough";
    case EdgeKind::kReentry:
      return "reentry";
    case EdgeKind::kJump:
      break;
  }
  return "jump";
}

std::vector<std::string> EdgeFlagNames(uint32_t f) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kEdgeFallthru, "fallthru"}, {kEdgeTrue, "true"},
      {kEdgeFalse, "false"},       {kEdgeEh, "eh"},
      {kEdgeAbnormal, "abnormal"}, {kEdgeFake, "fake"},
      {kEdgeSwitch, "switch"},     {kEdgeIgnored, "ignored"},
      {kEdgeSplit, "split"},       {kEdgeCritical, "critical"},
      {kEdgeReentry, "reentry"},
  };
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames)
    if (f & bit) out.push_back(name);
  return out;
}

const char* PathStorageName(uint32_t storage) {
  return storage == PathInfo::kHashed      ? "hashed"
         : storage == PathInfo::kFromEdges ? "edges"
                                           : "dense";
}

Report BuildReport(const LoadedProfile& p) {
  Report r;
  r.profile = p.path;
  r.test = p.test;
  r.runs = p.runs();
  r.has_paths = p.has_paths();
  r.files = p.files;
  r.paths = p.paths;
  r.spellings = p.spellings;

  std::map<const TranslationUnit*, size_t> tu_index;
  for (size_t t = 0; t < p.tus().size(); ++t) {
    const LoadedTu& lt = p.tus()[t];
    tu_index[&lt.tu] = t;
    TuReport tr;
    tr.source = lt.tu.source;
    tr.cwd = lt.tu.cwd;
    tr.compiler = lt.tu.compiler;
    tr.flags = lt.tu.flags;
    tr.file_offset = lt.file_offset;
    tr.runs = lt.record->runs;
    tr.sparse_entries = lt.record->n_sparse;
    for (size_t i = 0; i < lt.tu.files.size(); ++i)
      tr.spelling.emplace(p.tu_files[t][i], lt.tu.files[i]);
    r.totals.path_hashed_entries += tr.sparse_entries;
    r.tus.push_back(std::move(tr));
  }

  r.functions.reserve(p.functions.size());
  for (size_t t = 0; t < p.tus().size(); ++t)
    r.tus[t].functions.resize(p.tus()[t].tu.functions.size());
  for (const LoadedFunction& lf : p.functions) {
    const uint32_t fi = static_cast<uint32_t>(r.functions.size());
    r.functions.push_back(FunctionOf(lf, p.tu_files[tu_index.at(lf.tu)]));
    AddToTotals(r.functions.back(), &r.totals);
    for (size_t c = 0; c < lf.copies.size(); ++c) {
      TuFunction& tf = r.tus[lf.tus[c]].functions[lf.copies[c].index];
      tf.function = fi;
      if (!lf.copies[c].edges.empty()) {
        tf.edges = &lf.copies[c].edges;
        tf.blocks = &lf.copies[c].blocks;
      }
    }
  }
  IndexFiles(p, &r);
  return r;
}

bool DecodePathReport(const FunctionReport& f, uint64_t number,
                      PathReport* out) {
  if (!f.paths || !f.loaded || !f.loaded->paths ||
      number >= f.paths->n_paths)
    return false;
  const LoadedPaths& lp = *f.loaded->paths;
  if (!DecodeInto(f, lp, number, out)) return false;
  auto it = lp.counts.find(number);
  out->count = it == lp.counts.end() ? 0 : it->second;
  return true;
}

}  // namespace report
}  // namespace ballarus
