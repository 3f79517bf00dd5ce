// inline_sizes.cc — the summaries GCC's inliner reads, computed again with
// the instrumentation hidden (inline_sizes.h).
//
// The instrumentation of a function is every statement that reads, writes
// or takes the address of one of ballarus' variables (`__ballarus_*`: the
// counters, the thread pointer, the TLS array, ...) or uses a value such a
// statement computed, and every pure computation whose value only the
// instrumentation uses (loop registers: a local set to 0, incremented in
// the loop, added to a counter at the exit).  Calls and branches stay
// visible: a call's size lives on its call-graph edge, and a branch decides
// predicates.  Hiding unlinks those statements from their blocks' sequences,
// nothing else: the statements, their operands and SSA names stay as they
// are, so the summary's walks of use-def chains still find them, and
// putting each block's sequence back restores the function exactly.

#include <cstring>
#include <vector>

#include "plugin/gcc_compat.h"
#include "plugin/inline_sizes.h"
#include "plugin/options.h"

#include "alloc-pool.h"
#include "symbol-summary.h"
#include "tree-inline.h"
#include "ipa-prop.h"
#include "ipa-fnsummary.h"

namespace ballarus::plugin {
namespace {

// Whether decl is one of ballarus' own: its variables and runtime
// functions are all named `__ballarus_*`.
bool HasBallarusName(const_tree decl) {
  static const char kPrefix[] = "__ballarus_";
  return DECL_NAME(decl) != NULL_TREE &&
         strncmp(IDENTIFIER_POINTER(DECL_NAME(decl)), kPrefix,
                 sizeof kPrefix - 1) == 0;
}

bool IsBallarusVar(const_tree t) { return VAR_P(t) && HasBallarusName(t); }

tree FindBallarusVar(tree* tp, int* walk_subtrees, void*) {
  if (IsBallarusVar(*tp)) return *tp;
  if (TYPE_P(*tp)) *walk_subtrees = 0;
  return NULL_TREE;
}

// The instrumentation of the current function: statements and the SSA
// names whose values only it computes.
class Instrumentation {
 public:
  explicit Instrumentation(function* fn)
      : fn_(fn), value_(num_ssa_names, false) {}

  // Marks the statements that touch ballarus' variables and, to a fixed
  // point, those using their values; then the pure statements whose values
  // only marked statements use.  Returns whether any is marked.
  bool Find() {
    SeedAndForward();
    if (marked_.is_empty()) return false;
    AddPureFeeders();
    return true;
  }

  bool Hidden(gimple* s) { return marked_.contains(s); }

 private:
  // Whether s is a statement that may be hidden at all.
  static bool Hideable(gimple* s) {
    return !is_gimple_debug(s) && !is_gimple_call(s) &&
           gimple_code(s) != GIMPLE_COND && gimple_code(s) != GIMPLE_SWITCH &&
           gimple_code(s) != GIMPLE_LABEL && gimple_code(s) != GIMPLE_RETURN &&
           gimple_code(s) != GIMPLE_GOTO && gimple_code(s) != GIMPLE_RESX &&
           gimple_code(s) != GIMPLE_EH_DISPATCH;
  }

  bool UsesValue(gimple* s) const {
    ssa_op_iter it;
    tree use;
    FOR_EACH_SSA_TREE_OPERAND(use, s, it, SSA_OP_USE)
      if (value_[SSA_NAME_VERSION(use)]) return true;
    return false;
  }

  // A PHI of the instrumentation's values: an argument is one, or the
  // address of a ballarus variable (a path register's constant start).
  bool PhiOfValues(gphi* phi) const {
    if (UsesValue(phi)) return true;
    for (unsigned i = 0; i < gimple_phi_num_args(phi); ++i) {
      tree arg = gimple_phi_arg_def(phi, i);
      if (TREE_CODE(arg) == ADDR_EXPR &&
          walk_tree(&arg, FindBallarusVar, NULL, NULL))
        return true;
    }
    return false;
  }

  static bool RefersToBallarus(gimple* s) {
    for (unsigned i = 0; i < gimple_num_ops(s); ++i)
      if (gimple_op(s, i) != NULL_TREE &&
          walk_tree(gimple_op_ptr(s, i), FindBallarusVar, NULL, NULL))
        return true;
    return false;
  }

  void MarkDefs(gimple* s, bool* changed) {
    ssa_op_iter it;
    tree def;
    FOR_EACH_SSA_TREE_OPERAND(def, s, it, SSA_OP_DEF)
      if (!value_[SSA_NAME_VERSION(def)]) {
        value_[SSA_NAME_VERSION(def)] = true;
        *changed = true;
      }
  }

  // A call of the runtime (`__ballarus_*`) stays, but its result is the
  // instrumentation's.
  static bool RuntimeCall(gimple* s) {
    tree fndecl = is_gimple_call(s) ? gimple_call_fndecl(s) : NULL_TREE;
    return fndecl != NULL_TREE && HasBallarusName(fndecl);
  }

  // Sweeps until no new value appears (a statement marked without
  // defining one changes nothing the next sweep reads).
  void SeedAndForward() {
    for (bool changed = true; changed;) {
      changed = false;
      basic_block bb;
      FOR_EACH_BB_FN(bb, fn_) {
        for (gphi_iterator pi = gsi_start_phis(bb); !gsi_end_p(pi);
             gsi_next(&pi))
          if (!virtual_operand_p(gimple_phi_result(pi.phi())) &&
              PhiOfValues(pi.phi()))
            MarkDefs(pi.phi(), &changed);
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
             gsi_next(&gsi)) {
          gimple* s = gsi_stmt(gsi);
          if (RuntimeCall(s)) {
            MarkDefs(s, &changed);
            continue;
          }
          if (!Hideable(s) || marked_.contains(s)) continue;
          if (RefersToBallarus(s) || UsesValue(s)) {
            marked_.add(s);
            MarkDefs(s, &changed);
          }
        }
      }
    }
  }

  // Pure statements (no memory, no throw) whose defined value is used only
  // by marked statements and by other such statements, to a fixed point
  // from all of them: a loop register's increments feed only its PHI and
  // the flush.
  void AddPureFeeders() {
    hash_set<gimple*> cand;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fn_) {
      for (gphi_iterator pi = gsi_start_phis(bb); !gsi_end_p(pi);
           gsi_next(&pi))
        if (!virtual_operand_p(gimple_phi_result(pi.phi())))
          cand.add(pi.phi());
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
           gsi_next(&gsi)) {
        gimple* s = gsi_stmt(gsi);
        if (is_gimple_assign(s) && !marked_.contains(s) && Hideable(s) &&
            TREE_CODE(gimple_assign_lhs(s)) == SSA_NAME &&
            gimple_vuse(s) == NULL_TREE && !stmt_could_throw_p(fn_, s))
          cand.add(s);
      }
    }
    std::vector<gimple*> out;
    do {
      out.clear();
      for (gimple* s : cand) {
        tree lhs = gimple_get_lhs(s);
        imm_use_iterator ui;
        use_operand_p use;
        FOR_EACH_IMM_USE_FAST(use, ui, lhs) {
          gimple* u = USE_STMT(use);
          if (!is_gimple_debug(u) && !marked_.contains(u) &&
              !cand.contains(u)) {
            out.push_back(s);
            break;
          }
        }
      }
      for (gimple* s : out) cand.remove(s);
    } while (!out.empty());
    for (gimple* s : cand)
      if (gimple_code(s) != GIMPLE_PHI) marked_.add(s);
  }

  function* fn_;
  std::vector<bool> value_;
  hash_set<gimple*> marked_;
};

// Makes stmts the sequence of bb, in order (the statements themselves are
// not touched: their block, operands and uses stay).
void Relink(basic_block bb, const std::vector<gimple*>& stmts) {
  const size_t n = stmts.size();
  for (size_t i = 0; i < n; ++i) {
    stmts[i]->next = i + 1 < n ? stmts[i + 1] : nullptr;
    stmts[i]->prev = stmts[i == 0 ? n - 1 : i - 1];
  }
  set_bb_seq(bb, n == 0 ? nullptr : stmts[0]);
}

std::vector<gimple*> Sequence(basic_block bb) {
  std::vector<gimple*> out;
  for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
       gsi_next(&gsi))
    out.push_back(gsi_stmt(gsi));
  return out;
}

struct HiddenBlock {
  basic_block bb;
  std::vector<gimple*> all;
  std::vector<gimple*> kept;
};

// Unlinks the instrumentation from the current function's blocks; returns
// what is needed to put it back.
std::vector<HiddenBlock> Hide(function* fn, Instrumentation& ins) {
  std::vector<HiddenBlock> hidden;
  basic_block bb;
  FOR_EACH_BB_FN(bb, fn) {
    HiddenBlock h{bb, Sequence(bb), {}};
    for (gimple* s : h.all)
      if (!ins.Hidden(s)) h.kept.push_back(s);
    if (h.kept.size() == h.all.size()) continue;
    Relink(bb, h.kept);
    hidden.push_back(std::move(h));
  }
  return hidden;
}

// Puts the instrumentation back.  The summary's analysis leaves the blocks
// as it found them (the loops are in normal form since GCC's own summary);
// a block that changed anyway is a fault here, not the user's.
void Restore(const std::vector<HiddenBlock>& hidden) {
  for (const HiddenBlock& h : hidden)
    if (Sequence(h.bb) != h.kept)
      internal_error("ballarus: block %d changed while its counters were "
                     "hidden from the inlining summary",
                     h.bb->index);
  for (const HiddenBlock& h : hidden) Relink(h.bb, h.all);
}

// Computes node's summary again without its instrumentation.
void Resummarise(cgraph_node* node) {
  function* fn = DECL_STRUCT_FUNCTION(node->decl);
  push_cfun(fn);
  const bool ready = !need_ssa_update_p(fn) && ipa_fn_summaries->get(node);
  Instrumentation ins(fn);
  if (!ready || !ins.Find()) {
    pop_cfun();
    return;
  }
  const int blocks = n_basic_blocks_for_fn(fn);
  std::vector<HiddenBlock> hidden = Hide(fn, ins);
  compute_fn_summary(node, false);
  if (n_basic_blocks_for_fn(fn) != blocks)
    internal_error("ballarus: the inlining summary added blocks to %qD",
                   node->decl);
  Restore(hidden);
  pop_cfun();
}

void ResummariseAll() {
  if (ipa_fn_summaries == NULL) return;
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    // The functions ipa_fn_summary_generate analyses.
    if (node->alias || node->thunk || node->inlined_to ||
        !gimple_has_body_p(node->decl) ||
        !(flag_generate_lto || flag_generate_offload || flag_wpa ||
          opt_for_fn(node->decl, optimize)))
      continue;
    Resummarise(node);
  }
}

const pass_data kData = {
    IPA_PASS,          // type
    "ballarus_sizes",  // name
    OPTGROUP_NONE,     // optinfo_flags
    TV_NONE,           // tv_id
    0,                 // properties_required
    0,                 // properties_provided
    0,                 // properties_destroyed
    0,                 // todo_flags_start
    0,                 // todo_flags_finish
};

class InlineSizesPass : public ipa_opt_pass_d {
 public:
  explicit InlineSizesPass(gcc::context* ctxt)
      : ipa_opt_pass_d(kData, ctxt, ResummariseAll, NULL, NULL, NULL, NULL,
                       NULL, 0, NULL, NULL) {}
  bool gate(function*) override {
    return !seen_error() && !in_lto_p && g_options.inline_sizes;
  }
  unsigned int execute(function*) override { return 0; }
};

}  // namespace

ipa_opt_pass_d* MakeInlineSizesPass(gcc::context* ctxt) {
  return new InlineSizesPass(ctxt);
}

}  // namespace ballarus::plugin
