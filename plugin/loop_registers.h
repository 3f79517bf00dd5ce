// loop_registers.h — loop registers (loop-registers): the counters with a
// fixed address that a loop's edges and blocks update, counted in locals
// inside the loop and added to memory on its exits.  See loop_registers.cc.
#ifndef BALLARUS_PLUGIN_LOOP_REGISTERS_H_
#define BALLARUS_PLUGIN_LOOP_REGISTERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// A natural loop of cfun with no call (but internal ones, const or pure
// functions and builtins that cannot throw), no asm, no statement that may
// throw and no abnormal or EH edge, whose exit is decided by an induction
// variable and that GCC's estimate runs at least a few times per entry,
// cannot be left in the middle of an iteration but by a fatal signal: the
// counters with a fixed address that its edges and blocks update can be
// counted in locals instead -- one per counter, which GCC keeps in a
// register -- and added to the counters on each of its exits.  That is
// what GCC's LIM does for gcov's counters (DECL_NONALIASED) and cannot do
// for ours, which escape (the runtime registers them, path registers point
// into them): any store through a pointer in the loop may alias them, so
// each iteration's update stays a read-modify-write of memory, a
// dependency chain through the store buffer that costs bzip2's sorting
// loops more time than instructions.
//
// Per function: BeginLoopRegisters (before any code is inserted; at -O1
// and up) finds the loops; RegisterLoopOf names the loop (its header's
// index) whose locals an update on e or in bb may use (-1: none);
// AppendRegisterAdd appends `local += delta` for counter `index` of that
// loop (NewRegisterPair: two locals with a flush of their own);
// EndLoopRegisters queues `local = 0` at the function's entry and
// `counters[index] += local; local = 0` on the loop's exits, to be
// committed with the other edge code.
//
// FindRegisterLoops is the analysis alone (path planning asks it where a
// path end may go onto edges that need splitting: path_hoist.cc), its
// exits valid until the CFG changes; LoopRegistersWanted, whether this
// compilation uses loop registers at all.
struct RegisterLoops {
  std::map<int, int> loop_of;              // block index -> header index
  std::map<int, std::vector<edge>> exits;  // per header index
  int Of(edge e) const;  // -1 unless both ends are in one such loop
  int Of(basic_block bb) const;
};
bool LoopRegistersWanted(bool atomic, bool per_thread);
RegisterLoops FindRegisterLoops(bool dump);
void BeginLoopRegisters(bool enabled);
int RegisterLoopOf(edge e);
int RegisterLoopOf(basic_block bb);
void AppendRegisterAdd(gimple_seq* seq, int loop, tree counters,
                       uint64_t index, tree delta);
// Two locals of `loop` (zeroed with the others) that the code in the loop
// updates itself; on each of the loop's exits `flush(seq, sum, cnt)`
// appends the code that adds what they hold to the counters (sum and cnt:
// their values there), after which both are zeroed.
struct RegisterPair {
  tree sum = NULL_TREE;
  tree cnt = NULL_TREE;
};
RegisterPair NewRegisterPair(
    int loop, std::function<void(gimple_seq*, tree, tree)> flush);
void EndLoopRegisters(tree counters);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_LOOP_REGISTERS_H_
