// path_dup.cc — see path_dup.h.
//
// Right after the "profile" pass, GCC's CFG is the one the profile was
// collected on: branch_prob() prepared and numbered it as the instrumenting
// compile did (cfg_prep.cc), so block i of the profile's model is GCC's
// block i.  The value-profile transformations and the CFG cleanup that
// follow in tree_profiling may have changed a few blocks since; every chain
// is therefore checked block by block before it is copied: each block must
// exist with the model's successors and GCC's counts must be the path
// profile's (within rounding).  A chain failing the check is left alone.
//
// The copy itself is GCC's own tail duplication, as tracer.cc does it
// (duplicate_block, add_phi_args_after_copy, SSA update): it never changes
// what the function computes.  Only the counts differ from GCC's
// duplicators, which scale the original's: the copy of each block gets the
// count of the paths through the chain's entry edge, its branches their
// probabilities on those paths, and the original keeps the rest.

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/profile_reader.h"
#include "plugin/path_dup_plan.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "tree-ssa.h"
#include "plugin/path_dup.h"

namespace ballarus::plugin {

namespace {

// The profile and, per assembler name, the functions with executed paths.
struct PathProfileIndex {
  ballarus::ProfileRecords records;
  struct Entry {
    const ballarus::LoadedTu* tu;
    size_t function;
  };
  std::map<std::string, std::vector<Entry>> by_name;
};

PathProfileIndex* g_index = nullptr;

// The profile's copy of cfun's function: the one recorded from the same
// source if there is one, else the first.
const PathProfileIndex::Entry* FindFunction(const char* name) {
  auto it = g_index->by_name.find(name);
  if (it == g_index->by_name.end()) return nullptr;
  for (const PathProfileIndex::Entry& e : it->second)
    if (main_input_filename && e.tu->tu.source == main_input_filename)
      return &e;
  return &it->second.front();
}

// GCC's block for each of the model's blocks (nullptr: gone), made by
// MapBlocks for the function at hand.
std::vector<basic_block> g_blocks;

basic_block Block(uint32_t index) {
  return index < g_blocks.size() ? g_blocks[index] : nullptr;
}

// The model block's count: the paths entering it.
std::vector<uint64_t> ModelBlockCounts(const ballarus::Function& fn,
                                       const ballarus::LoadedPaths& lp) {
  std::vector<uint64_t> count(fn.blocks.size(), 0);
  for (size_t i = 0; i < fn.edges.size(); ++i)
    if (lp.in_dag(i)) count[fn.edges[i].dst] += lp.derived[i];
  return count;
}

size_t ModelSuccessors(const ballarus::Function& fn, uint32_t block) {
  size_t n = 0;
  for (const ballarus::Edge& e : fn.edges)
    n += e.src == block &&
         !(e.flags & (ballarus::kEdgeFake | ballarus::kEdgeReentry));
  return n;
}

bool Close(uint64_t a, int64_t b);

// Maps the model's blocks onto cfun's.  branch_prob() numbered the blocks
// as the model does, but the CFG cleanup at the end of the "profile" pass
// removes the forwarder blocks gcov's preparation made and compacts the
// numbering; it never reorders the blocks that remain.  So the blocks that
// remain are a subsequence of the model's, in order: each GCC block is the
// next model block with its count and number of successors, a few
// blocks on at most (a forwarder or two per block remain).  A block
// mapped wrongly is caught by ChainMismatch, which checks every edge.
void MapBlocks(const ballarus::Function& fn, const ballarus::LoadedPaths& lp) {
  const uint32_t kLookahead = 8;
  g_blocks.assign(fn.blocks.size(), nullptr);
  if (fn.blocks.size() < 2) return;
  g_blocks[0] = ENTRY_BLOCK_PTR_FOR_FN(cfun);
  g_blocks[1] = EXIT_BLOCK_PTR_FOR_FN(cfun);
  const std::vector<uint64_t> count = ModelBlockCounts(fn, lp);
  uint32_t m = 2;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    if (!bb->count.initialized_p()) return;
    for (uint32_t k = m; k < fn.blocks.size() && k < m + kLookahead; ++k) {
      if (Close(count[k], bb->count.to_gcov_type()) &&
          ModelSuccessors(fn, k) == EDGE_COUNT(bb->succs)) {
        g_blocks[k] = bb;
        m = k + 1;
        break;
      }
    }
  }
}

// Whether GCC can copy bb for one of its predecessors: as tracer.cc asks,
// and never a loop header (the copy would enter the loop a second way), a
// block with abnormal or EH edges, nor a returns-twice call's.
bool Copyable(basic_block bb) {
  if (bb == nullptr || bb->index < NUM_FIXED_BLOCKS) return false;
  if (!can_duplicate_block_p(bb)) return false;
  if (bb->loop_father && bb->loop_father->header == bb) return false;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->preds)
  if (e->flags & (EDGE_COMPLEX | EDGE_DFS_BACK)) return false;
  FOR_EACH_EDGE(e, ei, bb->succs)
  if (e->flags & EDGE_COMPLEX) return false;
  gimple* last = last_stmt(bb);
  if (last && gimple_code(last) == GIMPLE_TRANSACTION) return false;
  return true;
}

uint32_t Statements(basic_block bb) {
  uint32_t n = 0;
  for (gimple_stmt_iterator gsi = gsi_start_nondebug_bb(bb); !gsi_end_p(gsi);
       gsi_next_nondebug(&gsi))
    ++n;
  return n;
}

ballarus::PathDupLimits Limits(size_t n_blocks) {
  ballarus::PathDupLimits limits;
  limits.copyable.assign(n_blocks, false);
  limits.size.assign(n_blocks, 0);
  for (uint32_t i = 0; i < n_blocks; ++i) {
    basic_block bb = Block(i);
    if (bb == nullptr) continue;
    limits.copyable[i] = Copyable(bb);
    limits.size[i] = Statements(bb);
  }
  return limits;
}

bool Close(uint64_t a, int64_t b) {
  if (b < 0) return false;
  const uint64_t ub = uint64_t(b);
  const uint64_t d = a > ub ? a - ub : ub - a;
  return d <= 1 + (a > ub ? a : ub) / 1000;
}

// Why GCC's CFG does not hold the chain with the model's successors and
// counts; nullptr when it does.
const char* ChainMismatch(const ballarus::Function& fn,
                          const ballarus::LoadedPaths& lp,
                          const ballarus::DupChain& c) {
  const ballarus::Edge& a = fn.edges[c.entry_edge];
  basic_block p = Block(a.src), j = Block(a.dst);
  if (p == nullptr || j == nullptr) return "a block is gone";
  edge ea = find_edge(p, j);
  if (ea == nullptr) return "the entry edge is gone";
  if (ea->flags & (EDGE_COMPLEX | EDGE_DFS_BACK))
    return "the entry edge is abnormal or a back edge";
  if (!Close(lp.derived[c.entry_edge], ea->count().to_gcov_type()))
    return "the entry edge's count differs";
  for (size_t i = 0; i < c.blocks.size(); ++i) {
    basic_block bb = Block(c.blocks[i]);
    if (bb == nullptr) return "a block is gone";
    if (EDGE_COUNT(bb->succs) != c.copy_out[i].size())
      return "a block has other successors";
    for (const auto& [e, n] : c.copy_out[i]) {
      basic_block dest = Block(fn.edges[e].dst);
      edge ge = dest ? find_edge(bb, dest) : nullptr;
      if (ge == nullptr) return "an out-edge is gone";
      if (ge->flags & (EDGE_COMPLEX | EDGE_DFS_BACK))
        return "an out-edge is abnormal or a back edge";
      if (!Close(lp.derived[e], ge->count().to_gcov_type()))
        return "an out-edge's count differs";
    }
  }
  return nullptr;
}

// Sets the out-edge probabilities of bb from per-destination counts.
void SetProbabilities(basic_block bb,
                      const std::map<int, uint64_t>& by_dest) {
  uint64_t total = 0;
  for (const auto& [d, n] : by_dest) total += n;
  if (total == 0) return;
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->succs) {
    auto it = by_dest.find(e->dest->index);
    const uint64_t n = it == by_dest.end() ? 0 : it->second;
    e->probability = profile_probability::probability_in_gcov_type(
        gcov_type(n), gcov_type(total));
  }
}

// Copies chain c for its entry edge; each copy's count and branches from
// the paths through the entry edge, each original's from the rest.
void CopyChain(const ballarus::Function& fn, const ballarus::LoadedPaths& lp,
               const ballarus::DupChain& c) {
  edge e = find_edge(Block(fn.edges[c.entry_edge].src),
                     Block(fn.edges[c.entry_edge].dst));
  if (dump_file)
    fprintf(dump_file, "  chain entered by bb %u -> bb %u (here bb %d -> "
            "bb %d), gain %llu, %u statements:", fn.edges[c.entry_edge].src,
            fn.edges[c.entry_edge].dst, e->src->index, e->dest->index,
            (unsigned long long)c.gain, c.cost);
  for (size_t i = 0; i < c.blocks.size(); ++i) {
    basic_block bb = Block(c.blocks[i]);
    const profile_count before = bb->count;
    basic_block copy = duplicate_block(bb, e, e->src);
    flush_pending_stmts(e);
    add_phi_args_after_copy(&copy, 1, NULL);
    copy->count = profile_count::from_gcov_type(gcov_type(c.copy_count[i]));
    bb->count = before - copy->count;
    std::map<int, uint64_t> in_copy, in_rest;
    for (const auto& [me, n] : c.copy_out[i]) {
      const int dest = Block(fn.edges[me].dst)->index;
      in_copy[dest] = n;
      in_rest[dest] = lp.derived[me] > n ? lp.derived[me] - n : 0;
    }
    SetProbabilities(copy, in_copy);
    SetProbabilities(bb, in_rest);
    if (dump_file)
      fprintf(dump_file, " bb %u as bb %d (count %llu)", c.blocks[i],
              copy->index, (unsigned long long)c.copy_count[i]);
    if (i + 1 < c.blocks.size()) e = find_edge(copy, Block(c.blocks[i + 1]));
  }
  if (dump_file) fputs("\n", dump_file);
}

// Plans and copies cfun's chains; true if the CFG changed.
bool DuplicateFunction(const char* name) {
  const PathProfileIndex::Entry* entry = FindFunction(name);
  if (entry == nullptr) return false;
  const ballarus::Function& fn = entry->tu->tu.functions[entry->function];
  const ballarus::LoadedPaths& lp = *entry->tu->copies[entry->function].paths;
  MapBlocks(fn, lp);
  ballarus::PathDupInput in;
  in.fn = &fn;
  in.paths = &lp;
  ballarus::PathDupStats st;
  std::vector<ballarus::DupChain> chains =
      ballarus::PlanPathDuplication(in, Limits(fn.blocks.size()), &st);
  if (dump_file)
    fprintf(dump_file, "ballarus-pathdup: function %s: %zu paths, %llu "
            "branch executions, %zu entries into joins, gain best %llu, "
            "all %llu, needed %llu; %zu chains planned\n",
            name, lp.counts.size(), (unsigned long long)st.branch,
            st.entries, (unsigned long long)st.best_gain,
            (unsigned long long)st.sum_gain, (unsigned long long)st.min_gain,
            chains.size());
  size_t copied = 0;
  initialize_original_copy_tables();  // duplicate_block's loop bookkeeping
  for (const ballarus::DupChain& c : chains) {
    if (const char* why = ChainMismatch(fn, lp, c)) {
      if (dump_file)
        fprintf(dump_file, "  chain entered by bb %u -> bb %u left alone: "
                "%s\n", fn.edges[c.entry_edge].src,
                fn.edges[c.entry_edge].dst, why);
      continue;
    }
    CopyChain(fn, lp, c);
    ++copied;
  }
  free_original_copy_tables();
  return copied > 0;
}

unsigned int ExecutePathDup() {
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    if (!gimple_has_body_p(node->decl) || node->thunk) continue;
    function* f = DECL_STRUCT_FUNCTION(node->decl);
    if (f == nullptr || f->cfg == nullptr) continue;
    push_cfun(f);
    if (profile_status_for_fn(cfun) == PROFILE_READ) {
      mark_dfs_back_edges();
      if (DuplicateFunction(
              IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(node->decl)))) {
        free_dominance_info(CDI_DOMINATORS);
        free_dominance_info(CDI_POST_DOMINATORS);
        if (current_loops) loops_state_set(LOOPS_NEED_FIXUP);
        update_ssa(TODO_update_ssa);
        cleanup_tree_cfg();
        // The copies' calls need their call-graph edges (the IPA passes
        // walk them), counted from the blocks' new counts.
        cgraph_edge::rebuild_edges();
      }
    }
    pop_cfun();
  }
  return 0;
}

const pass_data kPathDupPassData = {
    SIMPLE_IPA_PASS,     // type
    "ballarus-pathdup",  // name
    OPTGROUP_NONE,       // optinfo_flags
    TV_NONE,             // tv_id
    0,                   // properties_required
    0,                   // properties_provided
    0,                   // properties_destroyed
    0,                   // todo_flags_start
    0,                   // todo_flags_finish
};

class path_dup_pass : public simple_ipa_opt_pass {
 public:
  explicit path_dup_pass(gcc::context* ctxt)
      : simple_ipa_opt_pass(kPathDupPassData, ctxt) {}
  bool gate(function*) override {
    return !seen_error() && !in_lto_p && flag_branch_probabilities &&
           g_index != nullptr;
  }
  unsigned int execute(function*) override { return ExecutePathDup(); }
};

}  // namespace

bool LoadPathProfile(const std::string& file, std::string* error) {
  auto index = std::make_unique<PathProfileIndex>();
  std::string err;
  if (!ballarus::ReadProfile(file, &index->records, &err)) {
    *error = file + ": " + err;
    return false;
  }
  for (const ballarus::LoadedTu& lt : index->records.tus)
    for (size_t fi = 0; fi < lt.tu.functions.size(); ++fi) {
      const ballarus::FunctionCopy& c = lt.copies[fi];
      if (c.paths && !c.paths->counts.empty())
        index->by_name[lt.tu.functions[fi].name].push_back({&lt, fi});
    }
  g_index = index.release();
  return true;
}

simple_ipa_opt_pass* make_path_dup_pass(gcc::context* ctxt) {
  return new path_dup_pass(ctxt);
}

}  // namespace ballarus::plugin
