// commands.cc — loading and selection shared by the subcommands (see
// commands.h).
#include "reconstruct/commands.h"

#include <regex>

namespace ballarus {

void Fail(const std::string& file, const std::string& problem) {
  throw Fatal{file.empty() ? problem : file + ": " + problem};
}

void LoadReport(const std::string& path, LoadedReport* out) {
  std::string err;
  if (!LoadProfile(path, &out->profile, &err)) Fail(path, err);
  out->report = report::BuildReport(out->profile);
}

std::vector<const report::FunctionReport*> Select(const report::Report& r,
                                                  const std::string& pattern) {
  std::vector<const report::FunctionReport*> out;
  std::regex re;
  if (!pattern.empty()) {
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      Fail("", "--function: invalid regular expression '" + pattern +
                   "': " + e.what());
    }
  }
  for (const report::FunctionReport& f : r.functions)
    if (pattern.empty() || std::regex_search(f.name, re) ||
        std::regex_search(f.demangled, re))
      out.push_back(&f);
  return out;
}

}  // namespace ballarus
