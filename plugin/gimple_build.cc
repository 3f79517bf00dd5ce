// gimple_build.cc — see gimple_build.h.

#include <initializer_list>
#include <string>

// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/gimple_build.h"

namespace ballarus::plugin {

basic_block Diamond(edge e, profile_probability true_prob) {
  basic_block src = e->src, dst = e->dest;
  basic_block a = split_edge(e);
  edge to_a = single_succ_edge(src);
  to_a->flags &= ~EDGE_FALLTHRU;
  to_a->flags |= EDGE_TRUE_VALUE;
  to_a->probability = true_prob;
  edge to_dst = make_edge(src, dst, EDGE_FALSE_VALUE);
  to_dst->probability = true_prob.invert();
  a->count = src->count.apply_probability(true_prob);
  return a;
}

gasm* VolatileAsm(const std::string& text, vec<tree, va_gc>* inputs,
                  std::initializer_list<const char*> clobbers) {
  vec<tree, va_gc>* list = NULL;
  for (const char* c : clobbers)
    vec_safe_push(list,
                  build_tree_list(NULL_TREE, build_string(strlen(c) + 1, c)));
  gasm* a = gimple_build_asm_vec(ggc_strdup(text.c_str()), inputs, NULL, list,
                                 NULL);
  gimple_asm_set_volatile(a, true);
  return a;
}

tree StaticArtificialVar(const char* name, tree type) {
  tree var =
      build_decl(BUILTINS_LOCATION, VAR_DECL, get_identifier(name), type);
  TREE_STATIC(var) = 1;
  TREE_PUBLIC(var) = 0;
  DECL_ARTIFICIAL(var) = 1;
  DECL_IGNORED_P(var) = 1;
  TREE_USED(var) = 1;
  TREE_ADDRESSABLE(var) = 1;
  DECL_CONTEXT(var) = NULL_TREE;
  return var;
}

tree ExternThreadLocal(const char* name, tree type,
                       symbol_visibility visibility, tls_model model) {
  tree decl =
      build_decl(BUILTINS_LOCATION, VAR_DECL, get_identifier(name), type);
  DECL_EXTERNAL(decl) = 1;
  TREE_PUBLIC(decl) = 1;
  DECL_ARTIFICIAL(decl) = 1;
  DECL_VISIBILITY(decl) = visibility;
  DECL_VISIBILITY_SPECIFIED(decl) = 1;
  set_decl_tls_model(decl, model);
  varpool_node::get_create(decl);
  return decl;
}

}  // namespace ballarus::plugin
