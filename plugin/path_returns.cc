// path_returns.cc — the functions of a translation unit that always return
// to their caller, so that path profiling's early termination can skip the
// pre-count before calls to them.
//
// gcov's CFG gives every call that may not return a fake edge to EXIT
// (cfg_prep.cc; gcc's need_fake_edge_p: every call but const/pure ones and
// nothrow builtins), and path mode counts the path ending there before the
// call (path_plan.cc), so that exit(), longjmp or an exception inside the
// call leaves the truncated path counted.  A call to a function of this
// translation unit whose body cannot leave its own frame other than by
// returning -- it calls only such functions, nothrow builtins and const or
// pure functions, calls nothing that does not return (exit, abort,
// longjmp, __cxa_throw), throws nothing out of itself, has no volatile asm
// -- never ends its caller's path early: the fake edge's count is 0 in the
// edge profile too, and the pre-count would only ever be settled away.
// Hot code calls many such helpers (GCC's inliner inlines them only later,
// after this pass), each of which costs a counter update per call.
//
// The set is the greatest fixed point: start from every function with a
// body, drop those with a statement that may leave, until nothing changes
// (recursion is fine: leaving has to start at some primitive).  Only
// direct calls to a function that cannot be interposed count (availability
// AVAIL_AVAILABLE or better: not a weak or, with -fPIC, a global
// definition another module could replace); indirect calls, calls to other
// translation units and calls through aliases of interposable symbols are
// assumed to leave.
//
// Limit (README "Limits"): a signal handler that calls exit() or longjmps
// out of one of these functions cuts its callers' paths short where no
// pre-count was made; those truncated paths are lost (the edge profile
// cannot represent the interrupted activation itself either).

#include <cstdio>
#include <set>
#include <vector>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/path_returns.h"

namespace ballarus::plugin {

namespace {

// Whether `stmt` of function `f` may leave f's frame other than by its
// return, given the TU functions known to always return.
bool MayLeave(function* f, gimple* stmt, const std::set<tree>& returning,
              const ReturningCallees& known) {
  if (gasm* asm_stmt = dyn_cast<gasm*>(stmt))
    return gimple_asm_volatile_p(asm_stmt) || gimple_asm_input_p(asm_stmt);
  if (!is_gimple_call(stmt)) return stmt_can_throw_external(f, stmt);
  if (SurelyReturns(stmt)) return false;  // gcov gives it no fake edge either
  return gimple_call_internal_p(stmt) ||
         (gimple_call_flags(stmt) & (ECF_NORETURN | ECF_RETURNS_TWICE)) ||
         !known.AlwaysReturns(stmt);
}

}  // namespace

bool SurelyReturns(const gimple* call) {
  const int flags = gimple_call_flags(call);
  if (flags & (ECF_NORETURN | ECF_RETURNS_TWICE)) return false;
  if ((flags & (ECF_CONST | ECF_PURE)) &&
      !(flags & ECF_LOOPING_CONST_OR_PURE))
    return true;
  if (gimple_call_internal_p(call)) return false;
  tree fndecl = gimple_call_fndecl(call);
  return fndecl != NULL_TREE && fndecl_built_in_p(fndecl) &&
         (flags & ECF_NOTHROW) && !fndecl_built_in_p(fndecl, BUILT_IN_FORK);
}

void ReturningCallees::Compute() {
  returning_.clear();
  std::vector<cgraph_node*> nodes;
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    if (node->alias || node->thunk || !gimple_has_body_p(node->decl) ||
        DECL_STRUCT_FUNCTION(node->decl) == NULL ||
        DECL_STRUCT_FUNCTION(node->decl)->cfg == NULL)
      continue;
    nodes.push_back(node);
    returning_.insert(node->decl);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (cgraph_node* n : nodes) {
      if (!returning_.count(n->decl)) continue;
      function* f = DECL_STRUCT_FUNCTION(n->decl);
      bool leaves = false;
      basic_block bb;
      FOR_EACH_BB_FN(bb, f) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb);
             !gsi_end_p(gsi) && !leaves; gsi_next(&gsi))
          leaves = MayLeave(f, gsi_stmt(gsi), returning_, *this);
        if (leaves) break;
      }
      if (leaves) {
        returning_.erase(n->decl);
        changed = true;
      }
    }
  }
}

bool ReturningCallees::AlwaysReturns(const gimple* call) const {
  tree fndecl = gimple_call_fndecl(call);
  if (fndecl == NULL_TREE) return false;  // indirect
  cgraph_node* cn = cgraph_node::get(fndecl);
  if (cn == NULL) return false;
  availability avail;
  cgraph_node* target = cn->ultimate_alias_target(&avail);
  if (target == NULL || avail < AVAIL_AVAILABLE) return false;
  return returning_.count(target->decl) != 0;
}

}  // namespace ballarus::plugin
