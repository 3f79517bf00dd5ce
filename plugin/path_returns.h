// path_returns.h — which calls can leave their caller's frame without
// returning (exit, longjmp, an exception), for path profiling's early
// termination: a call that cannot needs no pre-count.  See path_returns.cc.
#ifndef BALLARUS_PLUGIN_PATH_RETURNS_H_
#define BALLARUS_PLUGIN_PATH_RETURNS_H_

#include <set>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Whether `call` surely returns to its caller, whoever the callee is: a
// const or pure function that cannot loop forever, or a builtin that
// cannot throw (but fork, which returns twice in effect).  Such a call
// also leaves the profile's counters alone.
bool SurelyReturns(const gimple* call);

// The functions of this translation unit that always return to their
// caller -- by `return`, never by exit(), abort(), longjmp, an exception
// or anything unknown -- when they return at all.
class ReturningCallees {
 public:
  // Scans the TU's function bodies (once, before the analysis).
  void Compute();
  // Whether `call` (a GIMPLE call) calls, directly and with no possible
  // interposition, one of them.
  bool AlwaysReturns(const gimple* call) const;
  size_t size() const { return returning_.size(); }

 private:
  std::set<tree> returning_;  // FUNCTION_DECLs; only looked up
};

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_PATH_RETURNS_H_
