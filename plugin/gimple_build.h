// gimple_build.h — GIMPLE pieces that several emitters build alike: a
// branch split off an edge, a volatile asm, the TU's own artificial
// variables, a declaration of the runtime's thread-local variables.  See
// gimple_build.cc.
#ifndef BALLARUS_PLUGIN_GIMPLE_BUILD_H_
#define BALLARUS_PLUGIN_GIMPLE_BUILD_H_

#include <initializer_list>
#include <string>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

// Splits `e` (src -> dst) into src -> A -> dst, A taken on src's true
// edge with `true_prob`, and src -> dst on its false edge; returns A (empty,
// its count src's share).  The caller ends src with the condition.
basic_block Diamond(edge e, profile_probability true_prob);

// asm volatile (text : : inputs : clobbers): built from an operand list
// (NULL for none) and the names of the registers or "memory" / "cc" it
// clobbers.
gasm* VolatileAsm(const std::string& text, vec<tree, va_gc>* inputs,
                  std::initializer_list<const char*> clobbers);

// static TYPE NAME; a variable of the TU's own the plugin adds (artificial,
// no debug information, used and addressable: the runtime reads it), not
// yet finalized (the caller sets its initial value, section, alignment).
tree StaticArtificialVar(const char* name, tree type);

// extern __thread TYPE NAME; a variable the runtime defines, with the
// given visibility and TLS model.
tree ExternThreadLocal(const char* name, tree type,
                       symbol_visibility visibility, tls_model model);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_GIMPLE_BUILD_H_
