// cli_test_util.h — what the tests of the ballarus-reconstruct binary
// share: running it, profiles serialised in memory from hand-made TUs
// (EncodeMetadata + profile_io), the TU `a.c` most of them read, and the
// check that a damaged profile is refused with one line.
#ifndef BALLARUS_RECONSTRUCT_CLI_TEST_UTIL_H_
#define BALLARUS_RECONSTRUCT_CLI_TEST_UTIL_H_

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace cli_test {

using nlohmann::json;

inline std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

// The tool under test: BALLARUS_RECONSTRUCT (a runfiles path, e.g. the
// UBSan build's in //reconstruct:reconstruct_ubsan_test), else the binary.
inline std::string Binary() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* tool = std::getenv("BALLARUS_RECONSTRUCT");
  std::string base = srcdir ? srcdir : ".";
  return base + "/ballarus/" +
         (tool && *tool ? tool : "reconstruct/ballarus-reconstruct");
}

struct Result {
  int status = -1;
  std::string out, err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline Result RunTool(const std::string& args) {
  static int n = 0;
  const std::string o = TmpDir() + "/out" + std::to_string(n);
  const std::string e = TmpDir() + "/err" + std::to_string(n++);
  const std::string cmd = "'" + Binary() + "' " + args + " >" + o + " 2>" + e;
  const int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(o);
  r.err = ReadFile(e);
  return r;
}

inline int Lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// a.c:  int diamond(int x)  blocks 2 {3,4} 3 {5} 4 {6} 5 {8}; counters on
// every edge; plus `early` with a fake edge (exit() called), and `setj`
// with an ignored abnormal edge.
inline TranslationUnit TuA() {
  TranslationUnit tu;
  tu.source = "a.c";
  tu.cwd = "/src";
  tu.compiler = "gcc 12.2.0";
  tu.flags = BALLARUS_META_F_NAIVE;
  tu.files = {"a.c", "inc.h"};
  Function d;
  d.name = "diamond";
  d.demangled = "diamond";
  d.line = 3;
  d.end_line = 9;
  d.cfg_checksum = 111;
  d.blocks.resize(6);
  d.blocks[2].lines = {{0, 3}, {0, 4}};
  d.blocks[3].lines = {{0, 5}};
  d.blocks[4].lines = {{0, 6}};
  d.blocks[5].lines = {{0, 8}};
  d.edges = {{0, 2, kEdgeFallthru, 0}, {2, 3, kEdgeTrue, 1},
             {2, 4, kEdgeFalse, 2},    {3, 5, kEdgeFallthru, 3},
             {4, 5, kEdgeFallthru, 4}, {5, 1, kEdgeFallthru, 5}};
  Function e;
  e.name = "early";
  e.demangled = "early";
  e.line = 12;
  e.end_line = 15;
  e.cfg_checksum = 222;
  e.blocks.resize(4);
  e.blocks[2].lines = {{0, 13}};
  e.blocks[3].lines = {{0, 14}};
  e.edges = {{0, 2, kEdgeFallthru, 6},
             {2, 3, kEdgeFallthru, 7},
             {2, 1, kEdgeFake, kNoCounter},
             {3, 1, kEdgeFallthru, 8}};
  Function s;
  s.name = "setj";
  s.demangled = "setj";
  s.line = 20;
  s.end_line = 25;
  s.cfg_checksum = 333;
  s.blocks.resize(5);
  s.blocks[2].lines = {{0, 21}};
  s.blocks[3].lines = {{0, 22}};
  s.blocks[4].lines = {{0, 23}};
  s.edges = {{0, 2, kEdgeFallthru, 9},
             {0, 4, kEdgeFake, kNoCounter},
             {2, 3, kEdgeFallthru, 10},
             {3, 1, kEdgeFake, kNoCounter},
             {3, 4, kEdgeAbnormal | kEdgeIgnored, kNoCounter},
             {4, 1, kEdgeFallthru, 11}};
  tu.functions = {s, e, d};  // deliberately unsorted
  tu.n_counters = 12;
  return tu;
}

// diamond: 10 calls, 7 true; early: 5 calls, 3 return normally;
// setj: 4 calls, 2 returns through the setjmp receiver.
inline std::vector<uint64_t> CountersA() {
  return {10, 7, 3, 7, 3, 10, 5, 3, 3, 4, 4, 2};
}

struct Rec {
  std::vector<uint8_t> meta;
  std::vector<uint64_t> counters;
  uint64_t runs = 1;
  std::vector<ballarus_sparse_entry> sparse;  // sorted by (function, key)
};

// Serialises records (sorted by stamp as the format requires).
inline std::string Profile(std::vector<Rec> recs, uint64_t runs = 1) {
  std::vector<ballarus_profile_record> rs;
  for (Rec& r : recs) {
    ballarus_profile_record x{};
    ballarus_meta_header h;
    std::memcpy(&h, r.meta.data(), sizeof h);
    x.stamp = h.stamp;
    x.identity = h.identity;
    x.runs = r.runs;
    x.metadata = r.meta.data();
    x.meta_size = r.meta.size();
    x.counters = r.counters.data();
    x.n_counters = r.counters.size();
    x.sparse = r.sparse.data();
    x.n_sparse = r.sparse.size();
    rs.push_back(x);
  }
  std::sort(rs.begin(), rs.end(),
            [](const auto& a, const auto& b) { return a.stamp < b.stamp; });
  ballarus_profile p{};
  p.runs = runs;
  p.n_records = static_cast<uint32_t>(rs.size());
  p.records = rs.data();
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  char err[256];
  EXPECT_EQ(ballarus_profile_serialize(&p, &buf, &size, err, sizeof err), 0)
      << err;
  std::string bytes(reinterpret_cast<char*>(buf), size);
  std::free(buf);
  return bytes;
}

inline std::string WriteProfile(const std::string& name, const std::string& bytes) {
  const std::string path = TmpDir() + "/" + name;
  WriteFile(path, bytes);
  return path;
}

inline const json& Fn(const json& j, const std::string& name) {
  for (const json& f : j.at("functions"))
    if (f.at("name") == name) return f;
  static const json kNull;
  ADD_FAILURE() << "no function " << name;
  return kNull;
}

inline void ExpectBadInput(const std::string& path, const std::string& label) {
  for (const char* cmd :
       {"show ", "show --json ", "verify ", "stats ", "paths --json "}) {
    Result r = RunTool(std::string(cmd) + "'" + path + "'");
    EXPECT_EQ(r.status, 2) << label << ": " << cmd << r.out << r.err;
    EXPECT_EQ(Lines(r.err), 1) << label << ": " << r.err;
    EXPECT_EQ(r.err.rfind("ballarus-reconstruct: " + path + ": ", 0), 0u)
        << label << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << label << ": " << r.out;
  }
}

}  // namespace cli_test
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CLI_TEST_UTIL_H_
