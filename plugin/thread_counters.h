// thread_counters.h — update=thread: each thread counts into its own copy
// of the TU's counters, through a thread-local pointer that every
// instrumented function loads.  See thread_counters.cc.
#ifndef BALLARUS_PLUGIN_THREAD_COUNTERS_H_
#define BALLARUS_PLUGIN_THREAD_COUNTERS_H_

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Once per TU before any function is instrumented: moves the TU's counter
// array into section BALLARUS_THREAD_SECTION (zero-filled, no file space),
// defines the TU's thread pointer __ballarus_tc and its entry in the
// module's table (BALLARUS_TC_TABLE_SECTION), and declares the runtime's
// __ballarus_tc_register.
void PrepareThreadCounters(tree counters);

// Per function (cfun): from Begin on, AppendCounterAdd addresses the
// thread's copy of the counters through the TU's thread pointer, which End
// loads at the function's entry (with a registration check where a thread
// can enter the TU from uninstrumented code).  End emits nothing when no
// counter was updated.  Call End after every counter update is committed.
void BeginThreadCounters();
void EndThreadCounters();
// Between BeginThreadCounters and EndThreadCounters: counter updates go to
// the thread's copy.
bool ThreadCountersActive();

// Declares the section of thread-mode counter arrays as BSS (@nobits),
// which GCC would otherwise emit as PROGBITS: once in each compilation
// that instruments, and in LTO's link-time compilations, which emit the
// arrays again.
void DeclareThreadSection();
// Between Begin and End, with tune-thread-gs in effect: counts are %gs adds
// at the shared counters' addresses, so a pointer into the shared array
// (path mode's pointer register) counts into the thread's copy as it is.
bool ThreadCountersThroughGs();

// Whether this TU's per-thread counts go through %gs (tune-thread-gs in
// x86-64 code for an executable), known before any function is
// instrumented.
bool ThreadCountsThroughGs();

// Between Begin and End, when *ref is an element of the TU's counter array:
// appends to seq the load of the thread pointer, points *ref at the same
// element of the thread's copy and returns true (AppendCounterAdd then adds
// plainly: only its thread writes it).  Otherwise returns false.
bool RedirectToThreadCopy(gimple_seq* seq, tree* ref);

// Between Begin and End, with update=tls in x86-64 code for an
// executable, when ref is an element of the TU's counter array: appends
// the add of delta to the same element of the TU's static thread-local
// array (one `addq $d, %fs:OFFSET`) and returns true.  Otherwise returns
// false.
bool AppendSegmentAdd(gimple_seq* seq, tree ref, tree delta);

// Between Begin and End, with tune-thread-gs=on in x86-64 code for an
// executable, when *ref is an element of the TU's counter array or *p, p
// a pointer into it: makes *ref the same element seen through GCC's %gs
// address space (__seg_gs) -- at a constant index the array's address
// typed as a pointer into %gs in the reference itself, else an address
// converted in seq -- which GCC then adds to as it adds to update=single's
// counters (`addq $d, %gs:counters+OFFSET(%rip)`); returns true.
// Otherwise returns false.
bool RedirectThroughGs(gimple_seq* seq, tree* ref);

// The GIMPLE pass, run after "optimized", that gives the static TLS adds
// whose index, and the %gs counts whose pointer, became a constant that
// constant in their address.
opt_pass* MakeSegmentFoldPass(gcc::context* ctxt);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_THREAD_COUNTERS_H_
