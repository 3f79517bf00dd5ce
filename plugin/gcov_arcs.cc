// gcov_arcs.cc — records what GCC 12's -fprofile-arcs would record for this
// compile (plugin/gcov_arcs.h), so that profile use needs no guessing.
//
// Why it can be exact: the ballarus pass runs right after GCC's "profile"
// pass and prepares each CFG exactly as branch_prob() does, so its graph is
// the graph -fprofile-arcs instruments and -fprofile-use annotates (GCC
// checks that with the cfg_checksum, which ballarus computes with GCC's own
// coverage_compute_cfg_checksum at the same point).  What remains to know:
//
//   * which edges gcov counts: find_spanning_tree over the edge list sorted
//     by compare_freqs (EDGE_FREQUENCY, doubled for critical edges; ties by
//     the pre-compact_blocks indices), replayed GCC-free by
//     core/gcov_arcs.cc GcovCounterEdges on keys captured here;
//   * the function ident: the cgraph profile_id that tree_profiling's
//     init_node_map (true) gives each node — GCC's own
//     coverage_compute_profile_id, bumped past collisions in
//     FOR_EACH_DEFINED_FUNCTION order — or funcdef_no + 1 under
//     --param=profile-func-internal-id=1;
//   * where the .gcda goes: coverage_init's da_file_name, recomputed from
//     aux_base_name, the working directory, -fprofile-dir and
//     -fprofile-prefix-path (core/gcda.h GcdaFileName);
//   * the functions gcov profiles beyond ballarus' usual ones: extern
//     inline bodies, which gcov counts unless -ftest-coverage, ballarus
//     instruments too (flagged kGcovFunctionExternInline; reports skip
//     them); thunks, which tree_profiling expands to GIMPLE and counts with
//     one counter out of ENTRY, ballarus expands the same way
//     (GcovExpandThunks) and instruments like any function, recording
//     kGcovFunctionThunk and that edge.  Anything gcov would profile that
//     still has no record is listed, so the converter can say so.
//
// One thing must be made equal first.  GCC gates its early function
// splitting pass ("fnsplit", ipa-split.cc) off under -fprofile-arcs and
// -fprofile-use ("When doing profile feedback, we want to execute the pass
// after profiling is read"), so a gcov compile and a -fprofile-use compile
// both reach the profile pass with functions unsplit, while a plain -O2
// compile has already split some (f.part.0) and has other CFGs.  The plugin
// therefore switches "fnsplit" off too (GcovRegister, PLUGIN_OVERRIDE_GATE):
// the instrumented build is split like gcov's instrumented build (not at
// all), and its CFGs are the ones -fprofile-use will see.
//
// Nothing else here changes the CFG or any node: the keys and idents are
// read, never stored into GCC's structures.
#include "plugin/gcov_arcs.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/gcda.h"
#include "core/gcov_arcs.h"
#include "core/metadata.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/cfg_prep.h"

// symtab-thunks.h (GCC 11+), whose own header needs symbol-summary.h's
// templates; the one declaration used here.
bool expand_thunk(cgraph_node*, bool, bool);

namespace ballarus {
namespace {

// compare_freqs keys of cfun's edges before compact_blocks().
std::map<edge, GcovEdgeKey> g_keys;
// profile_id of every node tree_profiling's init_node_map (true) numbers.
std::map<cgraph_node*, unsigned> g_idents;
bool g_idents_ready = false;
// Nodes GcovRecordFunction saw.
std::set<cgraph_node*> g_recorded;
// Thunks GcovExpandThunks expanded.
std::set<cgraph_node*> g_thunks;

void ComputeIdents() {
  // value-prof.cc init_node_map (true): every defined function with a
  // GIMPLE body or a thunk, in FOR_EACH_DEFINED_FUNCTION order; a taken (or
  // zero) id is bumped by one modulo 2^31 until free.
  std::set<unsigned> taken;
  cgraph_node* n;
  FOR_EACH_DEFINED_FUNCTION(n) {
    if (!(n->has_gimple_body_p() || n->thunk)) continue;
    unsigned id = coverage_compute_profile_id(n);
    while (taken.count(id) || id == 0) id = (id + 1) & 0x7fffffff;
    taken.insert(id);
    g_idents[n] = id;
  }
  g_idents_ready = true;
}

unsigned Ident(cgraph_node* node, function* fn) {
  if (param_profile_func_internal_id) return fn ? fn->funcdef_no + 1 : 0;
  if (!g_idents_ready) ComputeIdents();
  auto it = g_idents.find(node);
  return it == g_idents.end() ? 0 : it->second;
}

// tree_profiling's filter, GCC 12 (tree-profile.cc), for a compile with
// -fprofile-arcs: why gcov would skip `node`, or nullptr if it profiles it.
// (-fprofile-filter-files / -fprofile-exclude-files are not replayed.)
const char* GcovSkips(cgraph_node* node) {
  if (!gimple_has_body_p(node->decl) && !node->thunk) return "no body";
  if (DECL_SOURCE_LOCATION(node->decl) == BUILTINS_LOCATION) return "builtin";
  if (lookup_attribute("no_profile_instrument_function",
                       DECL_ATTRIBUTES(node->decl)))
    return "no_profile_instrument_function";
  if (DECL_EXTERNAL(node->decl) && flag_test_coverage) return "extern inline";
  if (node->thunk && stdarg_p(TREE_TYPE(node->decl))) return "variadic thunk";
  if (!plugin::ProfiledSourceFile(
          LOCATION_FILE(DECL_SOURCE_LOCATION(node->decl))))
    return "-fprofile-filter-files/-fprofile-exclude-files";
  return nullptr;
}

// True if the user chose where profiles live (-fprofile-dir=, or the DIR
// of -fprofile-generate= / -fprofile-use=): coverage_init then mangles the
// object's full path.  Without one, coverage_init itself stores getpwd()
// into profile_data_prefix, so the global alone cannot tell.
bool UserProfileDir() {
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const size_t o = save_decoded_options[i].opt_index;
    if (o == OPT_fprofile_dir_ || o == OPT_fprofile_generate_ ||
        o == OPT_fprofile_use_)
      return true;
  }
  return false;
}

uint32_t VersionWord() {
  // gcov-iov.cc: major, minor of BASE-VER; '*' for a release, else the
  // first letter of DEV-PHASE ("experimental", "prerelease").
  unsigned major = 0, minor = 0;
  std::sscanf(gcc_version.basever, "%u.%u", &major, &minor);
  const char phase = gcc_version.devphase[0] ? gcc_version.devphase[0] : '*';
  return GcovVersionWord(major, minor, phase);
}

// PLUGIN_OVERRIDE_GATE: the early "fnsplit" never runs (see above); the
// later "feedback_fnsplit" keeps its own gate (profile use only).
void OverrideGate(void* gcc_data, void* /*user_data*/) {
  if (current_pass != NULL && current_pass->name != NULL &&
      strcmp(current_pass->name, "fnsplit") == 0)
    *static_cast<bool*>(gcc_data) = false;
}

}  // namespace

void GcovRegister(const char* plugin_name) {
  register_callback(plugin_name, PLUGIN_OVERRIDE_GATE, OverrideGate, NULL);
}

void GcovExpandThunks() {
  // tree_profiling under -fprofile-arcs: "When generate profile, expand
  // thunk to gimple so it can be instrumented same way as other
  // functions" — the ones its filter keeps, variadic thunks excepted.
  // Idents first: init_node_map numbers the nodes before any expansion.
  if (!param_profile_func_internal_id && !g_idents_ready) ComputeIdents();
  std::vector<cgraph_node*> thunks;
  cgraph_node* n;
  FOR_EACH_DEFINED_FUNCTION(n)
    if (n->thunk && !GcovSkips(n)) thunks.push_back(n);
  for (cgraph_node* t : thunks) {
    expand_thunk(t, false, true);
    g_thunks.insert(t);
    if (dump_file)
      fprintf(dump_file, "ballarus: thunk %s expanded, as -fprofile-arcs "
              "does\n", IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(t->decl)));
  }
}

void GcovCaptureEdgeKeys() {
  g_keys.clear();
  basic_block bb;
  FOR_BB_BETWEEN(bb, ENTRY_BLOCK_PTR_FOR_FN(cfun), NULL, next_bb) {
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) {
      // profile.cc compare_freqs: "Critical edges needs to be split which
      // introduce extra control flow.  Make them more heavy."
      const int m = EDGE_CRITICAL_P(e) ? 2 : 1;
      GcovEdgeKey k;
      k.weight = static_cast<int64_t>(EDGE_FREQUENCY(e)) * m + m;
      k.src = e->src->index;
      k.dst = e->dest->index;
      g_keys[e] = k;
    }
  }
}

void GcovRecordFunction(Function* fn, const std::vector<edge>& gcc_edges) {
  cgraph_node* node = cgraph_node::get(current_function_decl);
  // ballarus' own re-entry edges (plugin/reentry.h: model only, no GCC
  // edge) are no arcs of gcov's: its counters are found on the graph
  // without them, and their indices mapped back.
  std::vector<uint32_t> real;
  for (size_t i = 0; i < gcc_edges.size(); ++i)
    if (gcc_edges[i] != nullptr) real.push_back(static_cast<uint32_t>(i));
  Function gcov_graph;
  const Function* graph = fn;
  if (real.size() != gcc_edges.size()) {
    gcov_graph.blocks = fn->blocks;
    for (uint32_t i : real) gcov_graph.edges.push_back(fn->edges[i]);
    graph = &gcov_graph;
  }
  std::vector<GcovEdgeKey> keys(real.size());
  for (size_t k = 0; k < real.size(); ++k) {
    const size_t i = real[k];
    auto it = g_keys.find(gcc_edges[i]);
    if (it == g_keys.end())
      internal_error("ballarus: edge %d to %d of %s has no gcov sort key",
                     gcc_edges[i]->src->index, gcc_edges[i]->dest->index,
                     fn->name.c_str());
    keys[k] = it->second;
  }
  g_keys.clear();
  // For reports in gcov's formats (core/metadata.h GcovReportInfo): the
  // columns of coverage.cc's coverage_begin_function, and (below) the fake
  // edges gcov never sees.
  GcovReportInfo report;
  {
    const expanded_location start =
        expand_location(DECL_SOURCE_LOCATION(current_function_decl));
    const expanded_location end = expand_location(cfun->function_end_locus);
    const bool same_file =
        end.file && start.file && strcmp(end.file, start.file) == 0;
    report.start_column = start.column;
    report.end_column =
        same_file && end.line >= start.line ? end.column : start.column;
  }
  if (g_thunks.count(node))  // branch_prob (thunk = true) ignores them all
    for (size_t i = 0; i < fn->edges.size(); ++i)
      if (fn->edges[i].flags & kEdgeFake)
        report.dropped_edges.push_back(static_cast<uint32_t>(i));
  GcovFunctionInfo info;
  info.ident = Ident(node, cfun);
  if (DECL_EXTERNAL(current_function_decl))
    info.flags |= kGcovFunctionExternInline;
  if (g_thunks.count(node)) {
    // branch_prob (thunk = true): every edge but ENTRY's ignored, no tree.
    info.flags |= kGcovFunctionThunk;
    for (size_t i = 0; i < fn->edges.size(); ++i)
      if (fn->edges[i].src == kEntryBlock &&
          !(fn->edges[i].flags & (kEdgeFake | kEdgeReentry)))
        info.counter_edges.push_back(static_cast<uint32_t>(i));
  } else {
    info.counter_edges = GcovCounterEdges(*graph, keys, &report.dropped_edges);
    for (uint32_t& e : info.counter_edges) e = real[e];
    for (uint32_t& e : report.dropped_edges) e = real[e];
  }
  fn->extensions.push_back(
      {kGcovExtensionTag, EncodeGcovFunctionInfo(info)});
  fn->extensions.push_back(
      {kGcovReportExtensionTag, EncodeGcovReportInfo(report)});
  g_recorded.insert(node);
  if (dump_file) {
    fprintf(dump_file, "  gcov: ident %u%s, %zu arc counters:", info.ident,
            (info.flags & kGcovFunctionExternInline)
                ? " (extern inline body: for profile use only)"
                : "",
            info.counter_edges.size());
    for (uint32_t e : info.counter_edges)
      fprintf(dump_file, " %u->%u", fn->edges[e].src, fn->edges[e].dst);
    fprintf(dump_file, "\n");
  }
}

void GcovRecordUnit(TranslationUnit* tu) {
  if (tu->functions.empty() || aux_base_name == NULL) return;
  GcovUnitInfo u;
  u.version = VersionWord();
  u.aux_name = aux_base_name;
  u.has_profile_dir = UserProfileDir() && profile_data_prefix != NULL;
  if (u.has_profile_dir) u.profile_dir = profile_data_prefix;
  if (profile_prefix_path) u.prefix_path = profile_prefix_path;
  const char* pwd = getpwd();
  u.da_file_name = GcdaFileName(
      u.aux_name, pwd ? pwd : "",
      u.has_profile_dir ? std::optional<std::string>(u.profile_dir)
                        : std::nullopt,
      u.prefix_path);
  cgraph_node* n;
  FOR_EACH_DEFINED_FUNCTION(n) {
    if (GcovSkips(n) || g_recorded.count(n)) continue;
    GcovUnitInfo::Missing m;
    m.name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(n->decl));
    m.ident = Ident(n, DECL_STRUCT_FUNCTION(n->decl));
    m.why = n->thunk                ? "thunk"
            : DECL_EXTERNAL(n->decl) ? "extern inline body"
                                     : "not instrumented by ballarus";
    if (g_thunks.count(n)) m.why = "expanded thunk, not instrumented";
    u.not_instrumented.push_back(m);
  }
  tu->functions.front().extensions.push_back(
      {kGcovUnitExtensionTag, EncodeGcovUnitInfo(u)});
  if (dump_file) {
    fprintf(dump_file, "ballarus: gcov data file %s (version %s)\n",
            u.da_file_name.c_str(), GcovVersionString(u.version).c_str());
    for (const GcovUnitInfo::Missing& m : u.not_instrumented)
      fprintf(dump_file, "ballarus: gcov would profile %s (%s), ballarus "
              "does not\n", m.name.c_str(), m.why.c_str());
  }
  g_recorded.clear();
  g_thunks.clear();
}

}  // namespace ballarus
