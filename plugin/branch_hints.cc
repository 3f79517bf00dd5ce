// branch_hints.cc — see branch_hints.h.  The heuristics' facts as Ball &
// Larus define them (PLDI 1993 §3), read from GIMPLE:
//   call     a call statement, not an internal function nor
//            __builtin_expect (the hint of a branch, not a call);
//   store    a statement that writes memory (gimple_store_p);
//   pointer  a condition comparing pointers with == or !=: unequal likelier;
//   opcode   an integer condition < 0 or <= 0 (fails), > 0 or >= 0
//            (holds), == constant (fails), != constant (holds); a
//            floating-point == (fails) or != (holds);
//   guard    an SSA name the condition compares, used by a successor's
//            statements or by its PHI argument on the edge (in SSA form a
//            use in the successor always comes before any definition).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "estimator/wu_larus.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/branch_hints.h"

namespace ballarus::plugin {

namespace {

bool IsCall(const gimple* stmt) {
  if (!is_gimple_call(stmt) || gimple_call_internal_p(stmt)) return false;
  return !gimple_call_builtin_p(stmt, BUILT_IN_EXPECT) &&
         !gimple_call_builtin_p(stmt, BUILT_IN_EXPECT_WITH_PROBABILITY);
}

// +1 if the condition's true edge is the likelier by its kind of
// comparison, -1 if its false edge, 0 if the kind tells nothing.
int8_t Likelier(tree_code code, bool applies_eq, bool applies_order) {
  switch (code) {
    case EQ_EXPR: return applies_eq ? -1 : 0;
    case NE_EXPR: return applies_eq ? +1 : 0;
    case LT_EXPR:
    case LE_EXPR: return applies_order ? -1 : 0;
    case GT_EXPR:
    case GE_EXPR: return applies_order ? +1 : 0;
    default: return 0;
  }
}

void ConditionHints(const gcond* cond, ballarus::BlockHint* h) {
  const tree lhs = gimple_cond_lhs(cond), rhs = gimple_cond_rhs(cond);
  const tree_code code = gimple_cond_code(cond);
  const tree type = TREE_TYPE(lhs);
  if (POINTER_TYPE_P(type)) {
    h->pointer = Likelier(code, true, false);
  } else if (FLOAT_TYPE_P(type)) {
    h->opcode = Likelier(code, true, false);
  } else if (INTEGRAL_TYPE_P(type)) {
    h->opcode = Likelier(code, TREE_CODE(rhs) == INTEGER_CST,
                         integer_zerop(rhs));
  }
}

// Whether block `dest`, entered by `e`, uses `name`.
bool Uses(edge e, tree name) {
  for (gphi_iterator pi = gsi_start_phis(e->dest); !gsi_end_p(pi);
       gsi_next(&pi))
    if (PHI_ARG_DEF_FROM_EDGE(pi.phi(), e) == name) return true;
  for (gimple_stmt_iterator gsi = gsi_start_bb(e->dest); !gsi_end_p(gsi);
       gsi_next(&gsi)) {
    ssa_op_iter it;
    tree op;
    FOR_EACH_SSA_TREE_OPERAND(op, gsi_stmt(gsi), it, SSA_OP_USE)
    if (op == name) return true;
  }
  return false;
}

bool GuardUse(edge e) {
  const gimple* last = last_stmt(e->src);
  if (last == nullptr || gimple_code(last) != GIMPLE_COND) return false;
  const gcond* cond = as_a<const gcond*>(last);
  for (tree op : {gimple_cond_lhs(cond), gimple_cond_rhs(cond)})
    if (TREE_CODE(op) == SSA_NAME && !virtual_operand_p(op) && Uses(e, op))
      return true;
  return false;
}

}  // namespace

ballarus::BranchHints ReadBranchHints(size_t n_blocks,
                                      const std::vector<edge>& gcc_edges) {
  ballarus::BranchHints hints;
  hints.blocks.resize(n_blocks);
  for (size_t i = 0; i < n_blocks && int(i) < last_basic_block_for_fn(cfun);
       ++i) {
    basic_block bb = BASIC_BLOCK_FOR_FN(cfun, i);
    if (bb == nullptr || i < NUM_FIXED_BLOCKS) continue;
    ballarus::BlockHint& h = hints.blocks[i];
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi)) {
      const gimple* stmt = gsi_stmt(gsi);
      h.call |= IsCall(stmt);
      h.store |= !is_gimple_call(stmt) && gimple_store_p(stmt);
      if (gimple_code(stmt) == GIMPLE_COND)
        ConditionHints(as_a<const gcond*>(stmt), &h);
    }
  }
  hints.guard_use.resize(gcc_edges.size());
  for (size_t i = 0; i < gcc_edges.size(); ++i)
    hints.guard_use[i] = gcc_edges[i] != nullptr && GuardUse(gcc_edges[i]);
  return hints;
}

}  // namespace ballarus::plugin
