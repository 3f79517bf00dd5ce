// report_filter.h — which source files and functions a report shows.
//
// By default a report shows the files of the project: those under a
// project root of some translation unit — the version-control root (the
// nearest ancestor holding .git, .hg, .svn or .bzr) of its compile
// directory, else the compile directory itself, and likewise for the
// directory of its main source file (so out-of-tree builds keep their
// sources).  System and third-party headers outside those roots are left
// out, as gcovr does with its default --root filter.  --all-files shows
// every file; --include REGEX (repeatable) replaces the root rule by "the
// file's absolute path matches one of these"; --exclude REGEX (repeatable)
// then drops matching files.  Functions: --function REGEX keeps functions
// whose assembler or demangled name matches, --exclude-function REGEX
// drops them; a function is shown only if its file is.
//
// Regular expressions are ECMAScript (std::regex), searched anywhere in
// the absolute path (lexically normalised: "a/./b/../c" is "a/c").
// A relative file name is taken relative to the compile directory of the
// TU that names it (one file per absolute path: reconstruct/loaded_profile.h).
#ifndef BALLARUS_RECONSTRUCT_REPORT_FILTER_H_
#define BALLARUS_RECONSTRUCT_REPORT_FILTER_H_

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "core/paths.h"
#include "reconstruct/report_model.h"

namespace ballarus {

struct FilterOptions {
  std::vector<std::string> include, exclude;  // file regexes
  std::vector<std::string> functions, exclude_functions;  // name regexes
  bool all_files = false;
};

class FileFilter {
 public:
  // Fails (Fatal, commands.h) on an invalid regular expression, naming
  // the option.
  FileFilter(const report::Report& r, const FilterOptions& o);

  bool Keep(uint32_t file) const { return keep_[file]; }
  bool KeepFunction(const report::FunctionReport& f) const;
  // The file's absolute, lexically normalised path.
  const std::string& AbsolutePath(uint32_t file) const { return abs_[file]; }
  // The project roots of the default rule, sorted.
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  std::vector<std::string> abs_;
  std::vector<bool> keep_;
  std::vector<std::string> roots_;
  std::vector<std::regex> functions_, exclude_functions_;
};

// NormalizePath: core/paths.h.
// `name` made absolute against `dir`, normalised.
std::string AbsoluteIn(const std::string& dir, const std::string& name);
// The project root of `dir` (see above).
std::string ProjectRoot(const std::string& dir);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_REPORT_FILTER_H_
