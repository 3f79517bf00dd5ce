// report_filter.cc — see report_filter.h.
#include "reconstruct/report_filter.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "reconstruct/commands.h"
#include "reconstruct/gcov_writer.h"

namespace ballarus {
namespace {

std::vector<std::regex> Compile(const std::vector<std::string>& patterns,
                                const char* option) {
  std::vector<std::regex> out;
  for (const std::string& p : patterns) {
    try {
      out.emplace_back(p, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      Fail("", std::string(option) + ": invalid regular expression '" +
                   Printable(p) + "': " + e.what());
    }
  }
  return out;
}

bool AnySearch(const std::vector<std::regex>& res, const std::string& s) {
  for (const std::regex& re : res)
    if (std::regex_search(s, re)) return true;
  return false;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool Under(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The deepest directory holding both (absolute, normalised) paths.
std::string CommonAncestor(const std::string& a, const std::string& b) {
  std::string c = b;
  while (c != a && !Under(a, c) && c != "/" && c != "." && !c.empty())
    c = Dirname(c);
  return c;
}

// "/home" of "/home/u/p"; "/" of "/".
std::string TopLevel(const std::string& path) {
  const size_t slash = path.find('/', 1);
  return slash == std::string::npos ? path : path.substr(0, slash);
}

}  // namespace

std::string AbsoluteIn(const std::string& dir, const std::string& name) {
  if (!name.empty() && name[0] == '/') return NormalizePath(name);
  return NormalizePath(dir + "/" + name);
}

std::string ProjectRoot(const std::string& dir) {
  for (std::string d = NormalizePath(dir);; d = Dirname(d)) {
    for (const char* marker : {".git", ".hg", ".svn", ".bzr"})
      if (Exists(d + "/" + marker)) return d;
    if (d == "/" || d == "." || d.empty()) break;
  }
  return NormalizePath(dir);
}

std::vector<std::string> ProjectRoots(const std::vector<std::string>& dirs) {
  std::map<std::string, std::string> by_top;  // top-level dir -> root
  for (const std::string& d : dirs) {
    const std::string root = ProjectRoot(d);
    auto [it, added] = by_top.emplace(TopLevel(root), root);
    if (!added) it->second = CommonAncestor(root, it->second);
  }
  std::vector<std::string> roots;
  for (const auto& [top, root] : by_top) roots.push_back(root);
  std::sort(roots.begin(), roots.end());
  return roots;
}

bool IsSystemHeader(const std::string& path) {
  for (const char* dir : {"/usr/include", "/usr/local/include"})
    if (Under(path, dir)) return true;
  for (const char* part : {"/lib/gcc/", "/lib/gcc-cross/", "/include/c++/"})
    if (path.find(part) != std::string::npos) return true;
  return false;
}

FileFilter::FileFilter(const report::Report& r, const FilterOptions& o) {
  const std::vector<std::regex> include = Compile(o.include, "--include");
  const std::vector<std::regex> exclude = Compile(o.exclude, "--exclude");
  functions_ = Compile(o.functions, "--function");
  exclude_functions_ = Compile(o.exclude_functions, "--exclude-function");

  // Each file's absolute path, against the compile directory of the TUs
  // that name it (LoadedProfile::paths).
  abs_ = r.paths;

  std::vector<std::string> dirs;
  for (const report::TuReport& tu : r.tus) {
    const std::string cwd = NormalizePath(tu.cwd);
    dirs.push_back(cwd);
    dirs.push_back(Dirname(AbsoluteIn(cwd, tu.source)));
  }
  roots_ = ProjectRoots(dirs);

  keep_.assign(r.files.size(), true);
  for (size_t i = 0; i < r.files.size(); ++i) {
    const std::string& a = abs_[i];
    bool keep;
    if (!include.empty())
      keep = AnySearch(include, a);
    else if (o.all_files)
      keep = true;
    else
      keep = !IsSystemHeader(a) &&
             std::any_of(roots_.begin(), roots_.end(),
                         [&](const std::string& root) { return Under(a, root); });
    if (keep && AnySearch(exclude, a)) keep = false;
    keep_[i] = keep;
  }
  if (o.markers) ReadMarkers(r);
}

// Each kept file's markers, read from its absolute path, else from its
// name as recorded (as reconstruct/source_text.h reads it); a file that
// cannot be read has none (lcov warns and goes on).
void FileFilter::ReadMarkers(const report::Report& r) {
  for (uint32_t f = 0; f < r.files.size(); ++f) {
    if (!keep_[f]) continue;
    std::vector<std::string> lines;
    if (!gcov::ReadSourceLines(abs_[f], &lines) &&
        !gcov::ReadSourceLines(r.files[f], &lines))
      continue;
    LineExclusions x = LineExclusions::Scan(lines);
    if (!x.empty()) exclusions_.emplace(f, std::move(x));
  }
}

bool FileFilter::ExcludedLine(uint32_t file, uint32_t line) const {
  auto it = exclusions_.find(file);
  return it != exclusions_.end() && it->second.Line(line);
}

bool FileFilter::ExcludedBranches(uint32_t file, uint32_t line) const {
  auto it = exclusions_.find(file);
  return it != exclusions_.end() && it->second.Branches(line);
}

bool FileFilter::KeepFunction(const report::FunctionReport& f) const {
  if (!keep_[f.file] || ExcludedLine(f.file, f.line)) return false;
  if (!functions_.empty() && !AnySearch(functions_, f.name) &&
      !AnySearch(functions_, f.demangled))
    return false;
  return !AnySearch(exclude_functions_, f.name) &&
         !AnySearch(exclude_functions_, f.demangled);
}

}  // namespace ballarus
