// trace_emit_internal.h — what trace_emit.cc (the plan and the hooks'
// calls) and trace_emit_inline.cc (the hooks inlined) share.  Include
// after gcc_compat.h.
#ifndef BALLARUS_PLUGIN_TRACE_EMIT_INTERNAL_H_
#define BALLARUS_PLUGIN_TRACE_EMIT_INTERNAL_H_

#include <cstdint>

namespace ballarus::plugin {

// The enter and leave placeholders (trace_emit.cc PlaceholderFn), which
// InlineTraceHooks always replaces.
inline constexpr const char* kPushPlaceholder = "__ballarus_trace_push";
inline constexpr const char* kPopPlaceholder = "__ballarus_trace_pop_to";

// NAME(unsigned, ...) with n_args (0 to 2) arguments, returning `ret`.
tree RuntimeFn(const char* name, int n_args, tree ret = void_type_node);

tree U32(uint32_t v);

// __ballarus_trace_stack2.site = block, a store that stays where it is:
// the traced callee that reads it may be declared const or pure, which
// would let GCC drop or move a plain store.
gimple* SiteStore(uint32_t block);

// depth = the depth in ds, the stack's depth and site as one 8-byte value.
gimple* DepthFrom(tree depth, tree ds);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_TRACE_EMIT_INTERNAL_H_
