// ballarus_plugin.cc — the GCC plugin: option parsing, pass registration and
// the instrumentation pass.
//
//   gcc -fplugin=ballarus.so -fplugin-arg-ballarus-mode=naive ...
//
// The pass ("ballarus", a simple IPA pass) runs right after GCC's own
// "profile" pass — the point where -fprofile-arcs instruments — so its CFGs
// are gcov's CFGs: per function it prepares the CFG exactly as GCC's
// branch_prob() does (profile.cc: fake edges for calls that may not return,
// goto-locus edge splits, fake ENTRY/EXIT edges standing in for abnormal
// edges, compact_blocks), records the graph in the GCC-free model
// (core/model.h), then places counters.  Block i and the j-th successor edge
// of block i therefore mean the same thing in ballarus' metadata and in
// gcov's .gcno, which is what lets the tests compare counts edge by edge.
//
// Edge mode (the default) places counters only on the chords of a maximum
// spanning tree of the closed CFG (Knuth 1973; Ball & Larus, TOPLAS 1994),
// weighted by estimator/ (or GCC's frequencies, or an earlier profile):
// |E|-|V|+1 counters per function, on the edges the weights call cold;
// ballarus-reconstruct derives every other edge by flow conservation.
// Edges that cannot hold a counter (fake, EH, abnormal) go into the tree
// first.  Naive mode places one 64-bit counter on every edge that can hold
// one.  Instrumentation of a counted edge, before and after:
//
//   <bb 3>:                          <bb 3>:
//   if (x_1 > 0) goto <bb 4>;        if (x_1 > 0) goto <bb 4>;
//   else goto <bb 5>;                else goto <bb 5>;
//                                    <bb 4>:            (edge 3->4 had one pred)
//   <bb 4>:                          PROF_1 = __ballarus_counters[7];
//   ...                              PROF_2 = PROF_1 + 1;
//                                    __ballarus_counters[7] = PROF_2;
//                                    ...
//
// (with update=atomic the three statements are one
// __atomic_fetch_add_8 (&__ballarus_counters[7], 1, RELAXED)).  Edge
// insertions go through gsi_insert_on_edge, so an edge is split only when
// neither its source nor its target can hold the code.
//
// Per translation unit the pass then emits: the counter array, the metadata
// blob (core/metadata.h) and a descriptor in section "ballarus_tus" that the
// runtime finds at start-up (runtime/ballarus_format.h).
//
// `-fdump-ipa-ballarus` explains every decision.

#include <cxxabi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "core/spanning_tree.h"
#include "estimator/estimator.h"
#include "plugin/profile_location.h"
#include "plugin/profile_weights.h"
#include "runtime/ballarus_format.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

int plugin_is_GPL_compatible;

namespace {

const char kPluginName[] = "ballarus";
const char kPluginVersion[] = "0.1.0";

const char kHelp[] =
    "ballarus: exact edge profiles inside GCC (Knuth; Ball & Larus).\n"
    "Options (-fplugin-arg-ballarus-KEY=VALUE; when a key is given several\n"
    "times, the last one wins):\n"
    "  mode=edge           optimal edge profiling (default): counters only on\n"
    "                      the chords of a maximum spanning tree of the CFG\n"
    "                      (Knuth; Ball & Larus 1994); the other edges are\n"
    "                      derived exactly by ballarus-reconstruct\n"
    "  mode=naive          a 64-bit counter on every CFG edge that can hold one\n"
    "  mode=path           Ball-Larus path profiling (MICRO 1996): every\n"
    "                      acyclic path of every function counted; the edge\n"
    "                      profile is derived from the paths\n"
    "  mode=edge,path      both in one build: one run yields an edge and a\n"
    "                      path profile (ballarus-reconstruct verify checks\n"
    "                      one against the other)\n"
    "  path-table-max=N    functions with at most N paths count them in a\n"
    "                      dense array (N+1 counters); more paths go to an\n"
    "                      exact, thread-safe runtime hash table (default\n"
    "                      4096)\n"
    "  early-termination=on|off  count paths cut short by exit(), longjmp or\n"
    "                      an exception at the call that did not return\n"
    "                      (default on; costs two counter updates per call\n"
    "                      that may not return; off loses those paths)\n"
    "  weights=heuristic   spanning-tree weights from the Ball-Larus static\n"
    "                      estimate (default): counters land on cold edges\n"
    "  weights=gcc         GCC's own guessed edge frequencies (falls back to\n"
    "                      heuristic where GCC has none, e.g. at -O0)\n"
    "  weights=uniform     every edge alike\n"
    "  weights=profile=FILE exact counts from an earlier ballarus profile of the\n"
    "                      same build (the best any spanning tree can do)\n"
    "  update=single       plain increments: fastest, racy under threads\n"
    "  update=atomic       relaxed atomic increments: exact under threads\n"
    "                      (default when compiling with -pthread or\n"
    "                      -fprofile-update=atomic, like gcc's prefer-atomic)\n"
    "  dump                write the pass dump (<output>.NNNi.ballarus), which\n"
    "                      explains each function's counter placement; GCC 12\n"
    "                      parses -fdump-ipa-* before plugins load, so\n"
    "                      -fdump-ipa-ballarus itself is refused (-fdump-ipa-all\n"
    "                      includes ballarus' dump)\n"
    "  help                print this text\n";

enum class Mode { kNaive, kEdge, kNone };
enum class WeightKind { kHeuristic, kGcc, kUniform, kProfile };
enum class Update { kDefault, kSingle, kAtomic };

struct Options {
  Mode mode = Mode::kEdge;  // edge counters: naive, edge, or none (path only)
  bool paths = false;       // Ball-Larus path profiling
  uint64_t path_table_max = 4096;
  bool early_termination = true;
  WeightKind weights = WeightKind::kHeuristic;
  std::string profile_path;
  Update update = Update::kDefault;
  bool dump = false;
};

Options g_options;
ballarus::ProfileWeights g_profile_weights;

// ---------------------------------------------------------------------------
// Options.

// GCC 12's plugin-argument parser (plugin.cc, parse_plugin_arg_opt) drops
// one character from the end of a value for every '=' inside it, so
// "weights=profile=FILE" arrives with FILE cut short.  The compiler's own
// record of the command line is intact: take the value from there (the last
// such option, as the last option wins).
std::string RawWeightsProfile(const std::string& truncated) {
  const std::string prefix = std::string(kPluginName) + "-weights=profile=";
  std::string found;
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const cl_decoded_option& o = save_decoded_options[i];
    if (o.opt_index == OPT_fplugin_arg_ && o.arg != nullptr &&
        strncmp(o.arg, prefix.c_str(), prefix.size()) == 0)
      found = o.arg + prefix.size();
  }
  return found.empty() ? truncated : found;
}

bool ParseOptions(const plugin_name_args* info) {
  bool ok = true;
  for (int i = 0; i < info->argc; ++i) {
    const char* key = info->argv[i].key;
    const char* value = info->argv[i].value;
    std::string k = key;
    if (k == "help") {
      fputs(kHelp, stderr);
      continue;
    }
    if (k == "dump") {
      g_options.dump = value == nullptr || std::string(value) != "0";
      continue;
    }
    if (k == "mode") {
      if (value == nullptr) {
        error("ballarus: option %<-fplugin-arg-ballarus-mode%> needs a value "
              "(edge, naive, path or edge,path)");
        ok = false;
      } else {
        std::string v = value;
        if (v == "naive") {
          g_options.mode = Mode::kNaive;
          g_options.paths = false;
        } else if (v == "edge") {
          g_options.mode = Mode::kEdge;
          g_options.paths = false;
        } else if (v == "path") {
          g_options.mode = Mode::kNone;
          g_options.paths = true;
        } else if (v == "edge,path" || v == "path,edge") {
          g_options.mode = Mode::kEdge;
          g_options.paths = true;
        } else if (v == "naive,path" || v == "path,naive") {
          g_options.mode = Mode::kNaive;
          g_options.paths = true;
        } else {
          error("ballarus: unknown value %qs for "
                "%<-fplugin-arg-ballarus-mode%> (expected edge, naive, path "
                "or edge,path)",
                value);
          ok = false;
        }
      }
      continue;
    }
    if (k == "path-table-max") {
      std::string v = value ? value : "";
      char* end = nullptr;
      errno = 0;
      unsigned long long n = v.empty() ? 0 : strtoull(v.c_str(), &end, 10);
      if (v.empty() || errno != 0 || *end != '\0' || v[0] == '-' ||
          n > (1ull << 40)) {
        error("ballarus: %<-fplugin-arg-ballarus-path-table-max%> needs a "
              "number of paths between 0 and 2^40, not %qs",
              v.c_str());
        ok = false;
      } else {
        g_options.path_table_max = n;
      }
      continue;
    }
    if (k == "early-termination") {
      std::string v = value ? value : "on";
      if (v == "on" || v == "1") {
        g_options.early_termination = true;
      } else if (v == "off" || v == "0") {
        g_options.early_termination = false;
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-early-termination%> (expected on or "
              "off)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "weights") {
      std::string v = value ? value : "";
      if (v == "heuristic") {
        g_options.weights = WeightKind::kHeuristic;
      } else if (v == "gcc") {
        g_options.weights = WeightKind::kGcc;
      } else if (v == "uniform") {
        g_options.weights = WeightKind::kUniform;
      } else if (v.rfind("profile=", 0) == 0 && v.size() > 8) {
        g_options.weights = WeightKind::kProfile;
        g_options.profile_path = RawWeightsProfile(v.substr(8));
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-weights%> (expected heuristic, gcc, "
              "uniform or profile=FILE)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "update") {
      std::string v = value ? value : "";
      if (v == "single") {
        g_options.update = Update::kSingle;
      } else if (v == "atomic") {
        g_options.update = Update::kAtomic;
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-update%> (expected single or atomic)",
              value ? value : "");
        ok = false;
      }
      continue;
    }
    error("ballarus: unknown option %<-fplugin-arg-ballarus-%s%>; "
          "-fplugin-arg-ballarus-help lists the options",
          key);
    ok = false;
  }
  return ok;
}

// True when this compilation asked for thread-safe counters the way gcc's
// -fprofile-update=prefer-atomic does: -pthread (which the driver turns
// into -D_REENTRANT for cc1) or an explicit -fprofile-update=atomic.
bool CompileWantsAtomic() {
  if (global_options_set.x_flag_profile_update &&
      flag_profile_update != PROFILE_UPDATE_SINGLE)
    return true;
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const cl_decoded_option& o = save_decoded_options[i];
    if (o.opt_index == OPT_D && o.arg != nullptr &&
        strcmp(o.arg, "_REENTRANT") == 0)
      return true;
    if (o.opt_index == OPT_pthread) return true;
  }
  return false;
}

bool UseAtomic() {
  switch (g_options.update) {
    case Update::kSingle:
      return false;
    case Update::kAtomic:
      return true;
    case Update::kDefault:
      return CompileWantsAtomic();
  }
  return false;
}

// ---------------------------------------------------------------------------
// Model building.

// Interns file names in first-seen order (deterministic for a given source).
class FileTable {
 public:
  explicit FileTable(std::vector<std::string>* files) : files_(files) {}
  uint32_t Intern(const char* name) {
    std::string s = name ? name : "";
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(files_->size());
    files_->push_back(s);
    index_.emplace(s, id);
    return id;
  }

 private:
  std::vector<std::string>* files_;
  std::map<std::string, uint32_t> index_;
};

std::string Demangle(const char* name) {
  // Only C++ (Itanium ABI) names are mangled; "f" alone would demangle as
  // the type "float".
  if (strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return name;
  std::string out = d;
  std::free(d);  // NOLINT: memory from __cxa_demangle
  return out;
}

// Prepares cfun's CFG exactly as branch_prob() (GCC 12 profile.cc) does
// before it numbers blocks and writes the .gcno, so that ballarus and gcov
// see the same graph.  Returns with the fake edges in place.
void PrepareCfgLikeGcov() {
  basic_block bb;
  flow_call_edges_add(NULL);
  add_noreturn_fake_exit_edges();

  FOR_EACH_BB_FN(bb, cfun) {
    int need_exit_edge = 0, need_entry_edge = 0;
    int have_exit_edge = 0, have_entry_edge = 0;
    edge e;
    edge_iterator ei;

    FOR_EACH_EDGE(e, ei, bb->succs) {
      gimple_stmt_iterator gsi;
      gimple* last = NULL;
      for (gsi = gsi_last_nondebug_bb(bb); !gsi_end_p(gsi);
           gsi_prev_nondebug(&gsi)) {
        last = gsi_stmt(gsi);
        if (!RESERVED_LOCATION_P(gimple_location(last))) break;
      }
      // An edge with its own goto locus gets its own block (gcov does the
      // same so such lines are counted once).
      if (last && gimple_has_location(last) &&
          !RESERVED_LOCATION_P(e->goto_locus) && !single_succ_p(bb) &&
          (LOCATION_FILE(e->goto_locus) !=
               LOCATION_FILE(gimple_location(last)) ||
           (LOCATION_LINE(e->goto_locus) !=
            LOCATION_LINE(gimple_location(last))))) {
        basic_block new_bb = split_edge(e);
        edge ne = single_succ_edge(new_bb);
        ne->goto_locus = e->goto_locus;
      }
      if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
          e->dest != EXIT_BLOCK_PTR_FOR_FN(cfun))
        need_exit_edge = 1;
      if (e->dest == EXIT_BLOCK_PTR_FOR_FN(cfun)) have_exit_edge = 1;
    }
    FOR_EACH_EDGE(e, ei, bb->preds) {
      if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
          e->src != ENTRY_BLOCK_PTR_FOR_FN(cfun))
        need_entry_edge = 1;
      if (e->src == ENTRY_BLOCK_PTR_FOR_FN(cfun)) have_entry_edge = 1;
    }

    if (need_exit_edge && !have_exit_edge) {
      if (dump_file)
        fprintf(dump_file, "  fake exit edge added to bb %i\n", bb->index);
      make_edge(bb, EXIT_BLOCK_PTR_FOR_FN(cfun), EDGE_FAKE);
    }
    if (need_entry_edge && !have_entry_edge) {
      if (dump_file)
        fprintf(dump_file, "  fake entry edge added to bb %i\n", bb->index);
      make_edge(ENTRY_BLOCK_PTR_FOR_FN(cfun), bb, EDGE_FAKE);
      if (have_exit_edge || need_exit_edge) {
        gimple_stmt_iterator gsi = gsi_start_nondebug_after_labels_bb(bb);
        gimple* first = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
        if (first && is_gimple_call(first) &&
            (gimple_call_builtin_p(first, BUILT_IN_SETJMP_RECEIVER) ||
             (gimple_call_flags(first) & ECF_RETURNS_TWICE) ||
             (gimple_call_internal_p(first) &&
              gimple_call_internal_fn(first) == IFN_ABNORMAL_DISPATCHER)))
          continue;
        if (dump_file)
          fprintf(dump_file, "  bb %i split after labels\n", bb->index);
        split_block_after_labels(bb);
      }
    }
  }
  compact_blocks();
}

uint32_t ModelEdgeFlags(edge e) {
  uint32_t f = 0;
  if (e->flags & EDGE_FALLTHRU) f |= ballarus::kEdgeFallthru;
  if (e->flags & EDGE_TRUE_VALUE) f |= ballarus::kEdgeTrue;
  if (e->flags & EDGE_FALSE_VALUE) f |= ballarus::kEdgeFalse;
  if (e->flags & EDGE_EH) f |= ballarus::kEdgeEh;
  if (e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL))
    f |= ballarus::kEdgeAbnormal;
  if (e->flags & EDGE_FAKE) f |= ballarus::kEdgeFake;
  if (e->src != ENTRY_BLOCK_PTR_FOR_FN(cfun)) {
    gimple* last = last_stmt(e->src);
    if (last && gimple_code(last) == GIMPLE_SWITCH) f |= ballarus::kEdgeSwitch;
  }
  // gcov's "ignore": abnormal edges replaced by fake ENTRY/EXIT edges.
  if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
      e->src != ENTRY_BLOCK_PTR_FOR_FN(cfun) &&
      e->dest != EXIT_BLOCK_PTR_FOR_FN(cfun))
    f |= ballarus::kEdgeIgnored;
  if (EDGE_CRITICAL_P(e)) f |= ballarus::kEdgeCritical;
  return f;
}

// Fake edges do not exist at run time and abnormal edges cannot be split;
// neither can hold a counter.  EH edges can: GIMPLE splits them by giving
// the new block its own landing pad, as gcov relies on too.  Counting them
// matters: a block ending in a throwing call that may also not return has
// an EH and a fake successor, and landing pads shared by several such
// blocks would otherwise close cycles of unknown edges.
bool CanHoldCounter(uint32_t flags) {
  return !(flags & (ballarus::kEdgeAbnormal | ballarus::kEdgeFake |
                    ballarus::kEdgeIgnored));
}

// Records each block's source lines the way branch_prob() writes them to the
// .gcno (GCC 12 profile.cc, output_location): per function, (file, line,
// block) triples are emitted once; within the function a line equal to the
// previous one is not repeated except at the start of a block; a file switch
// without a line change records no line.
class LineRecorder {
 public:
  explicit LineRecorder(FileTable* files) : files_(files) {}

  void Add(ballarus::Block* block, int bb_index, const char* file, int line) {
    if (file == NULL) return;
    std::string key = std::string(file) + '\0' + std::to_string(line) + '\0' +
                      std::to_string(bb_index);
    if (!streamed_.insert(key).second) return;
    bool name_differs = !have_prev_ || prev_file_ != file;
    bool line_differs = prev_line_ != line;
    if (current_block_ != bb_index) {
      current_block_ = bb_index;
      name_differs = line_differs = true;
    }
    if (name_differs) {
      prev_file_ = file;
      have_prev_ = true;
      current_file_ = files_->Intern(file);
    }
    if (line_differs) {
      block->lines.push_back({current_file_, static_cast<uint32_t>(line)});
      prev_line_ = line;
    }
  }

 private:
  FileTable* files_;
  std::set<std::string> streamed_;
  bool have_prev_ = false;
  std::string prev_file_;
  int prev_line_ = -1;
  int current_block_ = -1;
  uint32_t current_file_ = 0;
};

void RecordLines(ballarus::Function* fn, FileTable* files) {
  LineRecorder rec(files);
  hash_set<location_hash> seen_locations;
  basic_block bb;
  FOR_EACH_BB_FN(bb, cfun) {
    ballarus::Block* block = &fn->blocks[bb->index];
    if (bb == ENTRY_BLOCK_PTR_FOR_FN(cfun)->next_bb) {
      location_t loc = DECL_SOURCE_LOCATION(current_function_decl);
      if (!RESERVED_LOCATION_P(loc)) {
        seen_locations.add(loc);
        expanded_location xloc = expand_location(loc);
        rec.Add(block, bb->index, xloc.file, MAX(1, xloc.line));
      }
    }
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
         gsi_next(&gsi)) {
      gimple* stmt = gsi_stmt(gsi);
      location_t loc = gimple_location(stmt);
      if (!RESERVED_LOCATION_P(loc)) {
        seen_locations.add(loc);
        rec.Add(block, bb->index, gimple_filename(stmt),
                MAX(1, gimple_lineno(stmt)));
      }
    }
    location_t loc;
    if (single_succ_p(bb) && (loc = single_succ_edge(bb)->goto_locus) &&
        !RESERVED_LOCATION_P(loc) && !seen_locations.contains(loc)) {
      expanded_location xloc = expand_location(loc);
      rec.Add(block, bb->index, xloc.file, MAX(1, xloc.line));
    }
  }
}

// Path-register code, planned in the analysis phase (while the fake edges
// exist) and emitted in the instrumentation phase.  r is the function's
// 64-bit path register (a local: recursion and threads are safe); "count
// [x]" is count[x] += 1 in the function's path table (dense slice of the
// counter array, index clamped to the overflow slot, or the runtime hash).
struct PathAction {
  enum Kind {
    // On an edge, in this order when several meet on one edge:
    kCheckFlag,   // r = arrived ? r : a; arrived = 0   (abnormal re-entry)
    kUndo,        // count[r + a] -= 1   (the call before it returned)
    kSetFlag,     // arrived = 1         (a normal entry into a re-entry block)
    kInit,        // r = a               (edge out of ENTRY)
    kAdd,         // r += a              (chord)
    kCount,       // count[r + a] += 1   (return)
    kCountReset,  // count[r + a] += 1; r = b   (cut edge: back edge)
    // In a block:
    kStartCheckFlag,  // at its start: as kCheckFlag
    kStartCut,        // at its start: count[r + a] += 1; r = b (cut block)
    kPreCount,        // before its last statement (a call that may not
                      // return): count[r + a] += 1, undone on return
    kEndCountReset,   // before its last statement (computed goto): the path
                      // ends here, the abnormal target starts one with r = 0
  };
  Kind kind;
  uint64_t a = 0;
  uint64_t b = 0;
};

struct PathWork {
  bool enabled = false;
  ballarus::PathInfo info;
  std::vector<std::pair<edge, PathAction>> on_edges;
  std::vector<std::pair<basic_block, PathAction>> in_blocks;
  bool uses_flag = false;
};

// One function's analysis result, kept between the analysis and the
// instrumentation phases.
struct FunctionWork {
  cgraph_node* node = nullptr;
  size_t model_index = 0;
  // Edges that get a counter, with the counter index; in model edge order.
  std::vector<std::pair<edge, uint64_t>> counted;
  std::vector<size_t> counted_model_edge;  // parallel to `counted`
  PathWork path;
};

bool ShouldInstrument(cgraph_node* node) {
  tree decl = node->decl;
  if (!gimple_has_body_p(decl)) return false;  // also skips thunks
  if (node->thunk) return false;
  if (DECL_SOURCE_LOCATION(decl) == BUILTINS_LOCATION) return false;
  if (lookup_attribute("no_profile_instrument_function",
                       DECL_ATTRIBUTES(decl)))
    return false;
  // Like gcov under -ftest-coverage: extern inline bodies are never emitted.
  if (DECL_EXTERNAL(decl)) return false;
  return true;
}

// Spanning-tree weights for fn's edges (parallel to fn.edges), per
// -fplugin-arg-ballarus-weights.
std::vector<uint64_t> EdgeWeights(const ballarus::Function& fn,
                                  const std::vector<edge>& gcc_edges,
                                  uint64_t tu_identity) {
  WeightKind kind = g_options.weights;
  if (kind == WeightKind::kProfile) {
    std::vector<uint64_t> counts;
    if (g_profile_weights.Lookup(fn.name, fn.cfg_checksum, tu_identity,
                                 &counts) &&
        counts.size() == fn.edges.size()) {
      if (dump_file) fprintf(dump_file, "  weights: profile counts\n");
      for (uint64_t& c : counts) c = ballarus_sat_add(c, 1);
      return counts;
    }
    if (dump_file)
      fprintf(dump_file,
              "  weights: %s not in the profile (or another CFG); using the "
              "heuristic\n",
              fn.name.c_str());
    kind = WeightKind::kHeuristic;
  }
  if (kind == WeightKind::kGcc) {
    if (profile_status_for_fn(cfun) != PROFILE_ABSENT) {
      std::vector<uint64_t> w(fn.edges.size(), 1);
      for (size_t i = 0; i < gcc_edges.size(); ++i)
        if (!(gcc_edges[i]->flags & EDGE_FAKE))
          w[i] = static_cast<uint64_t>(EDGE_FREQUENCY(gcc_edges[i])) + 1;
      if (dump_file) fprintf(dump_file, "  weights: GCC edge frequencies\n");
      return w;
    }
    if (dump_file)
      fprintf(dump_file,
              "  weights: GCC has no profile estimate here; using the "
              "heuristic\n");
    kind = WeightKind::kHeuristic;
  }
  if (kind == WeightKind::kUniform) {
    if (dump_file) fprintf(dump_file, "  weights: uniform\n");
    return ballarus::UniformWeights(fn).edges;
  }
  if (dump_file) fprintf(dump_file, "  weights: Ball-Larus heuristic\n");
  return ballarus::HeuristicWeights(fn).edges;
}

gimple* FirstStmt(basic_block bb) {
  gimple_stmt_iterator gsi = gsi_start_nondebug_after_labels_bb(bb);
  return gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
}

bool IsReturnsTwiceBlock(basic_block bb) {
  gimple* first = FirstStmt(bb);
  return first && is_gimple_call(first) &&
         (gimple_call_flags(first) & ECF_RETURNS_TWICE);
}

bool IsDispatcherBlock(basic_block bb) {
  gimple* first = FirstStmt(bb);
  return first && gimple_call_internal_p(first) &&
         gimple_call_internal_fn(first) == IFN_ABNORMAL_DISPATCHER;
}

bool IsForkCall(gimple* call) {
  if (gimple_call_builtin_p(call, BUILT_IN_FORK)) return true;
  tree fn = gimple_call_fndecl(call);
  if (fn == NULL_TREE || DECL_NAME(fn) == NULL_TREE) return false;
  const char* name = IDENTIFIER_POINTER(DECL_NAME(fn));
  return strcmp(name, "fork") == 0 || strcmp(name, "vfork") == 0 ||
         strcmp(name, "__fork") == 0 || strcmp(name, "_Fork") == 0;
}

const char* PathActionName(PathAction::Kind k) {
  switch (k) {
    case PathAction::kCheckFlag: return "re-entry check";
    case PathAction::kUndo: return "undo pre-count";
    case PathAction::kSetFlag: return "mark normal entry";
    case PathAction::kInit: return "r = a";
    case PathAction::kAdd: return "r += a";
    case PathAction::kCount: return "count[r + a]++";
    case PathAction::kCountReset: return "count[r + a]++; r = b";
    case PathAction::kStartCheckFlag: return "re-entry check at start";
    case PathAction::kStartCut: return "cut: count[r + a]++; r = b";
    case PathAction::kPreCount: return "pre-count[r + a]++ before call";
    case PathAction::kEndCountReset: return "count[r + a]++; r = 0 at end";
  }
  return "?";
}

// Plans Ball-Larus path profiling for cfun (CFG prepared, fake edges
// present): the DAG and its cuts, the increments on the chords of a
// maximum spanning tree (weights), the path table, and every piece of code.
void PlanPathProfiling(ballarus::Function* fn,
                       const std::vector<edge>& gcc_edges,
                       const std::vector<uint64_t>& weights,
                       uint64_t* next_counter, uint64_t* next_hash,
                       PathWork* work) {
  const uint32_t nb = static_cast<uint32_t>(fn->blocks.size());
  std::vector<basic_block> bbs(nb);
  for (uint32_t i = 0; i < nb; ++i) bbs[i] = BASIC_BLOCK_FOR_FN(cfun, i);
  std::vector<bool> returns_twice(nb, false), dispatcher(nb, false);
  std::vector<bool> may_cut(nb, false);
  for (uint32_t i = 2; i < nb; ++i) {
    if (bbs[i] == NULL) continue;
    returns_twice[i] = IsReturnsTwiceBlock(bbs[i]);
    dispatcher[i] = IsDispatcherBlock(bbs[i]);
    // A returns-twice call must stay first in its block.
    may_cut[i] = !returns_twice[i] && !dispatcher[i];
  }

  ballarus::PathPlan plan;
  std::string err;
  if (!ballarus::PlanPaths(*fn, may_cut, ballarus::kMaxInstrumentedPaths,
                           &plan, &err)) {
    internal_error("ballarus: path plan for %s: %s", fn->name.c_str(),
                   err.c_str());
  }
  ballarus::PathDag dag;
  if (!ballarus::BuildPathDag(*fn, plan.cuts, &dag, &err))
    internal_error("ballarus: path DAG for %s: %s", fn->name.c_str(),
                   err.c_str());
  ballarus::PathIncrements inc;
  if (!ballarus::PlaceIncrements(*fn, dag, weights, &inc, &err))
    internal_error("ballarus: path increments for %s: %s", fn->name.c_str(),
                   err.c_str());

  ballarus::PathInfo& info = work->info;
  info.n_paths = inc.n_paths;
  info.cut_edges = plan.cuts.edges;
  info.cut_blocks = plan.cuts.blocks;
  info.flags = g_options.early_termination
                   ? ballarus::kPathFlagEarlyTermination
                   : 0;
  if (inc.n_paths <= g_options.path_table_max) {
    info.storage = ballarus::PathInfo::kDense;
    info.base = *next_counter;
    *next_counter += inc.n_paths + 1;
  } else {
    info.storage = ballarus::PathInfo::kHashed;
    info.base = (*next_hash)++;
  }
  work->enabled = true;
  fn->extensions.push_back(
      {ballarus::kPathExtensionTag, ballarus::EncodePathInfo(info)});

  if (dump_file) {
    fprintf(dump_file, "  paths: %llu (%s %llu); %zu cut edges, %zu cut "
            "blocks; early termination %s\n",
            (unsigned long long)inc.n_paths,
            info.storage == ballarus::PathInfo::kDense ? "dense from counter"
                                                       : "runtime hash table",
            (unsigned long long)info.base, info.cut_edges.size(),
            info.cut_blocks.size(),
            g_options.early_termination ? "counted" : "off");
    for (uint32_t i : info.cut_edges)
      fprintf(dump_file, "  back edge %u->%u cut\n", fn->edges[i].src,
              fn->edges[i].dst);
    for (uint32_t b : info.cut_blocks)
      fprintf(dump_file, "  block %u cut (too many paths through it)\n", b);
  }

  auto on_edge = [&](edge e, PathAction::Kind k, uint64_t a, uint64_t b) {
    work->on_edges.push_back({e, {k, a, b}});
  };
  auto in_block = [&](uint32_t bi, PathAction::Kind k, uint64_t a,
                      uint64_t b) {
    work->in_blocks.push_back({bbs[bi], {k, a, b}});
  };

  // Blocks whose path ends because they leave by abnormal edges only
  // (computed goto): their targets need no re-entry check.
  std::vector<bool> end_reset(nb, false);

  // Fake edges into EXIT: a call that may not return (early termination)
  // or a block left by abnormal edges only.
  for (size_t i = 0; i < fn->edges.size(); ++i) {
    const ballarus::Edge& me = fn->edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.dst != ballarus::kExitBlock ||
        dag.dag_edge_of_cfg[i] < 0)
      continue;
    const uint32_t u = me.src;
    if (returns_twice[u] || dispatcher[u] || bbs[u] == NULL) continue;
    const uint64_t a = inc.inc[dag.dag_edge_of_cfg[i]];
    basic_block bb = bbs[u];
    gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
    gimple* last = gsi_end_p(gsi) ? NULL : gsi_stmt(gsi);
    std::vector<edge> normal;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs)
      if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
        normal.push_back(e);
    if ((last == NULL || !is_gimple_call(last)) && normal.empty()) {
      in_block(u, PathAction::kEndCountReset, a, 0);
      end_reset[u] = true;
      continue;
    }
    if (!g_options.early_termination) continue;
    // fork() returns twice, in two processes; the child's counts restart
    // at zero (runtime), so a pre-count before fork would be undone in the
    // child without having been counted there.  fork never ends the caller.
    if (last && is_gimple_call(last) && IsForkCall(last)) continue;
    in_block(u, PathAction::kPreCount, a, 0);
    for (edge n : normal) on_edge(n, PathAction::kUndo, a, 0);
  }

  // Fake edges out of ENTRY: abnormal re-entries (setjmp receivers,
  // nonlocal labels, computed-goto targets).  The path starts afresh with
  // r = Inc(ENTRY->w) = 0 (fake ENTRY edges are tree edges).
  for (size_t i = 0; i < fn->edges.size(); ++i) {
    const ballarus::Edge& me = fn->edges[i];
    if (!(me.flags & ballarus::kEdgeFake) || me.src != ballarus::kEntryBlock ||
        dag.dag_edge_of_cfg[i] < 0)
      continue;
    const uint32_t w = me.dst;
    if (dispatcher[w] || bbs[w] == NULL) continue;
    const uint64_t a = inc.inc[dag.dag_edge_of_cfg[i]];
    bool all_sources_reset = true;
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds)
      if ((e->flags & (EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)) &&
          !(e->src->index >= 0 && (uint32_t)e->src->index < nb &&
            end_reset[e->src->index]))
        all_sources_reset = false;
    if (all_sources_reset && a == 0) continue;
    work->uses_flag = true;
    FOR_EACH_EDGE(e, ei, bbs[w]->preds)
      if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
        on_edge(e, PathAction::kSetFlag, 0, 0);
    if (returns_twice[w]) {
      // The call returns a second time at its end: check on its way out.
      FOR_EACH_EDGE(e, ei, bbs[w]->succs)
        if (!(e->flags & (EDGE_FAKE | EDGE_ABNORMAL | EDGE_ABNORMAL_CALL)))
          on_edge(e, PathAction::kCheckFlag, a, 0);
    } else {
      in_block(w, PathAction::kStartCheckFlag, a, 0);
    }
  }

  // The DAG's real edges and the cuts.
  for (size_t d = 0; d < dag.edges.size(); ++d) {
    const ballarus::DagEdge& de = dag.edges[d];
    if (de.kind == ballarus::DagEdge::kCfg) {
      const ballarus::Edge& me = fn->edges[de.ref];
      if (me.flags & ballarus::kEdgeFake) continue;
      edge e = gcc_edges[de.ref];
      if (me.src == ballarus::kEntryBlock)
        on_edge(e, PathAction::kInit, inc.inc[d], 0);
      else if (me.dst == ballarus::kExitBlock)
        on_edge(e, PathAction::kCount, inc.inc[d], 0);
      else if (inc.inc[d] != 0)
        on_edge(e, PathAction::kAdd, inc.inc[d], 0);
    } else if (de.kind == ballarus::DagEdge::kBackEnd) {
      const ballarus::Edge& me = fn->edges[de.ref];
      on_edge(gcc_edges[de.ref], PathAction::kCountReset, inc.inc[d],
              inc.inc[dag.start_edge[me.dst]]);
    } else if (de.kind == ballarus::DagEdge::kCutEnd) {
      in_block(de.ref, PathAction::kStartCut, inc.inc[d],
               inc.inc[dag.start_edge[de.ref]]);
    }
  }
  // Per edge, the actions in Kind order (stable: planning order within).
  std::stable_sort(work->on_edges.begin(), work->on_edges.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  std::stable_sort(work->in_blocks.begin(), work->in_blocks.end(),
                   [](const auto& x, const auto& y) {
                     return x.second.kind < y.second.kind;
                   });
  if (dump_file) {
    for (const auto& [e, act] : work->on_edges)
      fprintf(dump_file, "  path: edge %d->%d: %s (a=%llu, b=%llu)\n",
              e->src->index, e->dest->index, PathActionName(act.kind),
              (unsigned long long)act.a, (unsigned long long)act.b);
    for (const auto& [bb, act] : work->in_blocks)
      fprintf(dump_file, "  path: block %d: %s (a=%llu, b=%llu)\n",
              bb->index, PathActionName(act.kind), (unsigned long long)act.a,
              (unsigned long long)act.b);
  }
}

// Analyses cfun: prepares the CFG, fills `fn`, chooses counters.
void AnalyseFunction(ballarus::Function* fn, FileTable* files,
                     uint64_t tu_identity, uint64_t* next_counter,
                     uint64_t* next_hash, FunctionWork* work) {
  tree decl = current_function_decl;
  if (execute_fixup_cfg() & TODO_cleanup_cfg) cleanup_tree_cfg();
  PrepareCfgLikeGcov();

  const char* asm_name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(decl));
  fn->name = asm_name;
  fn->demangled = Demangle(asm_name);
  expanded_location start = expand_location(DECL_SOURCE_LOCATION(decl));
  expanded_location end = expand_location(cfun->function_end_locus);
  fn->file = files->Intern(start.file);
  fn->line = start.line;
  fn->end_line =
      (end.file && start.file && strcmp(end.file, start.file) == 0 &&
       end.line >= start.line)
          ? end.line
          : start.line;
  fn->cfg_checksum = coverage_compute_cfg_checksum(cfun);
  fn->lineno_checksum = coverage_compute_lineno_checksum();
  if (DECL_COMDAT(decl) || DECL_ONE_ONLY(decl) || DECL_WEAK(decl))
    fn->flags |= ballarus::kFunctionComdat;
  if (DECL_ARTIFICIAL(decl)) fn->flags |= ballarus::kFunctionArtificial;

  fn->blocks.resize(n_basic_blocks_for_fn(cfun));
  RecordLines(fn, files);

  if (dump_file)
    fprintf(dump_file,
            "ballarus: function %s (%s:%d): %d blocks, cfg checksum %u\n",
            fn->demangled.c_str(), start.file ? start.file : "?", start.line,
            n_basic_blocks_for_fn(cfun), fn->cfg_checksum);

  std::vector<edge> gcc_edges;  // parallel to fn->edges
  basic_block bb;
  FOR_BB_BETWEEN(bb, ENTRY_BLOCK_PTR_FOR_FN(cfun), NULL, next_bb) {
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) {
      ballarus::Edge me;
      me.src = e->src->index;
      me.dst = e->dest->index;
      me.flags = ModelEdgeFlags(e);
      fn->edges.push_back(me);
      gcc_edges.push_back(e);
    }
  }

  // Like branch_prob(): an edge without a counter that would close a cycle
  // of such edges (setjmp receivers, abnormal dispatchers) is dropped, so
  // that every remaining count is derivable.
  for (size_t i : ballarus::IgnoreUncountableCycles(fn))
    if (dump_file)
      fprintf(dump_file,
              "  edge %u->%u dropped: it closes a cycle of edges that cannot "
              "hold counters (gcov drops it too); count unknown\n",
              fn->edges[i].src, fn->edges[i].dst);

  std::vector<bool> counted(fn->edges.size(), false);
  std::vector<uint64_t> weights;
  if (g_options.mode == Mode::kEdge || g_options.paths)
    weights = EdgeWeights(*fn, gcc_edges, tu_identity);
  if (g_options.mode == Mode::kNone) {
    // Path mode alone: no edge counters.
  } else if (g_options.mode == Mode::kNaive) {
    for (size_t i = 0; i < fn->edges.size(); ++i)
      counted[i] = CanHoldCounter(fn->edges[i].flags);
  } else {
    ballarus::SpanningTree tree = ballarus::MaximumSpanningTree(*fn, weights);
    for (size_t i : tree.chords) counted[i] = true;
    if (dump_file) {
      fprintf(dump_file,
              "  maximum spanning tree: %zu chords get counters "
              "(|E|-|V|+1 with the virtual EXIT->ENTRY edge)\n",
              tree.chords.size());
      for (size_t i = 0; i < fn->edges.size(); ++i)
        if (tree.in_tree[i])
          fprintf(dump_file, "  edge %u->%u on tree (weight %llu)\n",
                  fn->edges[i].src, fn->edges[i].dst,
                  (unsigned long long)weights[i]);
    }
    for (size_t i : tree.uncountable_chords) {
      // Only when fake/EH/abnormal edges alone close a cycle (gcov drops
      // such a fake edge).  Its count stays unknown; verify reports it.
      if (dump_file)
        fprintf(dump_file,
                "  edge %u->%u is a chord but cannot hold a counter: its "
                "count is not derivable\n",
                fn->edges[i].src, fn->edges[i].dst);
    }
  }

  for (size_t i = 0; i < fn->edges.size(); ++i) {
    ballarus::Edge& me = fn->edges[i];
    if (counted[i]) {
      me.counter = static_cast<int64_t>(*next_counter);
      work->counted.emplace_back(gcc_edges[i], *next_counter);
      work->counted_model_edge.push_back(i);
      ++*next_counter;
    } else if (dump_file && !CanHoldCounter(me.flags)) {
      const char* why = (me.flags & ballarus::kEdgeIgnored)
                            ? "abnormal, replaced by fake edges; count unknown"
                        : (me.flags & ballarus::kEdgeFake)
                            ? "fake; derived by flow conservation"
                            : "abnormal; derived by flow conservation";
      fprintf(dump_file, "  edge %d->%d no counter (%s)\n", me.src, me.dst,
              why);
    }
  }
  if (g_options.paths)
    PlanPathProfiling(fn, gcc_edges, weights, next_counter, next_hash,
                      &work->path);
  // The fake edges have served: gcov removes them before instrumenting too.
  remove_fake_edges();
}

// Appends `ref += delta` to seq: a load, an add and a store, or with
// update=atomic one relaxed __atomic_fetch_add_8.  ref is an element of a
// counter array (constant or SSA index).
void AppendCounterAdd(gimple_seq* seq, tree ref, tree delta, bool atomic) {
  tree u64 = TREE_TYPE(ref);
  if (atomic) {
    tree addr = build_fold_addr_expr(ref);
    if (!is_gimple_min_invariant(addr)) {  // variable index: via an SSA name
      tree p = make_temp_ssa_name(TREE_TYPE(addr), NULL, "BLRS_p");
      gimple_seq_add_stmt(seq, gimple_build_assign(p, addr));
      addr = p;
    }
    tree f = builtin_decl_explicit(BUILT_IN_ATOMIC_FETCH_ADD_8);
    gimple_seq_add_stmt(
        seq, gimple_build_call(f, 3, addr, delta,
                               build_int_cst(integer_type_node,
                                             MEMMODEL_RELAXED)));
    return;
  }
  tree t1 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t1, ref));
  tree t2 = make_temp_ssa_name(u64, NULL, "BLRS_ctr");
  gimple_seq_add_stmt(seq, gimple_build_assign(t2, PLUS_EXPR, t1, delta));
  gimple_seq_add_stmt(seq, gimple_build_assign(unshare_expr(ref), t2));
}

// Builds `counters[index] += 1` on edge E, queued with gsi_insert_on_edge.
void QueueIncrement(edge e, tree counters, uint64_t index, bool atomic) {
  tree u64 = TREE_TYPE(TREE_TYPE(counters));
  tree ref = build4(ARRAY_REF, u64, counters,
                    build_int_cst(integer_type_node, index), NULL_TREE,
                    NULL_TREE);
  gimple_seq seq = NULL;
  AppendCounterAdd(&seq, ref, build_int_cst(u64, 1), atomic);
  gsi_insert_seq_on_edge(e, seq);
}

// Emits the path-register code of one function (see PathAction).
class PathEmitter {
 public:
  PathEmitter(const ballarus::PathInfo& info, tree counters, tree hashes,
              tree add_fn, tree flag, bool atomic)
      : info_(info),
        counters_(counters),
        hashes_(hashes),
        add_fn_(add_fn),
        atomic_(atomic),
        u64_(long_long_unsigned_type_node),
        flag_(flag) {
    // The register lives in memory until update-address-taken (at -O1 and
    // up) turns it into an SSA register: no PHIs to build here.
    r_ = create_tmp_var(u64_, "BLRS_path");
    TREE_ADDRESSABLE(r_) = 1;
  }

  void Emit(const PathAction& act, gimple_seq* seq) {
    switch (act.kind) {
      case PathAction::kCheckFlag:
      case PathAction::kStartCheckFlag:
        CheckFlag(seq, act.a);
        break;
      case PathAction::kUndo:
        Count(seq, act.a, /*undo=*/true);
        break;
      case PathAction::kSetFlag:
        Add(seq, gimple_build_assign(Flag(), build_int_cst(FlagType(), 1)));
        break;
      case PathAction::kInit:
        Add(seq, gimple_build_assign(r_, build_int_cst(u64_, act.a)));
        break;
      case PathAction::kAdd: {
        tree v = Plus(seq, LoadR(seq), act.a);
        Add(seq, gimple_build_assign(r_, v));
        break;
      }
      case PathAction::kCount:
      case PathAction::kPreCount:
        Count(seq, act.a, false);
        break;
      case PathAction::kCountReset:
      case PathAction::kStartCut:
        Count(seq, act.a, false);
        Add(seq, gimple_build_assign(r_, build_int_cst(u64_, act.b)));
        break;
      case PathAction::kEndCountReset:
        Count(seq, act.a, false);
        Add(seq, gimple_build_assign(r_, build_int_cst(u64_, 0)));
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

  tree LoadR(gimple_seq* seq) {
    tree t = make_temp_ssa_name(u64_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(t, r_));
    return t;
  }

  tree Plus(gimple_seq* seq, tree v, uint64_t c) {
    if (c == 0) return v;
    tree t = make_temp_ssa_name(u64_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(t, PLUS_EXPR, v,
                                 wide_int_to_tree(u64_, wi::uhwi(c, 64))));
    return t;
  }

  void CheckFlag(gimple_seq* seq, uint64_t reentry) {
    tree t = make_temp_ssa_name(unsigned_char_type_node, NULL, "BLRS_f");
    Add(seq, gimple_build_assign(t, Flag()));
    tree c = make_temp_ssa_name(boolean_type_node, NULL, "BLRS_f");
    Add(seq, gimple_build_assign(c, NE_EXPR, t,
                                 build_int_cst(unsigned_char_type_node, 0)));
    tree r0 = LoadR(seq);
    tree r1 = make_temp_ssa_name(u64_, NULL, "BLRS_r");
    Add(seq, gimple_build_assign(r1, COND_EXPR, c, r0,
                                 wide_int_to_tree(u64_, wi::uhwi(reentry, 64))));
    Add(seq, gimple_build_assign(r_, r1));
    Add(seq, gimple_build_assign(Flag(), build_int_cst(FlagType(), 0)));
  }

  // count[r + c] += 1 (or -= 1).
  void Count(gimple_seq* seq, uint64_t c, bool undo) {
    tree key = Plus(seq, LoadR(seq), c);
    tree delta = wide_int_to_tree(u64_, wi::uhwi(undo ? ~0ull : 1ull, 64));
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
    AppendCounterAdd(seq, ref, delta, atomic_);
  }

  const ballarus::PathInfo& info_;
  tree counters_;
  tree hashes_;
  tree add_fn_;
  bool atomic_;
  tree u64_;
  tree r_ = NULL_TREE;
  tree flag_;
};

// The TU's "arrived" flag for abnormal re-entries: a thread-local volatile
// byte.  A normal entry into a re-entry block sets it and the check right
// after (past setjmp's first return, or at the block's start) clears it,
// so it is clear whenever a longjmp lands.  Per thread (not per
// activation: a local would be kept in a register across setjmp by GCC's
// RTL passes) is enough, because nothing runs between a set and its check
// but the returns_twice call itself.
tree MakeArrivedFlag() {
  tree type = build_qualified_type(unsigned_char_type_node,
                                   TYPE_QUAL_VOLATILE);
  tree flag = build_decl(BUILTINS_LOCATION, VAR_DECL,
                         get_identifier("__ballarus_arrived"), type);
  TREE_STATIC(flag) = 1;
  TREE_PUBLIC(flag) = 0;
  TREE_THIS_VOLATILE(flag) = 1;
  TREE_USED(flag) = 1;
  TREE_ADDRESSABLE(flag) = 1;
  DECL_ARTIFICIAL(flag) = 1;
  DECL_IGNORED_P(flag) = 1;
  set_decl_tls_model(flag, decl_default_tls_model(flag));
  varpool_node::finalize_decl(flag);
  return flag;
}

// Inserts `seq` into bb for a block action: at its start (after labels and
// a __builtin_setjmp_receiver) or before its last statement.
void InsertInBlock(basic_block bb, const PathAction& act, gimple_seq seq) {
  if (act.kind == PathAction::kStartCheckFlag ||
      act.kind == PathAction::kStartCut) {
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

tree MakeStaticVar(const char* name, tree type) {
  tree var = build_decl(BUILTINS_LOCATION, VAR_DECL, get_identifier(name), type);
  TREE_STATIC(var) = 1;
  TREE_PUBLIC(var) = 0;
  DECL_ARTIFICIAL(var) = 1;
  DECL_IGNORED_P(var) = 1;
  TREE_USED(var) = 1;
  TREE_ADDRESSABLE(var) = 1;
  DECL_CONTEXT(var) = NULL_TREE;
  return var;
}

std::string GetCwd() {
  const char* pwd = getpwd();
  return pwd ? pwd : "";
}

unsigned int ExecuteBallarus() {
  const bool atomic = UseAtomic();
  ballarus::TranslationUnit tu;
  tu.source = main_input_filename ? main_input_filename : "";
  tu.cwd = GetCwd();
  ballarus_plugin::SetProfileLocation(&tu);
  tu.compiler = std::string("gcc ") + version_string;
  tu.flags = (g_options.mode == Mode::kNaive  ? BALLARUS_META_F_NAIVE
              : g_options.mode == Mode::kEdge ? BALLARUS_META_F_EDGE
                                              : 0u) |
             (g_options.paths ? BALLARUS_META_F_PATH : 0u) |
             (atomic ? BALLARUS_META_F_ATOMIC : 0u);
  FileTable files(&tu.files);

  if (dump_file)
    fprintf(dump_file, "ballarus: mode %s%s, update %s\n",
            g_options.mode == Mode::kNaive  ? "naive"
            : g_options.mode == Mode::kEdge ? "edge"
                                            : "",
            g_options.paths ? (g_options.mode == Mode::kNone ? "path" : ",path")
                            : "",
            atomic ? "atomic" : "single");

  // Phase 1: analyse every function; choose counters.
  std::vector<FunctionWork> work;
  uint64_t n_counters = 0;
  uint64_t n_hashes = 0;  // functions with hashed path tables
  const uint64_t tu_identity = ballarus::TuIdentity(tu);
  cgraph_node* node;
  FOR_EACH_DEFINED_FUNCTION(node) {
    if (!ShouldInstrument(node)) continue;
    push_cfun(DECL_STRUCT_FUNCTION(node->decl));
    FunctionWork w;
    w.node = node;
    w.model_index = tu.functions.size();
    tu.functions.emplace_back();
    AnalyseFunction(&tu.functions.back(), &files, tu_identity, &n_counters,
                    &n_hashes, &w);
    work.push_back(std::move(w));
    free_dominance_info(CDI_DOMINATORS);
    free_dominance_info(CDI_POST_DOMINATORS);
    pop_cfun();
  }
  if (work.empty()) return 0;
  tu.n_counters = n_counters;

  // The TU's counter array: static uint64_t __ballarus_counters[N].
  tree u64 = long_long_unsigned_type_node;
  tree ctr_type = build_array_type_nelts(u64, n_counters);
  tree counters = MakeStaticVar("__ballarus_counters", ctr_type);
  DECL_NONALIASED(counters) = 1;
  SET_DECL_ALIGN(counters, MAX(TYPE_ALIGN(u64), 64u * BITS_PER_UNIT / 8));
  varpool_node::finalize_decl(counters);

  // Hashed path tables: static uint64_t __ballarus_path_hashes[2 * K],
  // pairs {function index, runtime table pointer} (ballarus_path_hash).
  tree hashes = NULL_TREE, add_fn = NULL_TREE;
  if (n_hashes > 0) {
    tree htype = build_array_type_nelts(u64, 2 * n_hashes);
    hashes = MakeStaticVar("__ballarus_path_hashes", htype);
    vec<constructor_elt, va_gc>* helts = NULL;
    for (const FunctionWork& w : work)
      if (w.path.enabled &&
          w.path.info.storage == ballarus::PathInfo::kHashed)
        CONSTRUCTOR_APPEND_ELT(helts, size_int(2 * w.path.info.base),
                               build_int_cst(u64, w.model_index));
    DECL_INITIAL(hashes) = build_constructor(htype, helts);
    SET_DECL_ALIGN(hashes, 16 * BITS_PER_UNIT);
    varpool_node::finalize_decl(hashes);
    tree fntype = build_function_type_list(void_type_node, ptr_type_node, u64,
                                           u64, NULL_TREE);
    add_fn = build_fn_decl("__ballarus_path_add", fntype);
    DECL_EXTERNAL(add_fn) = 1;
    TREE_PUBLIC(add_fn) = 1;
    DECL_ARTIFICIAL(add_fn) = 1;
    TREE_NOTHROW(add_fn) = 1;
    DECL_VISIBILITY(add_fn) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(add_fn) = 1;
    DECL_ATTRIBUTES(add_fn) =
        tree_cons(get_identifier("leaf"), NULL_TREE, NULL_TREE);
  }

  tree arrived = NULL_TREE;
  for (const FunctionWork& w : work)
    if (w.path.uses_flag && arrived == NULL_TREE) arrived = MakeArrivedFlag();

  // Phase 2: instrument.  One commit per function; an edge is split only
  // where neither end can hold its code.
  for (FunctionWork& w : work) {
    push_cfun(DECL_STRUCT_FUNCTION(w.node->decl));
    ballarus::Function& fn = tu.functions[w.model_index];
    if (dump_file)
      fprintf(dump_file, "ballarus: function %s: %zu counters\n",
              fn.demangled.c_str(), w.counted.size());
    if (w.path.enabled) {
      PathEmitter emit(w.path.info, counters, hashes, add_fn, arrived,
                       atomic);
      for (const auto& [bb, act] : w.path.in_blocks) {
        gimple_seq seq = NULL;
        emit.Emit(act, &seq);
        InsertInBlock(bb, act, seq);
      }
      for (const auto& [e, act] : w.path.on_edges) {
        gimple_seq seq = NULL;
        emit.Emit(act, &seq);
        gsi_insert_seq_on_edge(e, seq);
      }
    }
    for (auto& ec : w.counted) QueueIncrement(ec.first, counters, ec.second,
                                              atomic);
    for (size_t i = 0; i < w.counted.size(); ++i) {
      edge e = w.counted[i].first;
      int src = e->src->index, dst = e->dest->index;
      // Where gimple_find_edge_insert_loc will put the code, for the dump.
      const char* where =
          (single_pred_p(e->dest) && gimple_seq_empty_p(phi_nodes(e->dest)) &&
           e->dest != EXIT_BLOCK_PTR_FOR_FN(cfun))
              ? "in target block"
              : "in source block";
      basic_block new_bb = NULL;
      gsi_commit_one_edge_insert(e, &new_bb);
      ballarus::Edge& me = fn.edges[w.counted_model_edge[i]];
      if (new_bb) {
        me.flags |= ballarus::kEdgeSplit;
        where = "edge split";
      }
      if (dump_file)
        fprintf(dump_file, "  edge %d->%d counter #%llu (%s)\n", src, dst,
                (unsigned long long)w.counted[i].second, where);
    }
    gsi_commit_edge_inserts();
    pop_cfun();
  }

  // Instrumented functions write memory now: they are no longer const/pure
  // (as tree_profiling does for gcov), and their call statements and the
  // call graph need refreshing.
  for (FunctionWork& w : work) {
    w.node->set_const_flag(false, false);
    w.node->set_pure_flag(false, false);
  }
  for (FunctionWork& w : work) {
    push_cfun(DECL_STRUCT_FUNCTION(w.node->decl));
    basic_block bb;
    FOR_EACH_BB_FN(bb, cfun) {
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);
           gsi_next(&gsi)) {
        gimple* stmt = gsi_stmt(gsi);
        if (is_gimple_call(stmt)) update_stmt(stmt);
      }
    }
    cleanup_tree_cfg();
    mark_virtual_operands_for_renaming(cfun);
    update_ssa(TODO_update_ssa);
    cgraph_edge::rebuild_edges();
    pop_cfun();
  }

  // The metadata blob and the descriptor the runtime walks.
  std::vector<uint8_t> blob = ballarus::EncodeMetadata(tu);
  tree byte_type = build_qualified_type(unsigned_char_type_node,
                                        TYPE_QUAL_CONST);
  tree blob_type = build_array_type_nelts(byte_type, blob.size());
  tree meta = MakeStaticVar("__ballarus_metadata", blob_type);
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
  tree desc = MakeStaticVar("__ballarus_tu_desc", desc_type);
  DECL_INITIAL(desc) = build_constructor(desc_type, elts);
  TREE_CONSTANT(DECL_INITIAL(desc)) = 1;
  TREE_STATIC(DECL_INITIAL(desc)) = 1;
  DECL_PRESERVE_P(desc) = 1;
  SET_DECL_ALIGN(desc, TYPE_ALIGN(ptr_type_node));
  DECL_USER_ALIGN(desc) = 1;
  set_decl_section_name(desc, BALLARUS_TU_SECTION);
  varpool_node::finalize_decl(desc);

  if (dump_file)
    fprintf(dump_file,
            "ballarus: %zu functions, %llu counters, metadata %zu bytes\n",
            tu.functions.size(), (unsigned long long)n_counters, blob.size());
  return 0;
}

const pass_data kPassData = {
    SIMPLE_IPA_PASS,  // type
    "ballarus",       // name: -fdump-ipa-ballarus
    OPTGROUP_NONE,    // optinfo_flags
    TV_NONE,          // tv_id
    0,                // properties_required
    0,                // properties_provided
    0,                // properties_destroyed
    0,                // todo_flags_start
    0,                // todo_flags_finish
};

class ballarus_pass : public simple_ipa_opt_pass {
 public:
  explicit ballarus_pass(gcc::context* ctxt)
      : simple_ipa_opt_pass(kPassData, ctxt) {}
  bool gate(function*) override { return !seen_error() && !in_lto_p; }
  unsigned int execute(function*) override { return ExecuteBallarus(); }
};

simple_ipa_opt_pass* make_ballarus_pass(gcc::context* ctxt) {
  return new ballarus_pass(ctxt);
}

}  // namespace

int plugin_init(plugin_name_args* info, plugin_gcc_version* version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("ballarus: built for GCC %s, but this is GCC %s",
          gcc_version.basever, version->basever);
    return 1;
  }
  static plugin_info pinfo = {kPluginVersion, kHelp};
  register_callback(info->base_name, PLUGIN_INFO, NULL, &pinfo);
  if (!ParseOptions(info)) return 1;
  if (g_options.weights == WeightKind::kProfile) {
    std::string err;
    if (!g_profile_weights.Load(g_options.profile_path, &err)) {
      error("ballarus: %<-fplugin-arg-ballarus-weights=profile=%s%>: %s",
            g_options.profile_path.c_str(), err.c_str());
      return 1;
    }
  }

  // Why here: right after GCC's own "profile" pass (tree-profile.cc), the
  // point where -fprofile-arcs instruments — after early inlining and local
  // cleanups, before the IPA optimisations — so a ballarus CFG is gcov's CFG
  // for the same compile and counts compare edge by edge.
  register_pass_info pass_info;
  pass_info.pass = make_ballarus_pass(g);
  pass_info.reference_pass_name = "profile";
  pass_info.ref_pass_instance_number = 1;
  pass_info.pos_op = PASS_POS_INSERT_AFTER;
  register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL,
                    &pass_info);
  // The pass manager already exists when plugins initialise, so the pass is
  // registered by now and its dump can be switched on by name.
  if (g_options.dump) g->get_dumps()->dump_switch_p("ipa-ballarus");
  return 0;
}
