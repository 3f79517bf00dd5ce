// gcov_view.cc — gcov 12's reading of the report model (see gcov_view.h).
#include "reconstruct/gcov_view.h"

#include "core/gcov_lines.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ballarus {
namespace gcov {
namespace {

int64_t CountOf(const Count& c) {
  return c ? GcovCount(*c) : 0;
}

// Hawick & James circuit enumeration, as gcov.cc's circuit() and
// get_cycles_count(): the count of the loops lying entirely on a line.
class Cycles {
 public:
  Cycles(std::vector<Function>* fns, const Line& line)
      : fns_(*fns), line_(line) {}

  int64_t Count() {
    int64_t count = 0;
    for (const BlockId& b : line_.blocks) {
      path_.clear();
      blocked_.clear();
      block_lists_.clear();
      Circuit(b, b, &count);
    }
    return count;
  }

 private:
  bool HasBlock(const BlockId& b) const {
    return std::find(line_.blocks.begin(), line_.blocks.end(), b) !=
           line_.blocks.end();
  }

  void Unblock(const BlockId& u) {
    auto it = std::find(blocked_.begin(), blocked_.end(), u);
    if (it == blocked_.end()) return;
    const size_t index = it - blocked_.begin();
    blocked_.erase(it);
    std::vector<BlockId> to_unblock = block_lists_[index];
    block_lists_.erase(block_lists_.begin() + index);
    for (const BlockId& b : to_unblock) Unblock(b);
  }

  void HandleCycle(int64_t* count) {
    int64_t cycle_count = INT64_MAX;
    for (const ArcId& a : path_)
      cycle_count = std::min(cycle_count, cs_[a]);
    *count = GcovAdd(*count, cycle_count);
    for (const ArcId& a : path_) cs_[a] -= cycle_count;
  }

  bool Circuit(const BlockId& v, const BlockId& start, int64_t* count) {
    bool loop_found = false;
    blocked_.push_back(v);
    block_lists_.emplace_back();
    const Block& block = fns_[v.first].blocks[v.second];
    for (uint32_t a : block.succ) {
      BlockId w;
      if (SkipArc(start, v.first, a, &w)) continue;
      path_.push_back(ArcId{v.first, a});
      if (w == start) {
        HandleCycle(count);
        loop_found = true;
      } else {
        bool nonpositive = false;
        for (const ArcId& p : path_) nonpositive |= cs_[p] <= 0;
        if (!nonpositive &&
            std::find(blocked_.begin(), blocked_.end(), w) == blocked_.end())
          loop_found |= Circuit(w, start, count);
      }
      path_.pop_back();
    }
    if (loop_found) {
      Unblock(v);
    } else {
      for (uint32_t a : block.succ) {
        BlockId w;
        if (SkipArc(start, v.first, a, &w)) continue;
        const size_t index =
            std::find(blocked_.begin(), blocked_.end(), w) - blocked_.begin();
        if (index >= blocked_.size()) continue;  // gcov asserts
        std::vector<BlockId>& list = block_lists_[index];
        if (std::find(list.begin(), list.end(), v) == list.end())
          list.push_back(v);
      }
    }
    return loop_found;
  }

 public:
  // cs_count of every successor arc of the line's blocks, set by the
  // caller before Count().
  std::map<ArcId, int64_t> cs_;

 private:
  // Whether arc `a` out of a block of function `fn` is not followed: its
  // target lies below `start` (gcov compares block addresses: one
  // function's blocks are one array), has no count left, or is not on the
  // line.
  bool SkipArc(const BlockId& start, uint32_t fn, uint32_t a, BlockId* w) {
    const Arc& arc = fns_[fn].arcs[a];
    *w = BlockId{fn, arc.dst};
    auto it = cs_.find(ArcId{fn, a});
    const int64_t cs = it == cs_.end() ? 0 : it->second;
    return *w < start || cs <= 0 || !HasBlock(*w);
  }

  std::vector<Function>& fns_;
  const Line& line_;
  std::vector<ArcId> path_;
  std::vector<BlockId> blocked_;
  std::vector<std::vector<BlockId>> block_lists_;
};

// gcov stat()s the directory before a ".." (so a symlink is followed, and
// only a directory that cannot be stat'ed keeps its "..").
bool Unstatable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0;
}

}  // namespace

int64_t Function::returned() const {
  if (blocks.size() < 2) return 0;
  int64_t r = blocks[1].count;
  for (uint32_t a : blocks[1].pred)
    if (arcs[a].fake) r = GcovSub(r, arcs[a].count);
  return r;
}

int64_t Function::CallReturns(const Arc& fake) const {
  int64_t r = 0;
  for (uint32_t a : blocks[fake.src].succ) {
    if (arcs[a].fake) continue;
    r = GcovAdd(r, arcs[a].count);
    const Block& dst = blocks[arcs[a].dst];
    if (!dst.is_call_return) continue;
    // The call's later returns, which ballarus counts on edges from ENTRY
    // into the block after it (gcov's counter after the call counts them).
    r = GcovAdd(r, dst.returns_again);
    for (uint32_t p : dst.pred)
      if (arcs[p].is_nonlocal_return) r = GcovAdd(r, arcs[p].count);
  }
  return r;
}

const std::vector<uint32_t>& Source::FunctionsAt(
    const std::vector<Function>& fns, uint32_t line) const {
  static const std::vector<uint32_t> kNone;
  auto it = line_to_function.find(line);
  if (it == line_to_function.end()) return kNone;
  std::sort(it->second.begin(), it->second.end(), [&](uint32_t a, uint32_t b) {
    const Function &x = fns[a], &y = fns[b];
    return x.start_line == y.start_line ? x.start_column < y.start_column
                                        : x.start_line < y.start_line;
  });
  return it->second;
}

std::string CanonicalizeName(const std::string& name, const std::string& base);

std::string CanonicalizeName(const std::string& name) {
  return CanonicalizeName(name, "");
}

// `base`: the directory relative names are stat'ed in (gcov uses its
// working directory; reports use the TU's compile directory).
std::string CanonicalizeName(const std::string& name,
                             const std::string& base) {
  std::string result;
  size_t dd_base = 0;  // result may not be shortened below this
  bool slash = false;
  size_t pos = 0;
  while (pos < name.size()) {
    size_t probe = pos;
    while (probe < name.size() && name[probe] != '/') ++probe;
    const std::string comp = name.substr(pos, probe - pos);
    if (comp == ".") {
      // elided
    } else if (comp == "..") {
      std::string at = result;
      if (!at.empty() && at[0] != '/' && !base.empty()) at = base + "/" + at;
      if (dd_base == result.size() || Unstatable(at)) {
        // Cannot elide: keep "..", and never elide before it.
        if (slash) result += '/';
        result += comp;
        dd_base = result.size();
        slash = true;
      } else {
        size_t p = result.size();
        while (p != dd_base && result[p] != '/') --p;
        // gcov leaves `ptr` on the separator (or at dd_base).
        result.resize(p);
        slash = p != 0;
      }
    } else {
      if (slash) result += '/';
      result += comp;
      slash = true;
    }
    pos = probe;
    while (pos < name.size() && name[pos] == '/') ++pos;
  }
  // A leading '/' (absolute name): the first component is empty.
  return result;
}

std::string ManglePath(const std::string& name) {
  std::string out;
  size_t pos = 0;
  while (pos < name.size()) {
    size_t probe = pos;
    while (probe < name.size() && name[probe] != '/') ++probe;
    const std::string comp = name.substr(pos, probe - pos);
    out += comp == ".." ? std::string("^") : comp;
    if (probe < name.size()) {
      out += '#';
      ++probe;
    }
    pos = probe;
  }
  return out;
}

View::View(const report::Report& r, const std::vector<uint32_t>& tus,
           const Options& options)
    : r_(&r), tus_(tus), options_(options) {
  for (uint32_t t : tus) {
    runs += r.tus[t].runs;
    for (const report::TuFunction& tf : r.tus[t].functions)
      if (tf.function != report::TuFunction::kNone) ReadFunction(t, tf);
  }
  ProcessAllFunctions();
  for (uint32_t fi = 0; fi < functions.size(); ++fi)
    AddLineCounts(&functions[fi], fi);
  for (Source& s : sources) AccumulateLineCounts(&s);
}

uint32_t View::FindSource(uint32_t file, uint32_t tu) {
  // gcov finds sources by name: a TU's own spelling, canonicalized.
  const auto key = std::make_pair(file, tu);
  const auto known = source_of_.find(key);
  if (known != source_of_.end()) return known->second;
  const std::string canon = CanonicalizeName(
      r_->tus[tu].SpellingOf(file, r_->files[file]), r_->tus[tu].cwd);
  uint32_t idx = 0;
  for (; idx < sources.size(); ++idx)
    if (sources[idx].name == canon) break;
  if (idx == sources.size()) {
    Source s;
    s.name = canon;
    s.file = file;
    s.tu = tu;
    sources.push_back(std::move(s));
  }
  source_of_.emplace(key, idx);
  return idx;
}

// read_graph_file for one function (and its counts from the model).
void View::ReadFunction(uint32_t tu, const report::TuFunction& tf) {
  const report::FunctionReport& f = r_->functions[tf.function];
  Function g;
  g.function = tf.function;
  g.tu = tu;
  g.name = f.name;
  g.demangled = f.demangled.empty() ? f.name : f.demangled;
  g.source = FindSource(f.file, tu);
  g.start_line = f.line;
  g.start_column = f.start_column;
  g.end_line = f.end_line;
  g.end_column = f.end_column;
  g.blocks.resize(f.blocks.size());
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    g.blocks[b].count =
        CountOf(tf.blocks ? (*tf.blocks)[b] : f.blocks[b].count);
  }
  for (size_t e = 0; e < f.edges.size(); ++e) {
    const report::EdgeReport& er = f.edges[e];
    // A re-entry on ballarus' own edge (kEdgeReentry) is no arc of gcov's:
    // the block it enters counts only its other entries, as gcov sees it,
    // and ENTRY only the activations started (core/gcov_lines.cc does the
    // same).
    // A fake ENTRY edge off GCC's spanning tree (the later returns of a
    // setjmp or vfork, into its own block) is no arc of gcov's either: gcov
    // counts the block's other entries only, and its calls' returns in
    // full (Function::CallReturns).
    if (!er.gcov_arc && (er.flags & kEdgeFake) && er.src == kEntryBlock &&
        !(er.flags & kEdgeReentry) && !er.ignored() && er.dst != kEntryBlock) {
      const int64_t c = CountOf(tf.edges ? (*tf.edges)[e] : er.count);
      g.blocks[er.dst].count = GcovSub(g.blocks[er.dst].count, c);
    }
    if ((er.flags & kEdgeReentry) && !er.ignored()) {
      const int64_t c = CountOf(tf.edges ? (*tf.edges)[e] : er.count);
      if (er.dst != kEntryBlock) {
        g.blocks[er.dst].count = GcovSub(g.blocks[er.dst].count, c);
        if (er.flags & kEdgeFake)  // a later return of setjmp / vfork
          g.blocks[er.dst].returns_again =
              GcovAdd(g.blocks[er.dst].returns_again, c);
      }
      if (er.src == kEntryBlock)
        g.blocks[kEntryBlock].count = GcovSub(g.blocks[kEntryBlock].count, c);
    }
    if (!er.gcov_arc) continue;
    Arc a;
    a.src = er.src;
    a.dst = er.dst;
    a.edge = static_cast<uint32_t>(e);
    a.count = CountOf(tf.edges ? (*tf.edges)[e] : er.count);
    a.fake = (er.flags & kEdgeFake) != 0;
    // profile.cc: EDGE_FALLTHRU, or a condition's arm that goes to the
    // next block in layout order (GIMPLE has no fall-through flag on
    // them); after compact_blocks that is the next index (EXIT after the
    // last block).
    const uint32_t next =
        er.src + 1 < f.blocks.size() ? er.src + 1 : static_cast<uint32_t>(kExitBlock);
    a.fall_through = (er.flags & kEdgeFallthru) ||
                     ((er.flags & (kEdgeTrue | kEdgeFalse)) &&
                      er.src != kEntryBlock && er.dst == next);
    if (a.fake) {
      if (a.src != kEntryBlock) {
        g.blocks[a.src].is_call_site = true;
        a.is_call_non_return = true;
      } else {
        a.is_nonlocal_return = true;
      }
    }
    const uint32_t ai = static_cast<uint32_t>(g.arcs.size());
    g.arcs.push_back(a);
    g.blocks[a.src].succ.push_back(ai);
    g.blocks[a.dst].pred.push_back(ai);
  }
  // mark_catches: a block with a fake exit is a call; its other
  // non-fallthrough exits go to catch handlers.
  for (Block& b : g.blocks) {
    bool call = false;
    for (uint32_t a : b.succ) call |= g.arcs[a].is_call_non_return;
    if (!call) continue;
    for (uint32_t a : b.succ)
      if (!g.arcs[a].fake && !g.arcs[a].fall_through) {
        g.arcs[a].is_throw = true;
        g.has_catch = true;
      }
  }
  // The lines: one location per run of one file (output_location starts a
  // new one when the file changes, and at each block).
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    const std::vector<report::SourceLine>& lines = f.blocks[b].lines;
    for (size_t i = 0; i < lines.size();) {
      Location loc;
      loc.source = FindSource(lines[i].file, tu);
      size_t j = i;
      for (; j < lines.size() && lines[j].file == lines[i].file; ++j)
        loc.lines.push_back(lines[j].line);
      g.blocks[b].locations.push_back(std::move(loc));
      i = j;
    }
  }
  // solve_flow_graph's bookkeeping (the counts are solved already).
  for (Block& b : g.blocks) {
    uint32_t non_fake = 0;
    for (uint32_t a : b.succ) non_fake += !g.arcs[a].fake;
    if (non_fake == 1)
      for (uint32_t a : b.succ) {
        Arc& arc = g.arcs[a];
        if (arc.fake) continue;
        arc.is_unconditional = true;
        const Block& dst = g.blocks[arc.dst];
        if (b.is_call_site && arc.fall_through && dst.pred.size() == 1 &&
            dst.pred[0] == a)
          g.blocks[arc.dst].is_call_return = true;
      }
    std::stable_sort(b.succ.begin(), b.succ.end(), [&](uint32_t x, uint32_t y) {
      return g.arcs[x].dst < g.arcs[y].dst;
    });
  }
  artificial_.push_back((f.flags & kFunctionArtificial) != 0);
  functions.push_back(std::move(g));
}

void View::ProcessAllFunctions() {
  // Group functions: non-artificial functions sharing a file and start line.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> first_at;
  for (uint32_t i = 0; i < functions.size(); ++i) {
    if (artificial_[i]) continue;
    auto [it, inserted] = first_at.emplace(
        std::make_pair(functions[i].source, functions[i].start_line), i);
    if (!inserted) {
      functions[it->second].is_group = true;
      functions[i].is_group = true;
    }
  }
  std::vector<Function> kept;
  for (uint32_t i = 0; i < functions.size(); ++i)
    if (!artificial_[i]) kept.push_back(std::move(functions[i]));
  functions = std::move(kept);
  artificial_.clear();

  for (uint32_t fi = 0; fi < functions.size(); ++fi) {
    Function& fn = functions[fi];
    sources[fn.source].functions.push_back(fi);
    sources[fn.source].line_to_function[fn.start_line].push_back(fi);
    for (Block& b : fn.blocks)
      for (Location& loc : b.locations) {
        std::sort(loc.lines.begin(), loc.lines.end());
        if (loc.lines.empty()) continue;
        Source& s = sources[loc.source];
        if (loc.lines.back() >= s.lines.size())
          s.lines.resize(size_t{loc.lines.back()} + 1);
      }
    if (fn.is_group)
      fn.lines.resize(fn.end_line >= fn.start_line
                          ? size_t{fn.end_line} - fn.start_line + 1
                          : 0);
    if (!fn.has_catch) continue;
    // find_exception_blocks: exceptional unless reachable from ENTRY along
    // arcs that are neither fake nor throws.
    for (Block& b : fn.blocks) b.exceptional = true;
    std::vector<uint32_t> queue{kEntryBlock};
    fn.blocks[kEntryBlock].exceptional = false;
    while (!queue.empty()) {
      const uint32_t b = queue.back();
      queue.pop_back();
      for (uint32_t a : fn.blocks[b].succ) {
        const Arc& arc = fn.arcs[a];
        if (!arc.fake && !arc.is_throw && fn.blocks[arc.dst].exceptional) {
          fn.blocks[arc.dst].exceptional = false;
          queue.push_back(arc.dst);
        }
      }
    }
  }
}

void View::AddLineCounts(Function* fn, uint32_t fi) {
  const size_t nb = fn->blocks.size();
  for (size_t ix = 0; ix < nb; ++ix) {
    Block& block = fn->blocks[ix];
    Line* line = nullptr;
    if (block.count && ix && ix + 1 != nb) ++fn->blocks_executed;
    for (const Location& loc : block.locations) {
      for (uint32_t ln : loc.lines) {
        if (fn->is_group && loc.source == fn->source && fn->start_line <= ln &&
            ln <= fn->end_line) {
          line = &fn->lines[ln - fn->start_line];
        } else {
          line = &sources[loc.source].lines[ln];
          // gcov -f's per-function figures, as gcov 12.2's add_line_counts
          // takes them (group lines are not counted).
          if (!line->exists) ++fn->coverage.lines;
          if (!line->count && block.count) ++fn->coverage.lines_executed;
        }
        line->exists = true;
        if (!block.exceptional) {
          line->unexceptional = true;
          if (block.count == 0) line->has_unexecuted_block = true;
        }
        line->count = GcovAdd(line->count, block.count);
      }
      if (ix == 0 || ix + 1 == nb || line == nullptr) continue;
      line->blocks.push_back(BlockId{fi, static_cast<uint32_t>(ix)});
      if (options_.branches)
        for (uint32_t a : block.succ) line->branches.push_back(ArcId{fi, a});
    }
  }
}

void View::AccumulateLineInfo(Line* line, Source* src, bool add_coverage) {
  if (add_coverage)
  for (const ArcId& a : line->branches) {
    const Function& fn = functions[a.first];
    const Arc& arc = fn.arcs[a.second];
    const int64_t src_count = fn.blocks[arc.src].count;
    if (arc.is_call_non_return) {
      ++src->coverage.calls;
      if (src_count) ++src->coverage.calls_executed;
    } else if (!arc.is_unconditional) {
      ++src->coverage.branches;
      if (src_count) ++src->coverage.branches_executed;
      if (arc.count) ++src->coverage.branches_taken;
    }
  }
  if (!line->blocks.empty()) {
    int64_t count = 0;
    Cycles cycles(&functions, *line);
    for (const BlockId& b : line->blocks) {
      const Function& fn = functions[b.first];
      for (uint32_t a : fn.blocks[b.second].pred) {
        const BlockId from{b.first, fn.arcs[a].src};
        if (std::find(line->blocks.begin(), line->blocks.end(), from) ==
            line->blocks.end())
          count = GcovAdd(count, fn.arcs[a].count);
      }
      for (uint32_t a : fn.blocks[b.second].succ)
        cycles.cs_[ArcId{b.first, a}] = fn.arcs[a].count;
    }
    count = GcovAdd(count, cycles.Count());
    line->count = count;
    if (line->count > src->maximum_count) src->maximum_count = line->count;
  }
  if (line->exists && add_coverage) {
    ++src->coverage.lines;
    if (line->count) ++src->coverage.lines_executed;
  }
}

void View::AccumulateLineCounts(Source* src) {
  const uint32_t self = static_cast<uint32_t>(src - sources.data());
  for (uint32_t fi : src->functions) {
    Function& fn = functions[fi];
    if (fn.source != self || !fn.is_group) continue;
    // gcov 12.2 leaves group lines out of the file's figures until they
    // are folded into its lines below (not at all in JSON mode).
    for (Line& l : fn.lines) AccumulateLineInfo(&l, src, false);
  }
  for (Line& l : src->lines) AccumulateLineInfo(&l, src, true);
  if (options_.json) return;
  for (uint32_t fi : src->functions) {
    Function& fn = functions[fi];
    if (fn.source != self || !fn.is_group) continue;
    for (size_t i = 0; i < fn.lines.size(); ++i) {
      const Line& fl = fn.lines[i];
      if (!fl.exists) continue;
      Line& sl = src->lines[fn.start_line + i];
      if (!sl.exists) ++src->coverage.lines;
      if (!sl.count && fl.count) ++src->coverage.lines_executed;
      sl.count = GcovAdd(sl.count, fl.count);
      sl.exists = true;
      if (fl.has_unexecuted_block) sl.has_unexecuted_block = true;
      if (fl.unexceptional) sl.unexceptional = true;
    }
  }
}

std::vector<uint32_t> View::SortedFunctions(uint32_t source) const {
  // gcov std::sorts src->functions (reading order) once, before its JSON.
  std::vector<uint32_t> sorted = sources[source].functions;
  std::sort(sorted.begin(), sorted.end(), [&](uint32_t a, uint32_t b) {
    const Function &x = functions[a], &y = functions[b];
    return x.start_line == y.start_line ? x.start_column < y.start_column
                                        : x.start_line < y.start_line;
  });
  return sorted;
}

std::vector<JsonLineRef> View::JsonLines(uint32_t source) const {
  const Source& src = sources[source];
  std::vector<JsonLineRef> out;
  std::vector<uint32_t> last_non_group;
  for (uint32_t line_num = 1; line_num <= src.lines.size(); ++line_num) {
    for (uint32_t fi : src.FunctionsAt(functions, line_num)) {
      const Function& fn = functions[fi];
      if (!fn.is_group) last_non_group.push_back(fi);
      for (size_t i = 0; i < fn.lines.size(); ++i)
        if (fn.lines[i].exists)
          out.push_back(JsonLineRef{line_num + static_cast<uint32_t>(i),
                                    &fn.lines[i], static_cast<int32_t>(fi)});
    }
    if (line_num < src.lines.size()) {
      const int32_t last =
          last_non_group.empty() ? -1
                                 : static_cast<int32_t>(last_non_group.back());
      if (src.lines[line_num].exists)
        out.push_back(JsonLineRef{line_num, &src.lines[line_num], last});
      if (last >= 0 && functions[last].end_line == line_num)
        last_non_group.pop_back();
    }
  }
  return out;
}

}  // namespace gcov
}  // namespace ballarus
