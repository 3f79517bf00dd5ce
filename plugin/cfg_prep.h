// cfg_prep.h — makes a function's CFG gcov's CFG and records it in core's
// model (core/model.h).  See cfg_prep.cc.
#ifndef BALLARUS_PLUGIN_CFG_PREP_H_
#define BALLARUS_PLUGIN_CFG_PREP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/reentry.h"

namespace ballarus::plugin {

// A source name as GCC writes it into the .gcno (gcov-io.cc
// gcov_write_filename): with -fprofile-abs-path, a relative name gets the
// working directory and '/' in front.
std::string GcnoFileName(const char* name);

// Interns file names in first-seen order (deterministic for a given source).
class FileTable {
 public:
  explicit FileTable(std::vector<std::string>* files) : files_(files) {}
  uint32_t Intern(const char* name) {
    std::string s = GcnoFileName(name);
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

// Whether -fprofile-filter-files / -fprofile-exclude-files let gcov profile
// the functions of source file `file` (tree-profile.cc,
// include_source_file_for_profile).
bool ProfiledSourceFile(const char* file);

// Whether node's body is instrumented: what gcov would instrument (thunks
// once GcovExpandThunks has expanded them, gcov_arcs.h).
bool ShouldInstrument(cgraph_node* node);

// Prepares cfun's CFG as branch_prob() does for gcov and records it in fn:
// names, source range, checksums, each block's lines, every edge (in gcov's
// arc order) with its flags, and the edges gcov drops (kEdgeIgnored).
// gcc_edges receives GCC's edge for each of fn->edges (NULL for ballarus'
// own re-entry edges, reentry.h, whose calls go to `reentry`).  Returns
// with the fake edges still in place; the caller removes them
// (remove_fake_edges) once it has planned the instrumentation.
void PrepareAndRecordFunction(ballarus::Function* fn, FileTable* files,
                              const ReentryCallees& callees,
                              std::vector<edge>* gcc_edges,
                              std::vector<ReentryCall>* reentry);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_CFG_PREP_H_
