// loop_registers.cc — loop registers (loop_registers.h): which loops of
// cfun take them, and the locals, adds and flushes that make them.
//
// The loops are natural loops found here from the dominators (GCC's loop
// tree may await a fixup, which could change the CFG the plan refers to).
// A loop takes registers when none of its blocks may leave an iteration
// other than by its edges, an exit is decided by an induction variable
// (then GCC's estimate of its iterations can be trusted) and that estimate
// is high enough (core/loop_register_policy.h).  Each block belongs to the
// innermost such loop; each loop's exits are listed before any edge is
// split (an exit edge stays the edge out of the loop's block when its
// target side is split off).
//
// A counter updated in such a loop, in memory and with a loop register
// (each `+=` is a load, an add and a store):
//
//   <bb 2>:                          <bb 2>:
//                                    BLRS_loopc.0 = 0;
//   <bb 3>:  (loop header)           <bb 3>:
//   __ballarus_counters[7] += 1      BLRS_loopc.0 += 1;
//   if (i_1 < n_2) goto <bb 3>;      if (i_1 < n_2) goto <bb 3>;
//   else goto <bb 4>;                else goto <bb 5>;
//                                    <bb 5>:  (the exit)
//                                    __ballarus_counters[7] += BLRS_loopc.0;
//                                    BLRS_loopc.0 = 0;
//   <bb 4>:                          <bb 4>:

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/loop_register_policy.h"
#include "plugin/options.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/loop_registers.h"
#include "plugin/path_returns.h"
#include "plugin/thread_counters.h"

namespace ballarus::plugin {

namespace {

// The loops of cfun that take registers, and the local of each (loop,
// counter) pair used so far.
struct LoopRegisters {
  function* fn = nullptr;
  RegisterLoops loops;
  std::map<std::pair<int, uint64_t>, tree> local;  // per (loop, counter)
  struct Pair {
    int loop;
    RegisterPair locals;
    std::function<void(gimple_seq*, tree, tree)> flush;
  };
  std::vector<Pair> pairs;  // NewRegisterPair
} g_registers;

// Edges by which an iteration may be left in its middle.
bool BadEdge(edge e) {
  return (e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL | EDGE_EH |
                      EDGE_FAKE)) != 0;
}

// Whether `call` surely returns to its caller and touches no counter: an
// internal call, or one that SurelyReturns (path_returns.h).  (Calls of the
// TU's functions that always return would do too; but the loops that call
// them run a few times per entry, and their flushes cost more than the
// locals save: docs/performance.md, flushes of loops that call.)
bool ReturnsQuietly(const gimple* call) {
  return gimple_call_internal_p(call) || SurelyReturns(call);
}

// Whether bb may leave an iteration other than by its edges: a call but a
// quiet one (ReturnsQuietly), an asm, a statement that may throw.
bool MayLeave(basic_block bb) {
  for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
       gsi_next(&gsi)) {
    gimple* stmt = gsi_stmt(gsi);
    if (is_gimple_debug(stmt)) continue;
    if ((is_gimple_call(stmt) && !ReturnsQuietly(stmt)) ||
        gimple_code(stmt) == GIMPLE_ASM || stmt_could_throw_p(cfun, stmt))
      return true;
  }
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, bb->preds) if (BadEdge(e)) return true;
  FOR_EACH_EDGE(e, ei, bb->succs) if (BadEdge(e)) return true;
  return false;
}

// Whether v is a constant or an SSA name defined outside the loop.
bool IsLoopInvariant(tree v, const std::set<int>& blocks) {
  if (TREE_CODE(v) == INTEGER_CST) return true;
  if (TREE_CODE(v) != SSA_NAME) return false;
  if (SSA_NAME_IS_DEFAULT_DEF(v)) return true;
  basic_block bb = gimple_bb(SSA_NAME_DEF_STMT(v));
  return bb != NULL && !blocks.count(bb->index);
}

// How value a (a PHI argument from inside the loop) relates to the
// header PHI's result r: 2 when it is r plus or minus an invariant (through
// conversions), 1 when it is r itself, 0 otherwise; through PHIs of blocks
// inside the loop (a merged latch) the least of their arguments' answers.
int StepsFrom(tree a, tree r, const std::set<int>& blocks, int depth) {
  auto strip = [](tree v) {
    for (int k = 0; k < 2 && TREE_CODE(v) == SSA_NAME; ++k) {
      gimple* d = SSA_NAME_DEF_STMT(v);
      if (!is_gimple_assign(d) ||
          !CONVERT_EXPR_CODE_P(gimple_assign_rhs_code(d)))
        break;
      v = gimple_assign_rhs1(d);
    }
    return v;
  };
  a = strip(a);
  if (a == r) return 1;
  if (TREE_CODE(a) != SSA_NAME) return 0;
  gimple* def = SSA_NAME_DEF_STMT(a);
  if (gphi* phi = dyn_cast<gphi*>(def)) {
    if (depth >= 2 || !blocks.count(gimple_bb(phi)->index)) return 0;
    int least = 2;
    for (unsigned i = 0; i < gimple_phi_num_args(phi) && least > 0; ++i)
      least = std::min(least, StepsFrom(gimple_phi_arg_def(phi, i), r, blocks,
                                        depth + 1));
    return least;
  }
  if (!is_gimple_assign(def)) return 0;
  const tree_code code = gimple_assign_rhs_code(def);
  if ((code == PLUS_EXPR || code == MINUS_EXPR ||
       code == POINTER_PLUS_EXPR) &&
      IsLoopInvariant(gimple_assign_rhs2(def), blocks) &&
      strip(gimple_assign_rhs1(def)) == r)
    return 2;
  return 0;
}

// Whether value v (an SSA name) steps by a constant round the loop: a PHI
// of the header whose arguments from inside the loop are its own result
// plus or minus a constant (or, on some ways round, itself), or a
// conversion or constant offset of such a PHI.
bool IsInductionVariable(tree v, basic_block header,
                         const std::set<int>& blocks) {
  for (int depth = 0; depth < 3 && TREE_CODE(v) == SSA_NAME; ++depth) {
    gimple* def = SSA_NAME_DEF_STMT(v);
    if (gphi* phi = dyn_cast<gphi*>(def)) {
      if (gimple_bb(phi) != header) return false;
      bool stepped = false;
      for (unsigned i = 0; i < gimple_phi_num_args(phi); ++i) {
        if (!blocks.count(gimple_phi_arg_edge(phi, i)->src->index)) continue;
        const int how = StepsFrom(gimple_phi_arg_def(phi, i),
                                  gimple_phi_result(phi), blocks, 0);
        if (how == 0) return false;
        stepped |= how == 2;
      }
      return stepped;
    }
    if (!is_gimple_assign(def)) return false;
    const tree_code code = gimple_assign_rhs_code(def);
    if (!(CONVERT_EXPR_CODE_P(code) ||
          ((code == PLUS_EXPR || code == MINUS_EXPR ||
            code == POINTER_PLUS_EXPR) &&
           IsLoopInvariant(gimple_assign_rhs2(def), blocks))))
      return false;
    v = gimple_assign_rhs1(def);
  }
  return false;
}

// Whether one of the loop's exits is decided by an induction variable (a
// counted loop, whose iterations GCC's estimate can be trusted for: a loop
// whose exits test memory -- bzip2's bit-reader refill, `while (True) { if
// (s->bsLive >= n) break; ... }` -- is guessed to run ~9 times and runs
// once, and the flush on its exit would cost more than it saves).
bool HasCountedExit(basic_block header, const std::set<int>& blocks) {
  for (int b : blocks) {
    basic_block bb = BASIC_BLOCK_FOR_FN(cfun, b);
    gimple* last = last_stmt(bb);
    gcond* cond = last ? dyn_cast<gcond*>(last) : NULL;
    if (cond == NULL) continue;
    bool exits = false;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) exits |= !blocks.count(e->dest->index);
    if (exits && (IsInductionVariable(gimple_cond_lhs(cond), header, blocks) ||
                  IsInductionVariable(gimple_cond_rhs(cond), header, blocks)))
      return true;
  }
  return false;
}

// cfun's natural loops, one per header (all its back edges): the blocks of
// each, by header index.
std::map<int, std::set<int>> NaturalLoops() {
  const bool had_dominators = dom_info_available_p(CDI_DOMINATORS);
  if (!had_dominators) calculate_dominance_info(CDI_DOMINATORS);
  std::map<int, std::set<int>> body;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) {
      if (e->dest == EXIT_BLOCK_PTR_FOR_FN(cfun) ||
          !dominated_by_p(CDI_DOMINATORS, bb, e->dest))
        continue;
      std::set<int>& blocks = body[e->dest->index];
      blocks.insert(e->dest->index);
      std::vector<basic_block> work;
      if (blocks.insert(bb->index).second) work.push_back(bb);
      while (!work.empty()) {
        basic_block x = work.back();
        work.pop_back();
        edge p;
        edge_iterator pi;
        FOR_EACH_EDGE(p, pi, x->preds)
          if (p->src != ENTRY_BLOCK_PTR_FOR_FN(cfun) &&
              blocks.insert(p->src->index).second)
            work.push_back(p->src);
      }
    }
  }
  if (!had_dominators) free_dominance_info(CDI_DOMINATORS);
  return body;
}

// The headers of `body`, outer loops first, so that each block ends up in
// the innermost loop that takes registers (natural loops with distinct
// headers nest or are disjoint).
std::vector<int> OuterLoopsFirst(const std::map<int, std::set<int>>& body) {
  std::vector<int> headers;
  for (const auto& [h, blocks] : body) headers.push_back(h);
  std::stable_sort(headers.begin(), headers.end(), [&](int x, int y) {
    return body.at(x).size() > body.at(y).size();
  });
  return headers;
}

// What loop_register_policy.h judges of the loop of `header` with
// `blocks`; its exits go to *exits.
ballarus::LoopFacts LookAtLoop(int h, const std::set<int>& blocks,
                               std::vector<edge>* exits) {
  ballarus::LoopFacts facts;
  for (int b : blocks)
    facts.may_leave |= MayLeave(BASIC_BLOCK_FOR_FN(cfun, b));
  basic_block header = BASIC_BLOCK_FOR_FN(cfun, h);
  profile_count entries = profile_count::zero();
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, header->preds)
    if (!blocks.count(e->src->index)) entries += e->count();
  for (int b : blocks)
    FOR_EACH_EDGE(e, ei, BASIC_BLOCK_FOR_FN(cfun, b)->succs)
      if (!blocks.count(e->dest->index)) exits->push_back(e);
  facts.exits = exits->size();
  if (header->count.initialized_p() && entries.initialized_p() &&
      entries.nonzero_p())
    facts.iterations = header->count.to_gcov_type() / entries.to_gcov_type();
  facts.counted_exit = !facts.may_leave && HasCountedExit(header, blocks);
  facts.blocks = blocks.size();
  for (int b : blocks)
    for (gimple_stmt_iterator gsi =
             gsi_start_nondebug_bb(BASIC_BLOCK_FOR_FN(cfun, b));
         !gsi_end_p(gsi); gsi_next_nondebug(&gsi))
      ++facts.statements;
  return facts;
}

// The first source line of the loop's blocks (0: none), for the dump.
int FirstLine(const std::set<int>& blocks) {
  int line = 0;
  for (int b : blocks)
    for (gimple_stmt_iterator gsi = gsi_start_bb(BASIC_BLOCK_FOR_FN(cfun, b));
         line == 0 && !gsi_end_p(gsi); gsi_next(&gsi))
      if (gimple_has_location(gsi_stmt(gsi)))
        line = LOCATION_LINE(gimple_location(gsi_stmt(gsi)));
  return line;
}

// A local of the loop registers: addressable until update-address-taken
// (-O1 and up) makes it an SSA register, like the path register, so no
// PHIs are built here.
tree NewRegisterLocal(tree type) {
  tree local = create_tmp_var(type, "BLRS_loopc");
  TREE_ADDRESSABLE(local) = 1;
  return local;
}

void AppendZero(gimple_seq* seq, tree local) {
  gimple_seq_add_stmt(
      seq, gimple_build_assign(local, build_int_cst(TREE_TYPE(local), 0)));
}

// Queues on each exit of its loop `counters[index] += local; local = 0`
// for each (loop, counter) local, and its zeroing on *init.
void FlushCounterLocals(tree counters, gimple_seq* init) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  for (const auto& [key, local] : g_registers.local) {
    AppendZero(init, local);
    for (edge e : g_registers.loops.exits.at(key.first)) {
      gimple_seq seq = NULL;
      tree ref = build4(ARRAY_REF, u64, counters,
                        build_int_cst(integer_type_node, key.second),
                        NULL_TREE, NULL_TREE);
      tree v = make_temp_ssa_name(u64, NULL, "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(v, local));
      AppendCounterAdd(&seq, ref, v, /*atomic=*/false);
      AppendZero(&seq, local);
      gsi_insert_seq_on_edge(e, seq);
    }
  }
}

// Queues each pair's own flush on each exit of its loop, then its zeroing
// there; and its zeroing on *init.
void FlushRegisterPairs(gimple_seq* init) {
  for (const auto& pair : g_registers.pairs) {
    AppendZero(init, pair.locals.sum);
    AppendZero(init, pair.locals.cnt);
    for (edge e : g_registers.loops.exits.at(pair.loop)) {
      gimple_seq seq = NULL;
      tree sum = make_temp_ssa_name(TREE_TYPE(pair.locals.sum), NULL,
                                    "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(sum, pair.locals.sum));
      tree cnt = make_temp_ssa_name(TREE_TYPE(pair.locals.cnt), NULL,
                                    "BLRS_lc");
      gimple_seq_add_stmt(&seq, gimple_build_assign(cnt, pair.locals.cnt));
      pair.flush(&seq, sum, cnt);
      AppendZero(&seq, pair.locals.sum);
      AppendZero(&seq, pair.locals.cnt);
      gsi_insert_seq_on_edge(e, seq);
    }
  }
}

// Dumps, per loop whose locals were used, how many counters and pairs of
// locals it flushes on how many exits.
void DumpFlushes() {
  std::map<int, std::pair<size_t, size_t>> used;  // header -> locals, pairs
  for (const auto& entry : g_registers.local) ++used[entry.first.first].first;
  for (const auto& pair : g_registers.pairs) ++used[pair.loop].second;
  for (const auto& [h, n] : used)
    fprintf(dump_file,
            "  loop at block %d: counters in locals %zu, pairs of locals "
            "%zu, flushed on exits %zu\n",
            h, n.first, n.second, g_registers.loops.exits.at(h).size());
}

}  // namespace

bool LoopRegistersWanted(bool atomic, bool per_thread) {
  return optimize > 0 && !atomic && (!per_thread || ThreadCountsThroughGs()) &&
         Options::IsOn(g_options.loop_registers, true);
}

RegisterLoops FindRegisterLoops(bool dump) {
  RegisterLoops out;
  const std::map<int, std::set<int>> body = NaturalLoops();
  for (int h : OuterLoopsFirst(body)) {
    const std::set<int>& blocks = body.at(h);
    std::vector<edge> exits;
    ballarus::LoopFacts facts = LookAtLoop(h, blocks, &exits);
    facts.tight_only = g_options.loop_registers == Options::AutoOnOff::kAuto &&
                       !g_options.paths;
    const ballarus::LoopRegisterVerdict verdict =
        ballarus::JudgeRegisterLoop(facts);
    if (dump && dump_file)
      fprintf(dump_file,
              "  loop at block %d (line %d, %zu blocks, ~%lld iterations): "
              "%s\n",
              h, FirstLine(blocks), blocks.size(),
              (long long)facts.iterations,
              ballarus::LoopRegisterVerdictText(verdict));
    if (verdict != ballarus::LoopRegisterVerdict::kTakes) continue;
    for (int b : blocks) out.loop_of[b] = h;
    out.exits[h] = std::move(exits);
  }
  return out;
}

void BeginLoopRegisters(bool enabled) {
  g_registers.fn = cfun;
  g_registers.loops =
      enabled ? FindRegisterLoops(/*dump=*/true) : RegisterLoops{};
  g_registers.local.clear();
  g_registers.pairs.clear();
}

int RegisterLoops::Of(edge e) const {
  auto s = loop_of.find(e->src->index);
  if (s == loop_of.end()) return -1;
  auto d = loop_of.find(e->dest->index);
  return d != loop_of.end() && d->second == s->second ? s->second : -1;
}

int RegisterLoops::Of(basic_block bb) const {
  auto it = loop_of.find(bb->index);
  return it == loop_of.end() ? -1 : it->second;
}

int RegisterLoopOf(edge e) {
  gcc_assert(g_registers.fn == cfun);
  return g_registers.loops.Of(e);
}

int RegisterLoopOf(basic_block bb) {
  gcc_assert(g_registers.fn == cfun);
  return g_registers.loops.Of(bb);
}

void AppendRegisterAdd(gimple_seq* seq, int loop, tree counters,
                       uint64_t index, tree delta) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  tree& local = g_registers.local[{loop, index}];
  if (local == NULL_TREE) local = NewRegisterLocal(u64);
  tree t1 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
  gimple_seq_add_stmt(seq, gimple_build_assign(t1, local));
  tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
  gimple_seq_add_stmt(seq, gimple_build_assign(t2, PLUS_EXPR, t1, delta));
  gimple_seq_add_stmt(seq, gimple_build_assign(local, t2));
}

RegisterPair NewRegisterPair(
    int loop, std::function<void(gimple_seq*, tree, tree)> flush) {
  RegisterPair p;
  p.sum = NewRegisterLocal(long_long_unsigned_type_node);
  p.cnt = NewRegisterLocal(long_long_unsigned_type_node);
  g_registers.pairs.push_back({loop, p, std::move(flush)});
  return p;
}

void EndLoopRegisters(tree counters) {
  gcc_assert(g_registers.fn == cfun);
  if (g_registers.local.empty() && g_registers.pairs.empty()) return;
  if (dump_file) DumpFlushes();
  gimple_seq init = NULL;
  FlushCounterLocals(counters, &init);
  FlushRegisterPairs(&init);
  gsi_insert_seq_on_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun)),
                         init);
  g_registers.local.clear();
  g_registers.pairs.clear();
}

}  // namespace ballarus::plugin
