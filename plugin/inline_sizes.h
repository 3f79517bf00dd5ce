// inline_sizes.h — GCC's inliner sizes instrumented functions as plain ones.
//
// The IPA inliner decides from each function's summary (ipa-fnsummary: its
// size and time under predicates), which GCC computes after instrumentation:
// counter updates make a function look bigger and slower than in the plain
// build, so calls the plain build inlines stay calls (gcov's builds too),
// and each costs more instructions than its counters.  The pass made here
// runs right after GCC's "fnsummary" and computes the summary of every
// instrumented function again with the instrumentation hidden, so the
// inliner decides as for the plain build (docs/DESIGN.md, *Inlining
// decided as for the plain build*).
#ifndef BALLARUS_PLUGIN_INLINE_SIZES_H_
#define BALLARUS_PLUGIN_INLINE_SIZES_H_

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// The pass "ballarus_sizes": an IPA pass whose summary hook runs after
// "fnsummary"'s, so under -flto too the summaries streamed are the ones
// computed without instrumentation.
ipa_opt_pass_d* MakeInlineSizesPass(gcc::context* ctxt);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_INLINE_SIZES_H_
