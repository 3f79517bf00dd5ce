// entry_calls.cc — edge mode's interprocedural counter elimination: the
// functions whose entry count is the sum of their callers' call blocks
// (core/entry_calls.h says why that sum is exact), chosen once every
// function of the TU is analysed and its CFG prepared as gcov's, before any
// edge counter is placed (pass.cc).
//
// The call graph (an IPA pass sees the whole TU's cgraph) says who may call
// a function; the bodies say where: every direct call statement, in the
// block that the model records (the CFGs are prepared, blocks compacted,
// nothing split since).  A function qualifies only when the two agree —
// each call-graph caller edge a direct call, not inlined, from another
// instrumented function, and as many call statements in the bodies — so a
// stale call-graph edge or a call statement the graph does not list turns
// the function down instead of miscounting it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "core/entry_calls.h"
#include "core/metadata.h"
#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/entry_calls.h"

namespace ballarus::plugin {

namespace {

using Call = ballarus::PathInfo::Call;

// Every direct call statement in the bodies of `nodes`: callee decl ->
// (calling function's index, block).
std::map<tree, std::vector<Call>> CallsInBodies(
    const std::vector<cgraph_node*>& nodes) {
  std::map<tree, std::vector<Call>> calls;
  for (size_t i = 0; i < nodes.size(); ++i) {
    function* fn = DECL_STRUCT_FUNCTION(nodes[i]->decl);
    basic_block bb;
    FOR_EACH_BB_FN(bb, fn) {
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
           gsi_next(&gsi)) {
        gimple* stmt = gsi_stmt(gsi);
        if (!is_gimple_call(stmt)) continue;
        if (tree callee = gimple_call_fndecl(stmt))
          calls[callee].push_back(
              {static_cast<uint32_t>(i), static_cast<uint32_t>(bb->index)});
      }
    }
  }
  return calls;
}

// Why function i's entry count cannot come from its calls, or nullptr when
// it can; *callers then lists its callers' indices.
const char* RefusalReason(size_t i, const std::vector<cgraph_node*>& nodes,
                          const std::vector<ballarus::Function>& functions,
                          const std::map<cgraph_node*, size_t>& index_of,
                          const std::vector<Call>& in_bodies,
                          std::vector<uint32_t>* callers) {
  cgraph_node* node = nodes[i];
  if (!OnlyCalledDirectlyHere(node)) return "called from elsewhere too";
  if (node->callers == NULL) return "no calls";
  if (DECL_IS_RETURNS_TWICE(node->decl)) return "returns twice";
  if (ballarus::RealEntryEdge(functions[i]) < 0)
    return "not one real ENTRY edge";
  size_t n_edges = 0;
  for (cgraph_edge* e = node->callers; e != NULL; e = e->next_caller) {
    auto it = index_of.find(e->caller);
    if (it == index_of.end()) return "a call from an uninstrumented function";
    if (it->second == i) return "recursive";
    if (!e->inline_failed || e->caller->inlined_to != NULL ||
        e->call_stmt == NULL || gimple_bb(e->call_stmt) == NULL)
      return "a call the call graph does not place";
    callers->push_back(static_cast<uint32_t>(it->second));
    ++n_edges;
  }
  if (in_bodies.size() != n_edges)
    return "the bodies and the call graph disagree on its calls";
  for (const Call& c : in_bodies) {
    if (std::find(callers->begin(), callers->end(), c.function) ==
        callers->end())
      return "the bodies and the call graph disagree on its callers";
    if (c.block < 2 || c.block >= functions[c.function].blocks.size())
      return "a call outside its caller's recorded blocks";
    if (ballarus::ResumedAfterCall(functions[c.function], c.block))
      return "a call in a block that re-entries after fork or a reset resume";
  }
  return nullptr;
}

// Candidates whose callers are all settled are accepted, in rounds; when a
// cycle of candidates blocks every one left, its first one is refused.
void AcceptWithoutCycles(const std::vector<cgraph_node*>& nodes,
                         const std::vector<std::vector<uint32_t>>& callers,
                         std::vector<bool>* candidate) {
  const size_t n = candidate->size();
  std::vector<bool> accepted(n, false);
  for (bool pending = true; pending;) {
    pending = false;
    bool progress = false;
    for (size_t i = 0; i < n; ++i) {
      if (!(*candidate)[i] || accepted[i]) continue;
      bool settled = true;
      for (uint32_t g : callers[i])
        settled = settled && (!(*candidate)[g] || accepted[g]);
      if (!settled) {
        pending = true;
        continue;
      }
      accepted[i] = true;
      progress = true;
    }
    if (pending && !progress) {
      for (size_t i = 0; i < n; ++i)
        if ((*candidate)[i] && !accepted[i]) {
          (*candidate)[i] = false;
          if (dump_file)
            fprintf(dump_file,
                    "ballarus: %s: entry counted: calls in a cycle\n",
                    nodes[i]->dump_name());
          break;
        }
    }
  }
}

}  // namespace

bool OnlyCalledDirectlyHere(cgraph_node* node) {
  tree d = node->decl;
  return !TREE_PUBLIC(d) && !DECL_EXTERNAL(d) && !node->externally_visible &&
         !node->address_taken && !node->has_aliases_p() && !node->thunk &&
         !node->alias && !node->ifunc_resolver &&
         !node->used_from_other_partition && !node->in_other_partition &&
         !DECL_STATIC_CONSTRUCTOR(d) && !DECL_STATIC_DESTRUCTOR(d) &&
         !DECL_VIRTUAL_P(d) &&
         lookup_attribute("used", DECL_ATTRIBUTES(d)) == NULL_TREE &&
         node->get_availability() >= AVAIL_AVAILABLE;
}

std::vector<std::optional<ballarus::EntryCalls>> ChooseEntryCalls(
    const std::vector<cgraph_node*>& nodes,
    const std::vector<ballarus::Function>& functions) {
  const size_t n = nodes.size();
  std::map<cgraph_node*, size_t> index_of;
  for (size_t i = 0; i < n; ++i) index_of[nodes[i]] = i;
  const std::map<tree, std::vector<Call>> bodies = CallsInBodies(nodes);
  std::vector<std::vector<uint32_t>> callers(n);
  std::vector<bool> candidate(n, false);
  for (size_t i = 0; i < n; ++i) {
    const auto it = bodies.find(nodes[i]->decl);
    const char* why =
        RefusalReason(i, nodes, functions, index_of,
                      it == bodies.end() ? std::vector<Call>() : it->second,
                      &callers[i]);
    candidate[i] = why == nullptr;
    if (why && dump_file)
      fprintf(dump_file, "ballarus: %s: entry counted: %s\n",
              nodes[i]->dump_name(), why);
  }
  AcceptWithoutCycles(nodes, callers, &candidate);
  std::vector<std::optional<ballarus::EntryCalls>> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (!candidate[i]) continue;
    ballarus::EntryCalls ec;
    ec.edge = static_cast<uint32_t>(ballarus::RealEntryEdge(functions[i]));
    ec.calls = bodies.at(nodes[i]->decl);
    std::sort(ec.calls.begin(), ec.calls.end());
    if (dump_file)
      fprintf(dump_file,
              "ballarus: %s: entry count from its %zu calls: no counter\n",
              nodes[i]->dump_name(), ec.calls.size());
    out[i] = std::move(ec);
  }
  return out;
}

}  // namespace ballarus::plugin
