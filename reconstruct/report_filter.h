// report_filter.h — which source files, functions and lines a report shows.
//
// By default a report shows the files of the project: those under a
// project root and not in a system include directory.  The project roots
// come from the translation units: each TU's compile directory and the
// directory of its main source file, each raised to its version-control
// root when it lies in a checkout (the nearest ancestor holding .git, .hg,
// .svn or .bzr); the deepest directory holding all of these that share a
// top-level directory ("/home", "/tmp", ...) is one root.  So a release
// tarball built in build/ has its top directory as root, and its own
// headers in include/ beside src/ are shown, as `lcov --capture -d .
// --no-external` and `gcovr --root .` show them when run from that top
// directory; a build directory on another tree (/tmp/build for sources in
// /home) is a root of its own.  System include directories (/usr/include,
// /usr/local/include, GCC's .../lib/gcc/... and .../include/c++/...) are
// left out even under a root.  --all-files shows every file; --include
// REGEX (repeatable) replaces the default rule by "the file's absolute
// path matches one of these"; --exclude REGEX (repeatable) then drops
// matching files.  Functions: --function REGEX keeps functions whose
// assembler or demangled name matches, --exclude-function REGEX drops
// them; a function is shown only if its file is.
//
// Coverage reports (FilterOptions::markers) also honour the exclusion
// markers in the sources (reconstruct/exclusion_markers.h): excluded lines
// and branches are left out, and so is a function whose first line is
// excluded.
//
// Regular expressions are ECMAScript (std::regex), searched anywhere in
// the absolute path (lexically normalised: "a/./b/../c" is "a/c").
// A relative file name is taken relative to the compile directory of the
// TU that names it (one file per absolute path: reconstruct/loaded_profile.h).
#ifndef BALLARUS_RECONSTRUCT_REPORT_FILTER_H_
#define BALLARUS_RECONSTRUCT_REPORT_FILTER_H_

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "core/paths.h"
#include "reconstruct/exclusion_markers.h"
#include "reconstruct/report_model.h"

namespace ballarus {

struct FilterOptions {
  std::vector<std::string> include, exclude;  // file regexes
  std::vector<std::string> functions, exclude_functions;  // name regexes
  bool all_files = false;
  // Honour the sources' exclusion markers (lcov, cobertura, html; off for
  // gcov's own formats, as gcov has none).
  bool markers = false;
};

class FileFilter {
 public:
  // Fails (Fatal, commands.h) on an invalid regular expression, naming
  // the option.
  FileFilter(const report::Report& r, const FilterOptions& o);

  bool Keep(uint32_t file) const { return keep_[file]; }
  // Also false, with markers, for a function whose first line is excluded.
  bool KeepFunction(const report::FunctionReport& f) const;
  // With markers: the line and its branches are left out.
  bool ExcludedLine(uint32_t file, uint32_t line) const;
  // With markers: the line's branches are left out.
  bool ExcludedBranches(uint32_t file, uint32_t line) const;
  // The file's absolute, lexically normalised path.
  const std::string& AbsolutePath(uint32_t file) const { return abs_[file]; }
  // The project roots of the default rule, sorted.
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  void ReadMarkers(const report::Report& r);

  std::vector<std::string> abs_;
  std::vector<bool> keep_;
  std::vector<std::string> roots_;
  std::map<uint32_t, LineExclusions> exclusions_;  // kept files with markers
  std::vector<std::regex> functions_, exclude_functions_;
};

// NormalizePath: core/paths.h.
// `name` made absolute against `dir`, normalised.
std::string AbsoluteIn(const std::string& dir, const std::string& name);
// The version-control root of `dir`, else `dir` (see above).
std::string ProjectRoot(const std::string& dir);
// The project roots of these absolute directories (see above), sorted.
std::vector<std::string> ProjectRoots(const std::vector<std::string>& dirs);
// Under a system include directory (see above).
bool IsSystemHeader(const std::string& path);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_REPORT_FILTER_H_
