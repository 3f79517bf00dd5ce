// threads_profile.cc — see threads_profile.h.
#include "tests/threads_profile.h"

#include <algorithm>
#include <exception>

#include "nlohmann/json.hpp"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace threads_profile {

namespace {

using json = nlohmann::json;

// The demangled name without "(anonymous namespace)::".
std::string SourceName(const json& f) {
  std::string n = f.at("demangled").get<std::string>();
  const std::string anon = "(anonymous namespace)::";
  for (size_t at; (at = n.find(anon)) != std::string::npos;) n.erase(at, anon.size());
  return n;
}

}  // namespace

bool LoadProfile(const std::string& path, bool paths, Profile* out,
                 std::string* error) {
  harness::CommandResult r = harness::Run(
      harness::Quote(harness::InstallPrefix() + "/bin/ballarus-reconstruct") + (paths ? " paths --json --top 0 " : " show --json ") +
          harness::Quote(path),
      "/");
  if (r.status != 0) {
    *error = "ballarus-reconstruct on " + path + " exited " +
             std::to_string(r.status) + ": " + r.err;
    return false;
  }
  json j;
  try {
    j = json::parse(r.out);
  } catch (const std::exception& e) {
    *error = std::string("not JSON: ") + e.what();
    return false;
  }
  for (const json& f : j.at("functions")) {
    Fn& fn = (*out)[SourceName(f)];
    if (!f.at("execution_count").is_null())
      fn.executions = std::max<int64_t>(fn.executions, 0) +
                      f.at("execution_count").get<int64_t>();
    for (const json& e : f.at("edges"))
      fn.edges.push_back(std::to_string(e.at("src").get<int>()) + "->" +
                         std::to_string(e.at("dst").get<int>()) + "=" +
                         (e.at("count").is_null() ? "null"
                                                  : e.at("count").dump()));
    if (f.contains("paths"))
      for (const json& p : f.at("paths"))
        fn.paths.push_back(p.at("id").get<std::string>() + "=" +
                           p.at("count").dump());
  }
  return true;
}

int64_t Exec(const Profile& p, const std::string& name) {
  for (const auto& [key, fn] : p)
    if (key == name || key.rfind(name + "(", 0) == 0) return fn.executions;
  return -2;
}

}  // namespace threads_profile
