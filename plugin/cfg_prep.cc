// cfg_prep.cc — makes each function's CFG gcov's CFG and records it in the
// GCC-free model (core/model.h): GCC's profile.cc, branch_prob(), up to the
// point where it numbers blocks and writes the .gcno.
//
// The pass (pass.cc) runs right after GCC's own "profile" pass — the point
// where -fprofile-arcs instruments — so its CFGs are gcov's CFGs: per
// function it prepares the CFG exactly as GCC's branch_prob() does
// (profile.cc: fake edges for calls that may not return, goto-locus edge
// splits, fake ENTRY/EXIT edges standing in for abnormal edges,
// compact_blocks), records the graph in the GCC-free model (core/model.h),
// then places counters.  Block i and the j-th successor edge of block i
// therefore mean the same thing in ballarus' metadata and in gcov's .gcno,
// which is what lets the tests compare counts edge by edge.  Source lines
// are recorded per block as the .gcno lists them, so line counts follow
// gcov's rules too (core/gcov_lines.h).

#include <cxxabi.h>

#include <regex.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/spanning_tree.h"
#include "plugin/gcov_arcs.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/cfg_prep.h"

namespace ballarus::plugin {

std::string GcnoFileName(const char* name) {
  std::string s = name ? name : "";
  if (profile_abs_path_flag && !s.empty() && s[0] != '/')
    return std::string(getpwd()) + "/" + s;
  return s;
}

namespace {

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
  ballarus::GcovCaptureEdgeKeys();  // branch_prob sorts before renumbering
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

}  // namespace

namespace {

// -fprofile-filter-files / -fprofile-exclude-files: ';'-separated extended
// regular expressions on a function's source file, as gcov's
// (tree-profile.cc, include_source_file_for_profile): excluded if it
// matches an exclusion; with filters, included only if it matches one.
class FileFilter {
 public:
  FileFilter() {
    Parse(flag_profile_exclude_files, "-fprofile-exclude-files", &exclude_);
    Parse(flag_profile_filter_files, "-fprofile-filter-files", &filter_);
  }
  ~FileFilter() {
    for (regex_t& r : exclude_) regfree(&r);
    for (regex_t& r : filter_) regfree(&r);
  }
  bool Includes(const char* file) const {
    if (file == NULL) file = "";
    for (const regex_t& r : exclude_)
      if (regexec(&r, file, 0, NULL, 0) == 0) return false;
    if (!has_filter_) return true;
    for (const regex_t& r : filter_)
      if (regexec(&r, file, 0, NULL, 0) == 0) return true;
    return false;
  }

 private:
  void Parse(const char* list, const char* option, std::vector<regex_t>* out) {
    if (list == NULL) return;
    if (out == &filter_) has_filter_ = true;
    std::string s = list;
    size_t at = 0;
    while (at <= s.size()) {
      size_t end = s.find(';', at);
      if (end == std::string::npos) end = s.size();
      const std::string re = s.substr(at, end - at);
      at = end + 1;
      if (re.empty()) continue;
      regex_t r;
      if (regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
        error("invalid regular expression %qs in %qs", re.c_str(), option);
        continue;
      }
      out->push_back(r);
    }
  }
  std::vector<regex_t> exclude_, filter_;
  bool has_filter_ = false;
};

}  // namespace

bool ProfiledSourceFile(const char* file) {
  static const FileFilter* const filter = new FileFilter();
  return filter->Includes(file);
}

namespace {

bool InstrumentableDecl(tree decl) {
  if (DECL_SOURCE_LOCATION(decl) == BUILTINS_LOCATION) return false;
  if (lookup_attribute("no_profile_instrument_function",
                       DECL_ATTRIBUTES(decl)))
    return false;
  // Extern inline bodies are never emitted, but -fprofile-arcs counts them
  // (unless -ftest-coverage) and -fprofile-use reads their counts: they
  // are instrumented for the .gcda and left out of reports, as gcov's
  // -ftest-coverage leaves them out (core/gcov_arcs.h).
  if (DECL_EXTERNAL(decl) && flag_test_coverage) return false;
  if (!ProfiledSourceFile(LOCATION_FILE(DECL_SOURCE_LOCATION(decl))))
    return false;
  return true;
}

}  // namespace

bool ShouldInstrument(cgraph_node* node) {
  tree decl = node->decl;
  if (!gimple_has_body_p(decl)) return false;
  if (node->thunk) return false;  // not expanded (variadic)
  return InstrumentableDecl(decl);
}


void PrepareAndRecordFunction(ballarus::Function* fn, FileTable* files,
                              const ReentryCallees& callees,
                              std::vector<edge>* gcc_edges,
                              std::vector<ReentryCall>* reentry) {
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
  // gcov's notion (coverage.cc, coverage_begin_function): compiler-made,
  // but not a function version (target_clones) nor a lambda's operator(),
  // which GCC marks DECL_ARTIFICIAL although it is the user's code.  gcov
  // leaves artificial functions out of its line counts.
  if (DECL_ARTIFICIAL(decl) && !DECL_FUNCTION_VERSIONED(decl) &&
      !DECL_LAMBDA_FUNCTION_P(decl))
    fn->flags |= ballarus::kFunctionArtificial;

  fn->blocks.resize(n_basic_blocks_for_fn(cfun));
  RecordLines(fn, files);

  if (dump_file)
    fprintf(dump_file,
            "ballarus: function %s (%s:%d): %d blocks, cfg checksum %u\n",
            fn->demangled.c_str(), start.file ? start.file : "?", start.line,
            n_basic_blocks_for_fn(cfun), fn->cfg_checksum);

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
      gcc_edges->push_back(e);
    }
  }
  // Re-entries gcov's graph does not show (reentry.cc), before anything
  // numbers the edges.
  AddReentryEdges(fn, gcc_edges, callees, reentry);
  ballarus::GcovRecordFunction(fn, *gcc_edges);  // for -fprofile-use

  // Like branch_prob(): an edge without a counter that would close a cycle
  // of such edges (setjmp receivers, abnormal dispatchers) is dropped, so
  // that every remaining count is derivable.

  for (size_t i : ballarus::IgnoreUncountableCycles(fn))
    if (dump_file)
      fprintf(dump_file,
              "  edge %u->%u dropped: it closes a cycle of edges that cannot "
              "hold counters (gcov drops it too); count unknown\n",
              fn->edges[i].src, fn->edges[i].dst);
}

}  // namespace ballarus::plugin
