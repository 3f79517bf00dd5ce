// gcov_lines.cc — gcov 12's line counts, reproduced (see gcov_lines.h).
//
// Transcribed from gcc-12.2.0/gcc/gcov.cc, keeping its quirks, since the
// point is to agree with gcov to the unit:
//
//   * Arcs are the .gcno arcs: our edges minus kEdgeIgnored ones (profile.cc
//     does not write ignored edges) and minus kEdgeReentry ones (ballarus'
//     own, gcov has no such arc), successors in .gcno order, predecessors
//     in reading order (solve_flow_graph reverses gcov's prepended lists).
//     A block entered through re-entry edges counts only its other
//     entries, as gcov sees it (its arcs in do not include them).
//   * A block's lines form "locations": runs of consecutive lines of one
//     file (output_location starts a new run only when the file changes);
//     process_all_functions sorts each run's lines.
//   * add_line_counts: every line of every block gets `exists`, and
//     `count += block count` (once per occurrence); the block is then pushed
//     onto the `blocks` list of the LAST line of each of its runs — except
//     for block 0 and for the block with the highest index (gcov still
//     tests `ix + 1 == blocks.size ()` for EXIT, although GCC numbers EXIT
//     1 since the blocks were renumbered; the last real block is skipped).
//   * accumulate_line_info: a line with blocks gets, instead of the raw sum,
//     the sum of the counts of arcs entering its blocks from blocks not on
//     the line (a block listed twice is summed twice), plus
//     get_cycles_count: for each block on the line as start, circuit()
//     enumerates circuits through blocks >= start on the line along arcs
//     whose remaining count (cs_count) is positive; handle_cycle adds the
//     circuit's minimum remaining count and subtracts it from its arcs.
//   * unexecuted_block: some non-exceptional block on the line has count 0;
//     exceptional: no block on the line is non-exceptional (gcov's
//     !unexceptional, printed ===== for a count of 0); blocks are
//     exceptional when has_catch (a call block with a fake arc and
//     other non-fallthrough arcs, which are "throw" arcs) and they are not
//     reachable from ENTRY along non-fake, non-throw arcs.
//   * "Group" functions (non-artificial functions sharing file and start
//     line) keep their own lines in [start_line, end_line] of their file;
//     in JSON mode these are not folded into the file's lines.
//   * Artificial functions are removed before anything else.
#include "core/gcov_lines.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace ballarus {
namespace {

struct BlockRef {
  size_t fn;  // index into the Fn vector below
  uint32_t block;
  bool operator==(const BlockRef& o) const {
    return fn == o.fn && block == o.block;
  }
};

// Each block's arcs (edge indices) in one array (compressed rows): a
// vector per block costs most of the time on big profiles.
class Adjacency {
 public:
  struct Range {
    const uint32_t* b;
    const uint32_t* e;
    const uint32_t* begin() const { return b; }
    const uint32_t* end() const { return e; }
  };
  // `key(i)` is the block edge i belongs to, or -1 to leave it out; edges
  // keep their order within a block.
  template <typename Key>
  void Build(size_t n_blocks, size_t n_edges, Key key) {
    off_.assign(n_blocks + 1, 0);
    for (size_t i = 0; i < n_edges; ++i) {
      const int64_t k = key(i);
      if (k >= 0) ++off_[k + 1];
    }
    for (size_t b = 0; b < n_blocks; ++b) off_[b + 1] += off_[b];
    arr_.resize(off_[n_blocks]);
    std::vector<uint32_t> at(off_.begin(), off_.end() - 1);
    for (size_t i = 0; i < n_edges; ++i) {
      const int64_t k = key(i);
      if (k >= 0) arr_[at[k]++] = static_cast<uint32_t>(i);
    }
  }
  Range operator[](size_t b) const {
    return Range{arr_.data() + off_[b], arr_.data() + off_[b + 1]};
  }

 private:
  std::vector<uint32_t> off_, arr_;
};

struct Fn {
  const Function* f;
  int32_t input_index;
  bool is_group = false;
  std::vector<int64_t> block_count;
  std::vector<int64_t> edge_count;
  Adjacency succ, pred;  // .gcno arcs (edge indices)
  std::vector<bool> exceptional;

  bool GroupLine(uint32_t file, uint32_t line) const {
    return is_group && f->file == file && f->line <= line &&
           line <= f->end_line;
  }
};

struct LineInfo {
  int64_t count = 0;
  bool exists = false;
  bool unexceptional = false;
  bool has_unexecuted_block = false;
  std::vector<BlockRef> blocks;

  bool HasBlock(const BlockRef& b) const {
    return std::find(blocks.begin(), blocks.end(), b) != blocks.end();
  }
};

// (owner, file, line); owner = -1 for file-level lines, else input index.
using LineKey = std::tuple<int32_t, uint32_t, uint32_t>;

struct LineKeyHash {
  size_t operator()(const LineKey& k) const {
    uint64_t h = static_cast<uint32_t>(std::get<0>(k));
    h = h * 0x9e3779b97f4a7c15ull ^ std::get<1>(k);
    h = h * 0x9e3779b97f4a7c15ull ^ std::get<2>(k);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

void MarkExceptional(Fn* fn) {
  const Function& f = *fn->f;
  const size_t nb = f.blocks.size();
  fn->exceptional.assign(nb, false);
  std::vector<bool> is_throw(f.edges.size(), false);
  bool has_catch = false;
  for (size_t b = 1; b < nb; ++b) {
    bool fake = false;
    for (size_t e : fn->succ[b]) fake |= (f.edges[e].flags & kEdgeFake) != 0;
    if (!fake) continue;
    for (size_t e : fn->succ[b])
      if (!(f.edges[e].flags & (kEdgeFake | kEdgeFallthru))) {
        is_throw[e] = true;
        has_catch = true;
      }
  }
  if (!has_catch) return;
  fn->exceptional.assign(nb, true);
  std::vector<uint32_t> stack = {kEntryBlock};
  fn->exceptional[kEntryBlock] = false;
  while (!stack.empty()) {
    const uint32_t b = stack.back();
    stack.pop_back();
    for (size_t e : fn->succ[b]) {
      const uint32_t d = f.edges[e].dst;
      if (!(f.edges[e].flags & kEdgeFake) && !is_throw[e] &&
          fn->exceptional[d]) {
        fn->exceptional[d] = false;
        stack.push_back(d);
      }
    }
  }
}

// Hawick & James circuit enumeration as in gcov.cc's circuit().
class Cycles {
 public:
  Cycles(const std::vector<Fn>& fns, const LineInfo& line,
         std::map<std::pair<size_t, size_t>, int64_t>* cs)
      : fns_(fns), line_(line), cs_(*cs) {}

  int64_t Count() {
    int64_t count = 0;
    for (const BlockRef& b : line_.blocks) {
      path_.clear();
      blocked_.clear();
      block_lists_.clear();
      Circuit(b, b, &count);
    }
    return count;
  }

 private:
  int64_t& Cs(size_t fn, size_t e) { return cs_[{fn, e}]; }

  bool Skip(const BlockRef& start, size_t e, BlockRef* w) {
    const Fn& fn = fns_[start.fn];
    *w = BlockRef{start.fn, fn.f->edges[e].dst};
    return w->block < start.block || Cs(start.fn, e) <= 0 ||
           !line_.HasBlock(*w);
  }

  void Unblock(const BlockRef& u) {
    auto it = std::find(blocked_.begin(), blocked_.end(), u);
    if (it == blocked_.end()) return;
    const size_t index = it - blocked_.begin();
    blocked_.erase(it);
    std::vector<BlockRef> to_unblock = block_lists_[index];
    block_lists_.erase(block_lists_.begin() + index);
    for (const BlockRef& b : to_unblock) Unblock(b);
  }

  bool PathHasNonPositive() {
    for (size_t e : path_)
      if (Cs(current_fn_, e) <= 0) return true;
    return false;
  }

  void HandleCycle(int64_t* count) {
    int64_t cycle_count = INT64_MAX;
    for (size_t e : path_) cycle_count = std::min(cycle_count, Cs(current_fn_, e));
    *count = GcovAdd(*count, cycle_count);
    for (size_t e : path_) Cs(current_fn_, e) -= cycle_count;
  }

  bool Circuit(const BlockRef& v, const BlockRef& start, int64_t* count) {
    current_fn_ = start.fn;
    bool loop_found = false;
    blocked_.push_back(v);
    block_lists_.emplace_back();
    const Fn& fn = fns_[v.fn];
    for (size_t e : fn.succ[v.block]) {
      BlockRef w;
      if (Skip(start, e, &w)) continue;
      path_.push_back(e);
      if (w == start) {
        HandleCycle(count);
        loop_found = true;
      } else if (!PathHasNonPositive() &&
                 std::find(blocked_.begin(), blocked_.end(), w) ==
                     blocked_.end()) {
        loop_found |= Circuit(w, start, count);
      }
      path_.pop_back();
    }
    if (loop_found) {
      Unblock(v);
    } else {
      for (size_t e : fn.succ[v.block]) {
        BlockRef w;
        if (Skip(start, e, &w)) continue;
        const size_t index =
            std::find(blocked_.begin(), blocked_.end(), w) - blocked_.begin();
        // gcov asserts index < blocked.size (); it holds for valid input.
        if (index >= blocked_.size()) continue;
        std::vector<BlockRef>& list = block_lists_[index];
        if (std::find(list.begin(), list.end(), v) == list.end())
          list.push_back(v);
      }
    }
    return loop_found;
  }

  const std::vector<Fn>& fns_;
  const LineInfo& line_;
  std::map<std::pair<size_t, size_t>, int64_t>& cs_;
  size_t current_fn_ = 0;
  std::vector<size_t> path_;
  std::vector<BlockRef> blocked_;
  std::vector<std::vector<BlockRef>> block_lists_;
};

}  // namespace

std::vector<GcovLine> GcovLineCounts(
    const std::vector<GcovFunctionInput>& functions) {
  // process_all_functions: drop artificial functions, find groups.
  std::vector<Fn> fns;
  for (size_t i = 0; i < functions.size(); ++i) {
    const GcovFunctionInput& in = functions[i];
    if (in.function == nullptr || (in.function->flags & kFunctionArtificial))
      continue;
    Fn fn;
    fn.f = in.function;
    fn.input_index = static_cast<int32_t>(i);
    const Function& f = *in.function;
    const size_t nb = f.blocks.size();
    fn.block_count.assign(nb, 0);
    fn.edge_count.assign(f.edges.size(), 0);
    for (size_t b = 0; b < nb; ++b)
      if (in.blocks && b < in.blocks->size() && (*in.blocks)[b])
        fn.block_count[b] = GcovCount(*(*in.blocks)[b]);
    for (size_t e = 0; e < f.edges.size(); ++e)
      if (in.edges && e < in.edges->size() && (*in.edges)[e])
        fn.edge_count[e] = GcovCount(*(*in.edges)[e]);
    // Re-entry edges are no arcs of gcov's: the block they enter counts
    // only its other entries.
    for (size_t e = 0; e < f.edges.size(); ++e) {
      const Edge& edge = f.edges[e];
      if ((edge.flags & kEdgeIgnored) || edge.src >= nb || edge.dst >= nb)
        continue;
      if ((edge.flags & kEdgeReentry) && edge.dst != kEntryBlock)
        fn.block_count[edge.dst] =
            GcovSub(fn.block_count[edge.dst], fn.edge_count[e]);
    }
    auto arc = [&](size_t e) {
      const Edge& edge = f.edges[e];
      return !(edge.flags & (kEdgeIgnored | kEdgeReentry)) && edge.src < nb &&
             edge.dst < nb;
    };
    fn.succ.Build(nb, f.edges.size(), [&](size_t e) -> int64_t {
      return arc(e) ? static_cast<int64_t>(f.edges[e].src) : int64_t{-1};
    });
    fn.pred.Build(nb, f.edges.size(), [&](size_t e) -> int64_t {
      return arc(e) ? static_cast<int64_t>(f.edges[e].dst) : int64_t{-1};
    });
    MarkExceptional(&fn);
    fns.push_back(std::move(fn));
  }
  std::map<std::pair<uint32_t, uint32_t>, size_t> starts;
  for (size_t i = 0; i < fns.size(); ++i) {
    auto [it, inserted] =
        starts.emplace(std::make_pair(fns[i].f->file, fns[i].f->line), i);
    if (!inserted) {
      fns[it->second].is_group = true;
      fns[i].is_group = true;
    }
  }

  // add_line_counts.  (A hash map: lines are independent of one another
  // until the output, which is sorted.)
  std::unordered_map<LineKey, LineInfo, LineKeyHash> lines;
  std::vector<uint32_t> run;
  for (size_t fi = 0; fi < fns.size(); ++fi) {
    const Fn& fn = fns[fi];
    const Function& f = *fn.f;
    const size_t nb = f.blocks.size();
    for (size_t ix = 0; ix < nb; ++ix) {
      const std::vector<Location>& locs = f.blocks[ix].lines;
      const int64_t count = fn.block_count[ix];
      LineInfo* line = nullptr;
      for (size_t start = 0; start < locs.size();) {
        size_t end = start;
        while (end < locs.size() && locs[end].file == locs[start].file) ++end;
        const uint32_t file = locs[start].file;
        run.clear();
        for (size_t k = start; k < end; ++k) run.push_back(locs[k].line);
        std::sort(run.begin(), run.end());
        for (uint32_t ln : run) {
          const int32_t owner = fn.GroupLine(file, ln) ? fn.input_index : -1;
          line = &lines[LineKey(owner, file, ln)];
          line->exists = true;
          if (!fn.exceptional[ix]) {
            line->unexceptional = true;
            if (count == 0) line->has_unexecuted_block = true;
          }
          line->count = GcovAdd(line->count, count);
        }
        if (ix != 0 && ix + 1 != nb && line != nullptr)
          line->blocks.push_back(BlockRef{fi, static_cast<uint32_t>(ix)});
        start = end;
      }
    }
  }

  // accumulate_line_info.
  for (auto& [key, line] : lines) {
    if (line.blocks.empty()) continue;
    if (line.blocks.size() == 1) {
      // One block: the entries from other blocks, and each self-loop arc
      // with a positive count is a circuit of its own (what Cycles finds).
      const BlockRef b = line.blocks[0];
      const Fn& fn = fns[b.fn];
      int64_t count = 0;
      for (size_t e : fn.pred[b.block])
        if (fn.f->edges[e].src != b.block)
          count = GcovAdd(count, fn.edge_count[e]);
      for (size_t e : fn.succ[b.block])
        if (fn.f->edges[e].dst == b.block && fn.edge_count[e] > 0)
          count = GcovAdd(count, fn.edge_count[e]);
      line.count = count;
      continue;
    }
    int64_t count = 0;
    std::map<std::pair<size_t, size_t>, int64_t> cs;
    for (const BlockRef& b : line.blocks) {
      const Fn& fn = fns[b.fn];
      for (size_t e : fn.pred[b.block])
        if (!line.HasBlock(BlockRef{b.fn, fn.f->edges[e].src}))
          count = GcovAdd(count, fn.edge_count[e]);
      for (size_t e : fn.succ[b.block]) cs[{b.fn, e}] = fn.edge_count[e];
    }
    count = GcovAdd(count, Cycles(fns, line, &cs).Count());
    line.count = count;
  }

  std::vector<GcovLine> out;
  for (const auto& [key, line] : lines) {
    if (!line.exists) continue;
    GcovLine g;
    g.function = std::get<0>(key);
    g.file = std::get<1>(key);
    g.line = std::get<2>(key);
    g.count = line.count;
    g.unexecuted_block = line.has_unexecuted_block;
    g.exceptional = !line.unexceptional;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GcovLine& a, const GcovLine& b) {
                     auto key = [](const GcovLine& g) {
                       return std::make_tuple(g.file, g.line,
                                              g.function < 0 ? 1 : 0,
                                              g.function);
                     };
                     return key(a) < key(b);
                   });
  return out;
}

}  // namespace ballarus
