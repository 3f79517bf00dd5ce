// path_emit.cc — Ball–Larus path profiling, the emission half: turns the
// PathActions planned by path_plan.cc into GIMPLE once the fake edges are
// removed.  Block actions are inserted at once; edge actions are queued with
// gsi_insert_seq_on_edge and committed with the edge counters (pass.cc), so
// an edge is split only when neither of its ends can hold the code.
//
// A function with two paths (x > 0 or not), before:
//
//   <bb 2>:
//   if (x_2(D) > 0) goto <bb 3>; else goto <bb 4>;
//   <bb 3>:
//   x_3 = x_2(D) * 3;
//   <bb 4>:
//   # x_1 = PHI <x_2(D)(2), x_3(3)>
//   _4 = x_1 + 1;
//   return _4;
//
// and after (mode=path, update=single; dense table from counter 0; the
// increment sits on the chord 2->4, split into a new block 3; path 1 is
// "x <= 0"; the register is the address of the path's counter):
//
//   <bb 2>:
//   BLRS_path.1 = &__ballarus_counters[0];            r = &count[Inc(ENTRY->2)]
//   if (x_2(D) > 0) goto <bb 4>; else goto <bb 3>;
//   <bb 3>:
//   BLRS_r_6 = BLRS_path.1;                           r += Inc(2->5)
//   BLRS_r_7 = BLRS_r_6 + 8;
//   BLRS_path.1 = BLRS_r_7;
//   goto <bb 5>;
//   <bb 4>:
//   x_3 = x_2(D) * 3;
//   <bb 5>:
//   # x_1 = PHI <x_2(D)(3), x_3(4)>
//   _4 = x_1 + 1;
//   BLRS_r_8 = BLRS_path.1;                           (*r)++
//   BLRS_ctr_9 = *BLRS_r_8;
//   BLRS_ctr_10 = BLRS_ctr_9 + 1;
//   *BLRS_r_8 = BLRS_ctr_10;
//   return _4;
//
// (path-register=number: r is the path number and the count is
// __ballarus_counters[base + MIN_EXPR <r, n_paths>], slot n_paths catching
// numbers out of range.  update=thread with the pointer register: r is the
// counter's index base + p and the count (*__ballarus_tc)[r], the running
// thread's copy -- see idx_; with tune-thread-gs the pointer stays, its
// count `addq $1, %gs:(r)`.)  Path ends whose block has no other way out can be
// counted on the edges into it (path_hoist.cc); not here,
// where edge 2->5 would need a split.
//
// The register BLRS_path is an addressable local until GCC's
// update-address-taken (-O1 and up) makes it an SSA register, so no PHIs are
// built here.  A dense count goes through AppendCounterAdd (counter_emit.cc)
// like an edge counter, so update=single/atomic applies to both alike; a
// hashed table is counted by a call to the runtime's __ballarus_path_add.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/counter_emit.h"
#include "plugin/gimple_build.h"
#include "plugin/path_emit.h"
#include "plugin/path_plan.h"
#include "plugin/reentry.h"

namespace ballarus::plugin {

namespace {

// PathEmitter::CountChoices: the largest power of two in the distance
// between a pair's register values (bytes with the pointer register) for
// which it counts in locals: n1 is exact below 2^(64 - k) counts per run
// of the loop, 2^53 (9e15; 100 days at one a nanosecond) at the least.
constexpr int kPairMaxShift = 11;

// Emits the path-register code of one function (see PathAction).
class PathEmitter {
 public:
  PathEmitter(const ballarus::PathInfo& info, bool signed_register,
              const std::vector<PathLoop>& loops, tree counters, tree hashes,
              tree add_fn, tree flag, const std::vector<ReentryCall>& reentry,
              tree epoch, bool atomic)
      : info_(info),
        loops_(loops),
        counters_(counters),
        hashes_(hashes),
        add_fn_(add_fn),
        atomic_(atomic),
        u64_(long_long_unsigned_type_node),
        idx_(info.storage == ballarus::PathInfo::kDense &&
             g_options.path_pointer && ThreadCountersActive() &&
             !ThreadCountersThroughGs()),
        ptr_(info.storage == ballarus::PathInfo::kDense &&
             g_options.path_pointer && !idx_),
        rtype_(ptr_               ? build_pointer_type(u64_)
               : signed_register && !idx_ ? long_long_integer_type_node
                                          : long_long_unsigned_type_node),
        flag_(flag),
        reentry_(reentry),
        epoch_(epoch) {
    // The register lives in memory until update-address-taken (at -O1 and
    // up) turns it into an SSA register: no PHIs to build here.
    r_ = create_tmp_var(rtype_, "BLRS_path");
    TREE_ADDRESSABLE(r_) = 1;
    // A counted loop's register on entry (s) and iterations so far (n).
    for (size_t l = 0; l < loops.size(); ++l) {
      loop_s_.push_back(create_tmp_var(rtype_, "BLRS_ls"));
      loop_n_.push_back(create_tmp_var(u64_, "BLRS_ln"));
      TREE_ADDRESSABLE(loop_s_.back()) = 1;
      TREE_ADDRESSABLE(loop_n_.back()) = 1;
    }
  }

  // in_loop: the code runs on every iteration of a loop (AppendCounterAdd);
  // reg_loop: the loop whose locals its known counts use (RegisterLoopOf).
  void Emit(const PathAction& act, bool in_loop, int reg_loop,
            gimple_seq* seq) {
    in_loop_ = in_loop;
    const bool local_kind = act.kind == PathAction::kCount ||
                            act.kind == PathAction::kEndCount ||
                            act.kind == PathAction::kCountReset ||
                            act.kind == PathAction::kStartCut ||
                            act.kind == PathAction::kEndCountReset;
    const bool in_locals = reg_loop >= 0 && local_kind && !act.derived &&
                           info_.storage == ballarus::PathInfo::kDense &&
                           (act.known ? act.path < info_.n_paths
                                      : !act.choices.empty() &&
                                            act.choices.back() < info_.n_paths &&
                                            PairDecodable(act));
    if (dump_file && reg_loop >= 0 && !act.derived)
      fprintf(dump_file, "  path: %s in the loop at block %d: %s\n",
              PathActionName(act.kind), reg_loop,
              act.known ? "path known, counted in a local"
              : in_locals ? "one of a few paths, counted in locals"
                          : "path not known here");
    if (in_locals) {
      if (act.known) {
        AppendRegisterAdd(seq, reg_loop, counters_, info_.base + act.path,
                          build_int_cst(u64_, 1));
      } else {
        CountChoices(seq, act, reg_loop);
      }
      PathAction rest = act;
      rest.derived = true;  // made: only the reset, if any, is left
      Emit(rest, in_loop, -1, seq);
      return;
    }
    switch (act.kind) {
      case PathAction::kCheckFlag:
      case PathAction::kStartCheckFlag:
        CheckFlag(seq, act.a);
        break;
      case PathAction::kReentry:
        Reentry(seq, act);
        break;
      case PathAction::kSetFlag:
        Add(seq, gimple_build_assign(Flag(), build_int_cst(FlagType(), 1)));
        break;
      case PathAction::kInit:
        Add(seq, gimple_build_assign(r_, Const(act.a, seq)));
        break;
      case PathAction::kAdd: {
        tree v = Plus(seq, LoadR(seq), act.a);
        Add(seq, gimple_build_assign(r_, v));
        break;
      }
      case PathAction::kStartInit:
        Add(seq, gimple_build_assign(r_, Const(act.a, seq)));
        break;
      case PathAction::kSaveRegister:
        Add(seq, gimple_build_assign(Saved(), LoadR(seq)));
        break;
      case PathAction::kStartCheckSaved:
        CheckFlag(seq, act.a, /*saved=*/true);
        break;
      case PathAction::kCount:
      case PathAction::kPreCount:
      case PathAction::kEndCount:
        if (!act.derived) Count(seq, act.a);
        break;
      case PathAction::kCountReset:
      case PathAction::kStartCut:
        if (!act.derived) Count(seq, act.a);
        Add(seq, gimple_build_assign(r_, Const(act.b, seq)));
        break;
      case PathAction::kEndCountReset:
        if (!act.derived) Count(seq, act.a);
        Add(seq, gimple_build_assign(r_, Const(0, seq)));
        break;
      case PathAction::kLoopEnter:
        if (loops_.at(act.loop).entries_cut) {  // r = b by the entry cut
          Add(seq, gimple_build_assign(loop_n_.at(act.loop),
                                       build_int_cst(u64_, 0)));
          break;
        }
        Add(seq, gimple_build_assign(loop_s_.at(act.loop), LoadR(seq)));
        Add(seq, gimple_build_assign(r_,
                                     Const(loops_.at(act.loop).start, seq)));
        Add(seq, gimple_build_assign(loop_n_.at(act.loop),
                                     build_int_cst(u64_, 0)));
        break;
      case PathAction::kLoopBack: {
        tree n0 = make_temp_ssa_name(u64_, NULL, "BLRS_n");
        Add(seq, gimple_build_assign(n0, loop_n_.at(act.loop)));
        Add(seq, gimple_build_assign(loop_n_.at(act.loop), Plus(seq, n0, 1)));
        Add(seq, gimple_build_assign(r_,
                                     Const(loops_.at(act.loop).start, seq)));
        break;
      }
      case PathAction::kLoopExit:
        LoopExit(seq, act.loop);
        break;
    }
  }

 private:
  static void Add(gimple_seq* seq, gimple* g) { gimple_seq_add_stmt(seq, g); }

  static tree FlagType() {
    return build_qualified_type(unsigned_char_type_node, TYPE_QUAL_VOLATILE);
  }
  // "arrived" (MakeArrivedFlag): set on every normal entry into a block
  // that can also be re-entered abnormally (longjmp), cleared where that
  // block checks it.
  tree Flag() { return flag_; }

  // A register value for path number c (modulo 2^64) in the register's
  // type -- with a pointer register, &counters[base + c] -- as a GIMPLE
  // value (through a temporary in seq if need be).
  tree Const(uint64_t c, gimple_seq* seq) {
    if (idx_) return wide_int_to_tree(rtype_, wi::uhwi(info_.base + c, 64));
    if (!ptr_) return wide_int_to_tree(rtype_, wi::uhwi(c, 64));
    // &counters[base]: path p counts at base + 8p bytes.  (Only outside
    // update=thread, so the shared array's address, an invariant: under
    // update=thread dense tables use the index register, idx_.)
    tree base = build_fold_addr_expr(
        build4(ARRAY_REF, u64_, counters_, build_int_cst(sizetype, info_.base),
               NULL_TREE, NULL_TREE));
    tree v = fold_build_pointer_plus_hwi(
        base, static_cast<HOST_WIDE_INT>(c * sizeof(uint64_t)));
    if (is_gimple_min_invariant(v)) return v;
    tree t = make_temp_ssa_name(rtype_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(t, v));
    return t;
  }

  tree LoadR(gimple_seq* seq) {
    tree t = make_temp_ssa_name(rtype_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(t, r_));
    return t;
  }

  // v + c (modulo 2^64), in v's type (the register's, or u64 for indices).
  tree Plus(gimple_seq* seq, tree v, uint64_t c) {
    if (c == 0) return v;
    tree type = TREE_TYPE(v);
    tree t = make_temp_ssa_name(type, NULL, "BLRS_r");
    if (POINTER_TYPE_P(type)) {  // c paths on: 8c bytes (modulo 2^64)
      Add(seq, gimple_build_assign(t, POINTER_PLUS_EXPR, v,
                                   size_int(static_cast<HOST_WIDE_INT>(
                                       c * sizeof(uint64_t)))));
      return t;
    }
    Add(seq, gimple_build_assign(t, PLUS_EXPR, v,
                                 wide_int_to_tree(type, wi::uhwi(c, 64))));
    return t;
  }

  // The copy s of the register that a computed goto's target entered
  // otherwise too reads at its start (kStartCheckSaved): its normal
  // entries set it (kSaveRegister), so r is dead at every computed goto.
  tree Saved() {
    if (saved_ == NULL_TREE) {
      saved_ = create_tmp_var(rtype_, "BLRS_saved");
      TREE_ADDRESSABLE(saved_) = 1;
      // Read only after a normal entry set it (the flag says so), which
      // GCC cannot see: no -Wmaybe-uninitialized for the user's build.
      suppress_warning(saved_, OPT_Wmaybe_uninitialized);
      suppress_warning(saved_, OPT_Wuninitialized);
    }
    return saved_;
  }

  // r = arrived ? r : reentry (saved: r = arrived ? s : reentry);
  // arrived = 0.
  void CheckFlag(gimple_seq* seq, uint64_t reentry, bool saved = false) {
    tree t = make_temp_ssa_name(unsigned_char_type_node, NULL, "BLRS_f");
    Add(seq, gimple_build_assign(t, Flag()));
    tree c = make_temp_ssa_name(boolean_type_node, NULL, "BLRS_f");
    Add(seq, gimple_build_assign(c, NE_EXPR, t,
                                 build_int_cst(unsigned_char_type_node, 0)));
    tree r0 = saved ? make_temp_ssa_name(rtype_, NULL, "BLRS_r") : LoadR(seq);
    if (saved) Add(seq, gimple_build_assign(r0, Saved()));
    tree r1 = make_temp_ssa_name(rtype_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(r1, COND_EXPR, c, r0, Const(reentry, seq)));
    Add(seq, gimple_build_assign(r_, r1));
    Add(seq, gimple_build_assign(Flag(), build_int_cst(FlagType(), 0)));
  }

  // After a call that may return as a re-entry: changed = the epoch moved
  // during the call; r = changed ? b : r.
  void Reentry(gimple_seq* seq, const PathAction& act) {
    tree changed = AppendEpochChanged(seq, reentry_.at(act.call), epoch_);
    tree r0 = LoadR(seq);
    tree r1 = make_temp_ssa_name(rtype_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(r1, COND_EXPR, changed, Const(act.b, seq),
                                 r0));
    Add(seq, gimple_build_assign(r_, r1));
  }

  // Leaving counted loop l (n iterations, register s on entry): its first
  // iteration ended path s + d, the others path K; a run that never went
  // round restores the register the path from before the loop goes on with.
  //   w = n != 0; count[s + d] += w; count[K] += n - w; r += w ? 0 : s - b
  // Entries cut: every iteration ended path K, so count[K] += n.
  void LoopExit(gimple_seq* seq, int l) {
    const PathLoop& L = loops_.at(l);
    tree n = make_temp_ssa_name(u64_, NULL, "BLRS_n");
    Add(seq, gimple_build_assign(n, loop_n_.at(l)));
    if (L.entries_cut) {
      CountAt(seq, Const(L.iteration, seq), n);
      return;
    }
    tree s = make_temp_ssa_name(rtype_, NULL, "BLRS_s");
    Add(seq, gimple_build_assign(s, loop_s_.at(l)));
    tree went = make_temp_ssa_name(boolean_type_node, NULL, "BLRS_w");
    Add(seq, gimple_build_assign(went, NE_EXPR, n, build_int_cst(u64_, 0)));
    tree w = make_temp_ssa_name(u64_, NULL, "BLRS_w");
    Add(seq, gimple_build_assign(w, NOP_EXPR, went));
    CountAt(seq, Plus(seq, s, L.first_offset), w);
    tree rest = make_temp_ssa_name(u64_, NULL, "BLRS_n");
    Add(seq, gimple_build_assign(rest, MINUS_EXPR, n, w));
    CountAt(seq, Const(L.iteration, seq), rest);
    // fix = s - b (bytes with a pointer register), or 0 if it went round
    tree ftype = ptr_ ? sizetype : rtype_;
    tree back = make_temp_ssa_name(ftype, NULL, "BLRS_r");
    if (ptr_) {
      tree d = make_temp_ssa_name(ptrdiff_type_node, NULL, "BLRS_r");
      Add(seq, gimple_build_assign(d, POINTER_DIFF_EXPR, s,
                                   Const(L.start, seq)));
      Add(seq, gimple_build_assign(back, NOP_EXPR, d));
    } else {
      Add(seq, gimple_build_assign(back, MINUS_EXPR, s, Const(L.start, seq)));
    }
    tree fix = make_temp_ssa_name(ftype, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(fix, COND_EXPR, went,
                                 build_int_cst(ftype, 0), back));
    tree r1 = make_temp_ssa_name(rtype_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(r1, ptr_ ? POINTER_PLUS_EXPR : PLUS_EXPR,
                                 LoadR(seq), fix));
    Add(seq, gimple_build_assign(r_, r1));
  }

  // A count that lands on one of two paths p0 < p1 (act.choices), made in
  // two locals of the loop: cnt += 1 and sum += x, x the register's value
  // (the address &count[p] or the number p, with the constant a left out).
  // With X0 and X1 = X0 + D its two values, sum = cnt * X0 + n1 * D
  // (modulo 2^64), so the exits recover n1, the count of p1 (and cnt - n1,
  // p0's): two register adds per execution, no compare and no memory (a
  // count through the register is a read-modify-write of a variable
  // address on every iteration: bzip2's copyStart loops).  D = 2^k * odd
  // gives n1 modulo 2^(64 - k): exact while a run of the loop makes the
  // count fewer than 2^(64 - k) times, k <= kPairMaxShift (PairDecodable).
  void CountChoices(gimple_seq* seq, const PathAction& act, int reg_loop) {
    const uint64_t p0 = act.choices[0], p1 = act.choices[1];
    const uint64_t a = act.a;
    const int k = PairShift(act);
    const uint64_t odd = PairStep(act) >> k;
    uint64_t inv = odd;  // odd * inv == 1 (mod 2^64), Newton's iteration
    for (int i = 0; i < 6; ++i) inv *= 2 - odd * inv;
    const uint64_t mask = k == 0 ? ~0ull : (~0ull >> k);
    tree u64 = u64_;
    tree counters = counters_;
    const uint64_t base = info_.base;
    // X0 = origin + scale * (p0 - a) modulo 2^64: origin the address
    // &count[0] of the function's table with the pointer register (scale
    // 8), else the number 0 (idx_: base) -- built from values (the flush
    // runs after this emitter is gone).
    tree origin =
        ptr_ ? build_fold_addr_expr(build4(ARRAY_REF, u64, counters,
                                           build_int_cst(sizetype, base),
                                           NULL_TREE, NULL_TREE))
             : NULL_TREE;
    const uint64_t x0_offset =
        ptr_ ? (p0 - a) * sizeof(uint64_t) : (idx_ ? base : 0) + p0 - a;
    // The flush: t = (sum - cnt * X0) >> k; n1 = (t * inv) & mask;
    // count[p1] += n1; count[p0] += cnt - n1.
    auto flush = [=](gimple_seq* f, tree sum, tree cnt) {
      tree x0 = wide_int_to_tree(u64, wi::uhwi(x0_offset, 64));
      if (origin != NULL_TREE) {
        tree o = make_temp_ssa_name(u64, NULL, "BLRS_x");
        Add(f, gimple_build_assign(o, CONVERT_EXPR, unshare_expr(origin)));
        tree sum0 = make_temp_ssa_name(u64, NULL, "BLRS_x");
        Add(f, gimple_build_assign(sum0, PLUS_EXPR, o, x0));
        x0 = sum0;
      }
      tree prod = make_temp_ssa_name(u64, NULL, "BLRS_x");
      Add(f, gimple_build_assign(prod, MULT_EXPR, cnt, x0));
      tree t = make_temp_ssa_name(u64, NULL, "BLRS_x");
      Add(f, gimple_build_assign(t, MINUS_EXPR, sum, prod));
      if (k > 0) {
        tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_x");
        Add(f, gimple_build_assign(t2, RSHIFT_EXPR, t,
                                   build_int_cst(integer_type_node, k)));
        t = t2;
      }
      tree n1 = make_temp_ssa_name(u64, NULL, "BLRS_x");
      Add(f, gimple_build_assign(n1, MULT_EXPR, t,
                                 wide_int_to_tree(u64, wi::uhwi(inv, 64))));
      if (k > 0) {
        tree m = make_temp_ssa_name(u64, NULL, "BLRS_x");
        Add(f, gimple_build_assign(m, BIT_AND_EXPR, n1,
                                   wide_int_to_tree(u64, wi::uhwi(mask, 64))));
        n1 = m;
      }
      tree n0 = make_temp_ssa_name(u64, NULL, "BLRS_x");
      Add(f, gimple_build_assign(n0, MINUS_EXPR, cnt, n1));
      for (const auto& [p, n] : {std::pair<uint64_t, tree>{p1, n1}, {p0, n0}})
        AppendCounterAdd(f,
                         build4(ARRAY_REF, u64, counters,
                                build_int_cst(sizetype, base + p), NULL_TREE,
                                NULL_TREE),
                         n, /*atomic=*/false);
    };
    const RegisterPair pair = NewRegisterPair(reg_loop, flush);
    tree r = LoadR(seq);
    tree x = make_temp_ssa_name(u64, NULL, "BLRS_x");
    Add(seq, gimple_build_assign(x, CONVERT_EXPR, r));
    tree s0 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
    Add(seq, gimple_build_assign(s0, pair.sum));
    tree s1 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
    Add(seq, gimple_build_assign(s1, PLUS_EXPR, s0, x));
    Add(seq, gimple_build_assign(pair.sum, s1));
    tree c0 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
    Add(seq, gimple_build_assign(c0, pair.cnt));
    tree c1 = make_temp_ssa_name(u64, NULL, "BLRS_lc");
    Add(seq, gimple_build_assign(c1, PLUS_EXPR, c0, build_int_cst(u64, 1)));
    Add(seq, gimple_build_assign(pair.cnt, c1));
  }

  // D = X1 - X0 for act's two paths: 8 (p1 - p0) bytes apart with the
  // pointer register, p1 - p0 with a number or index.
  uint64_t PairStep(const PathAction& act) const {
    const uint64_t d = act.choices[1] - act.choices[0];
    return ptr_ ? d * sizeof(uint64_t) : d;
  }
  // k, the power of two in D.
  int PairShift(const PathAction& act) const {
    return __builtin_ctzll(PairStep(act));
  }
  // Two choices whose D leaves at least 2^(64 - kPairMaxShift) counts per
  // run of the loop (and 8 (p1 - p0) no overflow).
  bool PairDecodable(const PathAction& act) const {
    return act.choices.size() == 2 && act.choices[1] > act.choices[0] &&
           act.choices[1] - act.choices[0] < (1ull << 40) &&
           PairShift(act) <= kPairMaxShift;
  }

  // count[r + c] += 1.
  void Count(gimple_seq* seq, uint64_t c) {
    CountAt(seq, Plus(seq, LoadR(seq), c),
            wide_int_to_tree(u64_, wi::uhwi(1ull, 64)));
  }

  // count[key] += delta (modulo 2^64); key in the register's type or u64.
  void CountAt(gimple_seq* seq, tree key, tree delta) {
    if (idx_) {
      // The register is the counter's index in the TU's array: counts
      // (*__ballarus_tc)[r] through AppendCounterAdd, `addq $1,
      // (%tc,%r,8)`, no range check (every value is a valid path's by
      // construction, as with the pointer register).
      tree sidx = make_temp_ssa_name(sizetype, NULL, "BLRS_i");
      Add(seq, gimple_build_assign(sidx, NOP_EXPR, key));
      tree ref = build4(ARRAY_REF, u64_, counters_, sidx, NULL_TREE,
                        NULL_TREE);
      AppendCounterAdd(seq, ref, delta, atomic_, in_loop_);
      return;
    }
    if (ptr_) {
      // The register is the counter's address: no index, no base register
      // (and no range check: the address is in the table by construction,
      // as every register value's path number is).
      if (TREE_CODE(key) != SSA_NAME) {
        tree t = make_temp_ssa_name(rtype_, NULL, "BLRS_p");
        Add(seq, gimple_build_assign(t, key));
        key = t;
      }
      tree ref = build2(MEM_REF, u64_, key, build_int_cst(rtype_, 0));
      AppendCounterAdd(seq, ref, delta, atomic_, in_loop_);
      return;
    }
    if (TREE_TYPE(key) != u64_) {  // the path number, as an unsigned index
      tree k = make_temp_ssa_name(u64_, NULL, "BLRS_k");
      Add(seq, gimple_build_assign(k, NOP_EXPR, key));
      key = k;
    }
    if (info_.storage == ballarus::PathInfo::kHashed) {
      tree slot = build4(ARRAY_REF, u64_, hashes_,
                         build_int_cst(sizetype, 2 * info_.base), NULL_TREE,
                         NULL_TREE);
      tree addr = build_fold_addr_expr_with_type(slot, ptr_type_node);
      Add(seq, gimple_build_call(add_fn_, 3, addr, key, delta));
      return;
    }
    // Dense: counters[base + min(key, n_paths)]; the last slot catches
    // numbers out of range, which only broken instrumentation produces.
    tree idx = make_temp_ssa_name(u64_, NULL, "BLRS_i");
    Add(seq, gimple_build_assign(
                 idx, MIN_EXPR, key,
                 wide_int_to_tree(u64_, wi::uhwi(info_.n_paths, 64))));
    idx = Plus(seq, idx, info_.base);
    tree sidx = make_temp_ssa_name(sizetype, NULL, "BLRS_i");
    Add(seq, gimple_build_assign(sidx, NOP_EXPR, idx));
    tree ref = build4(ARRAY_REF, u64_, counters_, sidx, NULL_TREE, NULL_TREE);
    AppendCounterAdd(seq, ref, delta, atomic_, in_loop_);
  }

  const ballarus::PathInfo& info_;
  const std::vector<PathLoop>& loops_;
  std::vector<tree> loop_s_, loop_n_;
  tree counters_;
  tree hashes_;
  tree add_fn_;
  bool atomic_;
  tree u64_;
  // update=thread with the pointer register (path-register=pointer): the
  // register holds the counter's *index* base + p in the TU's array
  // instead, counted at (*__ballarus_tc)[r].  A pointer into the thread's
  // copy would be a value GCC keeps live across the whole function (in
  // small hot functions with many exits, callee-saved registers pushed
  // and popped per call: docs/performance.md, "Thread counters' index
  // register"), where an index is a constant wherever the path so far is
  // known, like update=single's constant addresses.
  bool idx_;
  bool in_loop_ = false;  // Emit's in_loop, for the counts it makes
  bool ptr_;    // the register is a pointer into the dense table
  tree rtype_;  // the register's type (PathWork::signed_register, ptr_)
  tree r_ = NULL_TREE;
  tree saved_ = NULL_TREE;  // s (Saved)
  tree flag_;
  const std::vector<ReentryCall>& reentry_;
  tree epoch_;
};

// A call of the exec family: when it succeeds it does not return, yet
// gcov's CFG (flow_call_edges_add) gives GCC's nothrow built-ins among them
// no fake EXIT edge of their own, so the block ends further on.
bool IsExecCall(gimple* stmt) {
  if (!is_gimple_call(stmt)) return false;
  tree fndecl = gimple_call_fndecl(stmt);
  if (fndecl == NULL_TREE || DECL_NAME(fndecl) == NULL_TREE) return false;
  const char* name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
  static const char* const kNames[] = {"execl",  "execle",  "execlp",
                                       "execv",  "execve",  "execvp",
                                       "execvpe", "fexecve"};
  for (const char* n : kNames)
    if (strcmp(name, n) == 0) return true;
  return false;
}

// A pre-count goes before the block's first exec-family call, if any: a
// vfork child's path ends there when exec succeeds, and its edge counts,
// made in the parent's memory, stay.  Nothing between that call and the
// block's last statement can leave (every other call that may not return
// ends its block), so the count is the same when exec fails.
bool InsertBeforeExec(basic_block bb, gimple_seq seq) {
  for (gimple_stmt_iterator gsi = gsi_after_labels(bb); !gsi_end_p(gsi);
       gsi_next_nondebug(&gsi))
    if (IsExecCall(gsi_stmt(gsi))) {
      gsi_insert_seq_before(&gsi, seq, GSI_SAME_STMT);
      return true;
    }
  return false;
}

// Inserts `seq` into bb for a block action: at its start (after labels and
// a __builtin_setjmp_receiver), before an exec-family call (a pre-count)
// or before its last statement.
void InsertInBlock(basic_block bb, const PathAction& act, gimple_seq seq) {
  if (act.kind == PathAction::kStartCheckFlag ||
      act.kind == PathAction::kStartCut ||
      act.kind == PathAction::kStartInit ||
      act.kind == PathAction::kStartCheckSaved) {
    gimple_stmt_iterator gsi = gsi_after_labels(bb);
    if (!gsi_end_p(gsi)) {
      gimple* first = gsi_stmt(gsi);
      if (is_gimple_call(first) &&
          gimple_call_builtin_p(first, BUILT_IN_SETJMP_RECEIVER)) {
        gsi_insert_seq_after(&gsi, seq, GSI_SAME_STMT);
        return;
      }
    }
    gsi_insert_seq_before(&gsi, seq, GSI_SAME_STMT);
    return;
  }
  if (act.kind == PathAction::kPreCount && InsertBeforeExec(bb, seq)) return;
  gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
  if (gsi_end_p(gsi)) {  // no statements but debug ones: append
    gsi = gsi_last_bb(bb);
    gsi_insert_seq_after(&gsi, seq, GSI_SAME_STMT);
    return;
  }
  gimple* last = gsi_stmt(gsi);
  if (is_gimple_call(last) || stmt_ends_bb_p(last) ||
      gimple_code(last) == GIMPLE_GOTO || gimple_code(last) == GIMPLE_RETURN)
    gsi_insert_seq_before(&gsi, seq, GSI_SAME_STMT);
  else
    gsi_insert_seq_after(&gsi, seq, GSI_SAME_STMT);
}

}  // namespace

// The TU's "arrived" flag for abnormal re-entries: a thread-local volatile
// byte.  A normal entry into a re-entry block sets it and the check right
// after (past setjmp's first return, or at the block's start) clears it,
// so it is clear whenever a longjmp lands.  Per thread (not per
// activation: a local would be kept in a register across setjmp by GCC's
// RTL passes) is enough, because nothing runs between a set and its check
// but the returns_twice call itself.  A vfork child, in the parent's
// memory and thread, returns first and clears it: the child goes on with
// the path from ENTRY, the parent's return is the re-entry (the model's
// fake ENTRY edge, reentry.cc).
tree MakeArrivedFlag() {
  tree type = build_qualified_type(unsigned_char_type_node,
                                   TYPE_QUAL_VOLATILE);
  tree flag = StaticArtificialVar("__ballarus_arrived", type);
  TREE_THIS_VOLATILE(flag) = 1;
  set_decl_tls_model(flag, decl_default_tls_model(flag));
  varpool_node::finalize_decl(flag);
  return flag;
}

void EmitPathProfiling(const PathWork& work, tree counters, tree hashes,
                       tree add_fn, tree arrived,
                       const std::vector<ReentryCall>& reentry, tree epoch,
                       bool atomic) {
  PathEmitter emit(work.info, work.signed_register, work.loops, counters,
                   hashes, add_fn, arrived, reentry, epoch, atomic);
  for (const auto& [bb, act] : work.in_blocks) {
    gimple_seq seq = NULL;
    emit.Emit(act, RunsPerIteration(bb), RegisterLoopOf(bb), &seq);
    InsertInBlock(bb, act, seq);
  }
  for (const auto& [e, act] : work.on_edges) {
    gimple_seq seq = NULL;
    emit.Emit(act, RunsPerIteration(e), RegisterLoopOf(e), &seq);
    gsi_insert_seq_on_edge(e, seq);
  }
}

}  // namespace ballarus::plugin
