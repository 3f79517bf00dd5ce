// report_filter.cc — see report_filter.h.
#include "reconstruct/report_filter.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reconstruct/commands.h"

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

FileFilter::FileFilter(const report::Report& r, const FilterOptions& o) {
  const std::vector<std::regex> include = Compile(o.include, "--include");
  const std::vector<std::regex> exclude = Compile(o.exclude, "--exclude");
  functions_ = Compile(o.functions, "--function");
  exclude_functions_ = Compile(o.exclude_functions, "--exclude-function");

  // Each file's absolute path, against the compile directory of the TUs
  // that name it (LoadedProfile::paths).
  abs_ = r.paths;

  for (const report::TuReport& tu : r.tus) {
    const std::string cwd = NormalizePath(tu.cwd);
    roots_.push_back(ProjectRoot(cwd));
    roots_.push_back(ProjectRoot(Dirname(AbsoluteIn(cwd, tu.source))));
  }
  std::sort(roots_.begin(), roots_.end());
  roots_.erase(std::unique(roots_.begin(), roots_.end()), roots_.end());

  keep_.assign(r.files.size(), true);
  for (size_t i = 0; i < r.files.size(); ++i) {
    const std::string& a = abs_[i];
    bool keep;
    if (!include.empty())
      keep = AnySearch(include, a);
    else if (o.all_files)
      keep = true;
    else
      keep = std::any_of(roots_.begin(), roots_.end(),
                         [&](const std::string& root) { return Under(a, root); });
    if (keep && AnySearch(exclude, a)) keep = false;
    keep_[i] = keep;
  }
}

bool FileFilter::KeepFunction(const report::FunctionReport& f) const {
  if (!keep_[f.file]) return false;
  if (!functions_.empty() && !AnySearch(functions_, f.name) &&
      !AnySearch(functions_, f.demangled))
    return false;
  return !AnySearch(exclude_functions_, f.name) &&
         !AnySearch(exclude_functions_, f.demangled);
}

}  // namespace ballarus
