// tu_emit.cc — what the pass emits once per translation unit, beside the
// instrumented code: the data the runtime (runtime/) finds at start-up and
// writes to the profile at exit.  Layouts: runtime/ballarus_format.h.
//
// In C terms, an instrumented TU gains
//
//   static uint64_t __ballarus_counters[N];           // edge counters and
//                                                     // dense path tables
//   static uint64_t __ballarus_path_hashes[2 * K]     // ballarus_path_hash
//       = {{function, NULL}, ...};                    // (only when K > 0)
//   extern void __ballarus_path_add(void*, uint64_t, uint64_t);  // hidden
//   static const unsigned char __ballarus_metadata[] = {...};    // blob
//   extern const char __ballarus_runtime_anchor;      // hidden; defined by
//                                                     // the runtime
//   static void* const __ballarus_tu_desc[5]          // ballarus_tu_desc,
//       __attribute__((section("ballarus_tus"), used))
//       = {__ballarus_metadata, __ballarus_counters,
//          &__ballarus_runtime_anchor, __ballarus_path_hashes or NULL, K};
//
// The linker gathers every TU's descriptor between __start_ballarus_tus and
// __stop_ballarus_tus, and the reference to the anchor makes linking an
// instrumented object without the runtime an error rather than an empty
// profile.  The blob (core/metadata.h) makes a profile self-contained.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "runtime/ballarus_format.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/gimple_build.h"
#include "plugin/tu_emit.h"

namespace ballarus::plugin {

tree EmitCounterArray(uint64_t n_counters, bool nonaliased) {
  tree u64 = long_long_unsigned_type_node;
  tree ctr_type = build_array_type_nelts(u64, n_counters);
  tree counters = StaticArtificialVar("__ballarus_counters", ctr_type);
  DECL_NONALIASED(counters) = nonaliased;
  SET_DECL_ALIGN(counters, MAX(TYPE_ALIGN(u64), 64u * BITS_PER_UNIT / 8));
  varpool_node::finalize_decl(counters);
  return counters;
}

PathHashDecls EmitPathHashTables(const std::vector<HashedPathTable>& tables) {
  PathHashDecls d;
  if (tables.empty()) return d;
  // static uint64_t __ballarus_path_hashes[2 * K], pairs {function index,
  // runtime table pointer} (ballarus_path_hash).
  tree u64 = long_long_unsigned_type_node;
  tree htype = build_array_type_nelts(u64, 2 * tables.size());
  tree hashes = StaticArtificialVar("__ballarus_path_hashes", htype);
  vec<constructor_elt, va_gc>* helts = NULL;
  for (const HashedPathTable& t : tables)
    CONSTRUCTOR_APPEND_ELT(helts, size_int(2 * t.index),
                           build_int_cst(u64, t.function));
  DECL_INITIAL(hashes) = build_constructor(htype, helts);
  SET_DECL_ALIGN(hashes, 16 * BITS_PER_UNIT);
  varpool_node::finalize_decl(hashes);
  tree fntype = build_function_type_list(void_type_node, ptr_type_node, u64,
                                         u64, NULL_TREE);
  tree add_fn = build_fn_decl("__ballarus_path_add", fntype);
  DECL_EXTERNAL(add_fn) = 1;
  TREE_PUBLIC(add_fn) = 1;
  DECL_ARTIFICIAL(add_fn) = 1;
  TREE_NOTHROW(add_fn) = 1;
  DECL_VISIBILITY(add_fn) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(add_fn) = 1;
  DECL_ATTRIBUTES(add_fn) =
      tree_cons(get_identifier("leaf"), NULL_TREE, NULL_TREE);
  d.tables = hashes;
  d.add_fn = add_fn;
  return d;
}

size_t EmitMetadataAndDescriptor(const ballarus::TranslationUnit& tu,
                                 tree counters, tree hashes,
                                 uint64_t n_hashes) {
  std::vector<uint8_t> blob = ballarus::EncodeMetadata(tu);
  tree byte_type = build_qualified_type(unsigned_char_type_node,
                                        TYPE_QUAL_CONST);
  tree blob_type = build_array_type_nelts(byte_type, blob.size());
  tree meta = StaticArtificialVar("__ballarus_metadata", blob_type);
  TREE_READONLY(meta) = 1;
  tree str = build_string(blob.size(),
                          reinterpret_cast<const char*>(blob.data()));
  TREE_TYPE(str) = blob_type;
  TREE_READONLY(str) = 1;
  TREE_STATIC(str) = 1;
  DECL_INITIAL(meta) = str;
  SET_DECL_ALIGN(meta, 64);
  varpool_node::finalize_decl(meta);

  tree anchor = build_decl(BUILTINS_LOCATION, VAR_DECL,
                           get_identifier("__ballarus_runtime_anchor"),
                           build_qualified_type(char_type_node,
                                                TYPE_QUAL_CONST));
  DECL_EXTERNAL(anchor) = 1;
  TREE_PUBLIC(anchor) = 1;
  TREE_READONLY(anchor) = 1;
  DECL_ARTIFICIAL(anchor) = 1;
  DECL_VISIBILITY(anchor) = VISIBILITY_HIDDEN;
  DECL_VISIBILITY_SPECIFIED(anchor) = 1;
  varpool_node::get_create(anchor);

  tree desc_type = build_array_type_nelts(ptr_type_node, 5);
  vec<constructor_elt, va_gc>* elts = NULL;
  CONSTRUCTOR_APPEND_ELT(elts, size_int(0),
                         fold_convert(ptr_type_node, build_fold_addr_expr(meta)));
  CONSTRUCTOR_APPEND_ELT(
      elts, size_int(1),
      fold_convert(ptr_type_node, build_fold_addr_expr(counters)));
  CONSTRUCTOR_APPEND_ELT(
      elts, size_int(2),
      fold_convert(ptr_type_node, build_fold_addr_expr(anchor)));
  CONSTRUCTOR_APPEND_ELT(
      elts, size_int(3),
      hashes ? fold_convert(ptr_type_node, build_fold_addr_expr(hashes))
             : null_pointer_node);
  CONSTRUCTOR_APPEND_ELT(elts, size_int(4),
                         fold_convert(ptr_type_node,
                                      build_int_cst(size_type_node, n_hashes)));
  tree desc = StaticArtificialVar("__ballarus_tu_desc", desc_type);
  DECL_INITIAL(desc) = build_constructor(desc_type, elts);
  TREE_CONSTANT(DECL_INITIAL(desc)) = 1;
  TREE_STATIC(DECL_INITIAL(desc)) = 1;
  DECL_PRESERVE_P(desc) = 1;
  SET_DECL_ALIGN(desc, TYPE_ALIGN(ptr_type_node));
  DECL_USER_ALIGN(desc) = 1;
  set_decl_section_name(desc, BALLARUS_TU_SECTION);
  varpool_node::finalize_decl(desc);
  return blob.size();
}

}  // namespace ballarus::plugin
