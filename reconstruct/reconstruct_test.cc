// reconstruct_test.cc — runs the real ballarus-reconstruct binary on
// profiles built in memory from hand-made TUs (EncodeMetadata + profile_io)
// and checks its JSON, exit codes, merging, COMDAT summing and the handling
// of damaged input; and path profiles (mode=path, mode=edge,path): the test
// numbers each hand-made function's paths itself (core/path_profile.h),
// assigns counts to chosen paths, and checks `paths`, the edge counts
// `show` derives from them against counts it adds up by walking each
// path's blocks by hand, `verify` (edge counters against paths, --against,
// out-of-range counts), `stats` and `--decode`.
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
namespace {

using nlohmann::json;

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

// The tool under test: BALLARUS_RECONSTRUCT (a runfiles path, e.g. the
// UBSan build's in //reconstruct:reconstruct_ubsan_test), else the binary.
std::string Binary() {
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

Result RunTool(const std::string& args) {
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

int Lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// a.c:  int diamond(int x)  blocks 2 {3,4} 3 {5} 4 {6} 5 {8}; counters on
// every edge; plus `early` with a fake edge (exit() called), and `setj`
// with an ignored abnormal edge.
TranslationUnit TuA() {
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
std::vector<uint64_t> CountersA() {
  return {10, 7, 3, 7, 3, 10, 5, 3, 3, 4, 4, 2};
}

// A TU with a COMDAT function `_Z3inlv` (checksum 77) and a static `helper`.
TranslationUnit TuWithComdat(const std::string& source) {
  TranslationUnit tu;
  tu.source = source;
  tu.cwd = "/src";
  tu.flags = BALLARUS_META_F_NAIVE;
  tu.files = {source, "inl.h"};
  Function c;
  c.name = "_Z3inlv";
  c.demangled = "inl()";
  c.file = 1;
  c.line = 2;
  c.end_line = 4;
  c.cfg_checksum = 77;
  c.flags = kFunctionComdat;
  c.blocks.resize(3);
  c.blocks[2].lines = {{1, 3}};
  c.edges = {{0, 2, kEdgeFallthru, 0}, {2, 1, kEdgeFallthru, 1}};
  Function h;
  h.name = "helper";
  h.demangled = "helper";
  h.line = 10;
  h.end_line = 12;
  h.cfg_checksum = 5;
  h.blocks.resize(3);
  h.blocks[2].lines = {{0, 11}};
  h.edges = {{0, 2, kEdgeFallthru, 2}, {2, 1, kEdgeFallthru, 3}};
  tu.functions = {c, h};
  tu.n_counters = 4;
  return tu;
}

struct Rec {
  std::vector<uint8_t> meta;
  std::vector<uint64_t> counters;
  uint64_t runs = 1;
  std::vector<ballarus_sparse_entry> sparse;  // sorted by (function, key)
};

// Serialises records (sorted by stamp as the format requires).
std::string Profile(std::vector<Rec> recs, uint64_t runs = 1) {
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

std::string WriteProfile(const std::string& name, const std::string& bytes) {
  const std::string path = TmpDir() + "/" + name;
  WriteFile(path, bytes);
  return path;
}

const json& Fn(const json& j, const std::string& name) {
  for (const json& f : j.at("functions"))
    if (f.at("name") == name) return f;
  static const json kNull;
  ADD_FAILURE() << "no function " << name;
  return kNull;
}

TEST(Reconstruct, ShowJson) {
  const std::string path =
      WriteProfile("a.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}, 3));
  Result r = RunTool("show --json '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("profile"), path);
  EXPECT_EQ(j.at("runs"), 3);
  // Sorted by file, line, name.
  ASSERT_EQ(j.at("functions").size(), 3u);
  EXPECT_EQ(j["functions"][0]["name"], "diamond");
  EXPECT_EQ(j["functions"][1]["name"], "early");
  EXPECT_EQ(j["functions"][2]["name"], "setj");

  const json& d = Fn(j, "diamond");
  EXPECT_EQ(d.at("file"), "a.c");
  EXPECT_EQ(d.at("line"), 3);
  EXPECT_EQ(d.at("end_line"), 9);
  EXPECT_EQ(d.at("checksum"), 111);
  EXPECT_EQ(d.at("execution_count"), 10);
  EXPECT_EQ(d.at("tus"), json::array({"a.c"}));
  EXPECT_EQ(d["blocks"][3]["count"], 7);
  EXPECT_EQ(d["blocks"][4]["count"], 3);
  EXPECT_EQ(d["blocks"][2]["lines"], json::array({3, 4}));
  EXPECT_EQ(d["blocks"][2]["locations"][1]["line"], 4);
  EXPECT_EQ(d["edges"][1]["kind"], "true");
  EXPECT_EQ(d["edges"][1]["count"], 7);
  EXPECT_EQ(d["edges"][1]["counted"], true);
  EXPECT_EQ(d["edges"][0]["kind"], "fallthrough");
  EXPECT_EQ(d["edges"][0]["flags"], json::array({"fallthru"}));
  // Key order as documented.
  std::vector<std::string> keys;
  const nlohmann::ordered_json oj = nlohmann::ordered_json::parse(r.out);
  const nlohmann::ordered_json& od = oj.at("functions").at(0);
  for (auto it = od.begin(); it != od.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "name", "demangled", "file", "path", "line",
                      "end_line", "checksum", "execution_count", "tus",
                      "blocks", "edges", "line_counts"}));
  // "path": absolute, against the TU's compile directory.
  EXPECT_EQ(d.at("path"), "/src/a.c");
  // gcov line counts: line 4 is block 2's last line: 10 entries.
  bool saw4 = false;
  for (const json& l : d.at("line_counts"))
    if (l.at("line") == 4) {
      saw4 = true;
      EXPECT_EQ(l.at("count"), 10);
      EXPECT_EQ(l.at("file"), "a.c");
    }
  EXPECT_TRUE(saw4);

  // The fake edge is derived: 5 calls, 3 normal returns.
  const json& e = Fn(j, "early");
  EXPECT_EQ(e["edges"][2]["kind"], "fake");
  EXPECT_EQ(e["edges"][2]["counted"], false);
  EXPECT_EQ(e["edges"][2]["count"], 2);
  EXPECT_EQ(e["blocks"][1]["count"], 5);

  // The ignored abnormal edge has a null count; fake ENTRY->4 = 2.
  const json& s = Fn(j, "setj");
  EXPECT_TRUE(s["edges"][4]["count"].is_null());
  EXPECT_EQ(s["edges"][4]["kind"], "abnormal");
  EXPECT_EQ(s["edges"][1]["count"], 2);
  EXPECT_EQ(s["execution_count"], 6);

  // --function filters; output is deterministic.
  Result f = RunTool("show --json --function '^dia' '" + path + "'");
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(json::parse(f.out).at("functions").size(), 1u);
  EXPECT_EQ(RunTool("show --json '" + path + "'").out, r.out);
  // The text form mentions every function.
  Result t = RunTool("show '" + path + "'");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("diamond (a.c:3): executed 10 times"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("setj (a.c:20)"), std::string::npos);
  EXPECT_EQ(RunTool("show --function '(' '" + path + "'").status, 2);
}

TEST(Reconstruct, VerifyConsistentAndInconsistent) {
  const std::string good =
      WriteProfile("good.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}));
  Result r = RunTool("verify '" + good + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, good + ": ok: 3 functions, 15 blocks, 16 edges checked\n");

  std::vector<uint64_t> c = CountersA();
  c[1] = 8;  // diamond 2->3 says 8, 3->5 says 7
  const std::string bad =
      WriteProfile("bad.profile", Profile({{EncodeMetadata(TuA()), c}}));
  r = RunTool("verify '" + bad + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, bad + ": diamond (a.c:3): block 2: in 10 != out 11\n" +
                       bad + ": diamond (a.c:3): block 3: in 8 != out 7\n");

  c = CountersA();
  c[7] = 9;  // early: 9 normal returns out of 5 calls: fake edge negative
  c[8] = 9;
  const std::string neg =
      WriteProfile("neg.profile", Profile({{EncodeMetadata(TuA()), c}}));
  r = RunTool("verify '" + neg + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("early (a.c:12): block 2: edge 2->1 would need a "
                       "negative count (in 5, out 9)"),
            std::string::npos)
      << r.out;
}

TEST(Reconstruct, MergeSumsAndComdat) {
  const std::vector<uint8_t> ma = EncodeMetadata(TuA());
  const std::string p1 = WriteProfile("m1.profile", Profile({{ma, CountersA()}}));
  const std::string p2 = WriteProfile("m2.profile", Profile({{ma, CountersA()}}, 2));
  // COMDAT: the linker kept x.c's copy (2 calls); y.c's copy stays 0.
  const std::string p3 = WriteProfile(
      "m3.profile",
      Profile({{EncodeMetadata(TuWithComdat("x.c")), {2, 2, 1, 1}},
               {EncodeMetadata(TuWithComdat("y.c")), {0, 0, 4, 4}}}));
  const std::string out = TmpDir() + "/merged.profile";
  Result r = RunTool("merge -o '" + out + "' '" + p1 + "' '" + p2 + "' '" + p3 + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunTool("show --json '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("runs"), 4);
  EXPECT_EQ(Fn(j, "diamond").at("execution_count"), 20);
  EXPECT_EQ(Fn(j, "diamond")["edges"][2]["count"], 6);
  // One COMDAT entry listing both TUs, counts summed; two `helper`s.
  int n_inl = 0, n_helper = 0;
  for (const json& f : j.at("functions")) {
    if (f.at("name") == "_Z3inlv") {
      ++n_inl;
      EXPECT_EQ(f.at("execution_count"), 2);
      EXPECT_EQ(f.at("tus"), json::array({"x.c", "y.c"}));
      EXPECT_EQ(f.at("file"), "inl.h");
    }
    if (f.at("name") == "helper") {
      ++n_helper;
      EXPECT_EQ(f.at("tus").size(), 1u);
      EXPECT_EQ(f.at("execution_count"), f.at("tus")[0] == "x.c" ? 1 : 4);
    }
  }
  EXPECT_EQ(n_inl, 1);
  EXPECT_EQ(n_helper, 2);
}

TEST(Reconstruct, MergeRefusesOtherBuild) {
  TranslationUnit other = TuA();
  other.functions[2].cfg_checksum = 999;  // same identity, another stamp
  const std::string p1 = WriteProfile(
      "c1.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}));
  const std::string p2 = WriteProfile(
      "c2.profile", Profile({{EncodeMetadata(other), CountersA()}}));
  const std::string before1 = ReadFile(p1), before2 = ReadFile(p2);
  const std::string out = TmpDir() + "/conflict.profile";
  Result r = RunTool("merge -o '" + out + "' '" + p1 + "' '" + p2 + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(p2), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("two builds of one TU"), std::string::npos) << r.err;
  struct stat st;
  EXPECT_NE(stat(out.c_str(), &st), 0);  // nothing written
  EXPECT_EQ(ReadFile(p1), before1);
  EXPECT_EQ(ReadFile(p2), before2);
  // Merging onto an input with a bad other input leaves it untouched.
  const std::string junk = WriteProfile("junk.profile", "not a profile");
  r = RunTool("merge -o '" + p1 + "' '" + p1 + "' '" + junk + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(ReadFile(p1), before1);
}

void ExpectBadInput(const std::string& path, const std::string& label) {
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

TEST(Reconstruct, DamagedProfilesRejected) {
  const std::string good = Profile({{EncodeMetadata(TuA()), CountersA()}});
  ExpectBadInput(TmpDir() + "/missing.profile", "missing");
  for (size_t len = 0; len < good.size(); len += 7) {
    const std::string p = WriteProfile("trunc.profile", good.substr(0, len));
    ExpectBadInput(p, "truncated to " + std::to_string(len));
    if (HasFailure()) return;
  }
  for (size_t at = 0; at < good.size(); at += 13) {
    std::string b = good;
    b[at] ^= 0x04;
    const std::string p = WriteProfile("flip.profile", b);
    ExpectBadInput(p, "flip at " + std::to_string(at));
    if (HasFailure()) return;
  }
  std::string v = good;
  v[8] = 9;  // version
  ExpectBadInput(WriteProfile("version.profile", v), "version");
}

TEST(Reconstruct, MetadataDecodeFailureNamesOffset) {
  // A structurally bad blob with a correct stamp passes profile_io's checks
  // and must be caught by the metadata decoder.
  TranslationUnit t = TuA();
  t.functions[2].edges[1].dst = 42;
  // Version 3 (compressed body): the compressed body's offset, then the
  // byte within the inflated body.
  const std::string p = WriteProfile(
      "badmeta.profile", Profile({{EncodeMetadata(t), CountersA()}}));
  ExpectBadInput(p, "bad metadata");
  Result r = RunTool("verify '" + p + "'");
  EXPECT_NE(r.err.find(": offset "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("record 0: metadata: inflated body byte "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": function 'diamond': edge 1 names block 42 of 6"),
            std::string::npos)
      << r.err;
  // Version 2 (profiles of older builds): the blob's own offset.
  const std::string p2 = WriteProfile(
      "badmeta2.profile", Profile({{EncodeMetadata(t, 2), CountersA()}}));
  ExpectBadInput(p2, "bad metadata");
  r = RunTool("verify '" + p2 + "'");
  EXPECT_NE(r.err.find("record 0: metadata: function 'diamond': edge 1 names "
                       "block 42 of 6"),
            std::string::npos)
      << r.err;
}

TEST(Reconstruct, VersionTwoMetadataStillRead) {
  // A profile written by an older build (uncompressed metadata, version 2)
  // shows exactly as the same TU and counts written now (version 3).
  const std::string a = WriteProfile(
      "v2.profile", Profile({{EncodeMetadata(TuA(), 2), CountersA()}}));
  const std::string b = WriteProfile(
      "v3.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}));
  Result ra = RunTool("show '" + a + "'");
  Result rb = RunTool("show '" + b + "'");
  EXPECT_EQ(ra.status, 0) << ra.err;
  EXPECT_EQ(rb.status, 0) << rb.err;
  // Everything after the first line, which names the file.
  const size_t na = ra.out.find('\n'), nb = rb.out.find('\n');
  ASSERT_NE(na, std::string::npos);
  ASSERT_NE(nb, std::string::npos);
  EXPECT_NE(ra.out.find("diamond (a.c:3): executed 10 times"),
            std::string::npos);
  EXPECT_EQ(ra.out.substr(na), rb.out.substr(nb));
}

TEST(Reconstruct, Usage) {
  Result r = RunTool("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "ballarus-reconstruct 0.1.0\n");
  r = RunTool("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("verify"), std::string::npos);
  for (const char* sub : {"show", "verify", "merge", "stats", "paths"}) {
    r = RunTool(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  r = RunTool("frobnicate x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1);
  r = RunTool("show --frob x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--frob"), std::string::npos) << r.err;
  r = RunTool("");
  EXPECT_EQ(r.status, 2);
  r = RunTool("merge a b");  // -o missing
  EXPECT_EQ(r.status, 2);
}

// ------------------------------------------------------------ path profiles
//
// loopif (a loop with an if inside):
//   2 {s = 0; i = 0}  3 {i < n}  4 {i & 1}  5 {s += i}  6 {i++}  7 {return}
//   edges 0:0->2 1:2->3 2:3->4(T) 3:3->7(F) 4:4->5(T) 5:4->6(F) 6:5->6
//         7:6->3 (the back edge) 8:7->1
// latchexit (a back edge whose latch also exits, and a call that may not
// return):
//   2 {entry}  3 {body: calls something that may exit()}  4 {latch}
//   edges 0:0->2 1:2->3 2:3->4 3:3->1(fake) 4:4->3(T, back edge)
//         5:4->1(F, return from the latch)
// With counters, every edge that can hold one has one, from `first`.
Function LoopIf(const std::string& name, uint32_t line, int64_t first) {
  Function f;
  f.name = name;
  f.demangled = name;
  f.line = line;
  f.end_line = line + 7;
  f.cfg_checksum = 4242;
  f.blocks.resize(8);
  for (uint32_t b = 2; b < 8; ++b) f.blocks[b].lines = {{0, line + b - 1}};
  f.blocks[2].lines.push_back({0, line + 2});  // `for` init shares line 3
  const std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint32_t>> es = {
      {{0, 2}, kEdgeFallthru}, {{2, 3}, kEdgeFallthru},
      {{3, 4}, kEdgeTrue},     {{3, 7}, kEdgeFalse},
      {{4, 5}, kEdgeTrue},     {{4, 6}, kEdgeFalse},
      {{5, 6}, kEdgeFallthru}, {{6, 3}, kEdgeFallthru},
      {{7, 1}, kEdgeFallthru}};
  for (size_t i = 0; i < es.size(); ++i)
    f.edges.push_back({es[i].first.first, es[i].first.second, es[i].second,
                       first < 0 ? kNoCounter : first + int64_t(i)});
  return f;
}

Function LatchExit(const std::string& name, uint32_t line, int64_t first) {
  Function f;
  f.name = name;
  f.demangled = name;
  f.line = line;
  f.end_line = line + 4;
  f.cfg_checksum = 4343;
  f.blocks.resize(5);
  for (uint32_t b = 2; b < 5; ++b) f.blocks[b].lines = {{0, line + b - 1}};
  int64_t c = first;
  auto next = [&] { return first < 0 ? kNoCounter : c++; };
  f.edges.push_back({0, 2, kEdgeFallthru, next()});
  f.edges.push_back({2, 3, kEdgeFallthru, next()});
  f.edges.push_back({3, 4, kEdgeFallthru, next()});
  f.edges.push_back({3, 1, kEdgeFake, kNoCounter});
  f.edges.push_back({4, 3, kEdgeTrue, next()});
  f.edges.push_back({4, 1, kEdgeFalse, next()});
  return f;
}

// A path as reconstruct lists it: blocks[0] is ENTRY, or the block a
// restarted path begins at; it ends at EXIT, or with the back edge
// blocks.back() -> back_to, or entering cut block cut_at.
struct PathSpec {
  bool restart = false;
  std::vector<uint32_t> blocks;
  int back_to = -1;
  int cut_at = -1;
  uint64_t count = 0;
};

size_t FindEdge(const Function& f, uint32_t src, uint32_t dst) {
  for (size_t i = 0; i < f.edges.size(); ++i)
    if (f.edges[i].src == src && f.edges[i].dst == dst) return i;
  ADD_FAILURE() << "no edge " << src << "->" << dst << " in " << f.name;
  return 0;
}

// The CFG edges a path takes, found from its blocks alone.
std::vector<size_t> CfgEdgesOf(const Function& f, const PathSpec& p) {
  std::vector<size_t> out;
  for (size_t i = 1; i < p.blocks.size(); ++i)
    out.push_back(FindEdge(f, p.blocks[i - 1], p.blocks[i]));
  if (p.back_to >= 0) out.push_back(FindEdge(f, p.blocks.back(), p.back_to));
  if (p.cut_at >= 0) out.push_back(FindEdge(f, p.blocks.back(), p.cut_at));
  return out;
}

// The function's numbering as the plugin would compute it.
struct Numbered {
  PathInfo info;
  PathDag dag;
  PathNumbering num;
};

Numbered Number(const Function& f, std::vector<uint32_t> cut_blocks,
                uint32_t storage, uint64_t base, uint32_t flags) {
  Numbered n;
  n.info.storage = storage;
  n.info.base = base;
  n.info.flags = flags;
  n.info.cut_blocks = cut_blocks;
  for (uint32_t e : FindBackEdges(f))
    if (std::find(cut_blocks.begin(), cut_blocks.end(), f.edges[e].dst) ==
        cut_blocks.end())
      n.info.cut_edges.push_back(e);
  std::string err;
  EXPECT_TRUE(BuildPathDag(f, PathCuts{n.info.cut_edges, n.info.cut_blocks},
                           &n.dag, &err))
      << err;
  n.num = NumberPaths(n.dag);
  n.info.n_paths = n.num.total().get_ui();
  return n;
}

void AttachPathInfo(Function* f, const PathInfo& info) {
  f->extensions.push_back({kPathExtensionTag, EncodePathInfo(info)});
}

uint64_t PathNumber(const Function& f, const Numbered& n, const PathSpec& p) {
  std::vector<uint32_t> d;
  if (p.restart) d.push_back(uint32_t(n.dag.start_edge[p.blocks[0]]));
  for (size_t e : CfgEdgesOf(f, p))
    d.push_back(uint32_t(n.dag.dag_edge_of_cfg[e]));
  if (p.cut_at >= 0) d.push_back(uint32_t(n.dag.cut_end_edge[p.cut_at]));
  const mpz_class id = EncodePath(n.num, d);
  std::vector<uint32_t> back;  // sanity: the numbering round-trips
  EXPECT_TRUE(DecodePath(n.dag, n.num, id, &back));
  EXPECT_EQ(back, d);
  return id.get_ui();
}

// Edge counts by hand: every path adds its count to each CFG edge it takes.
std::vector<uint64_t> EdgeCountsByHand(const Function& f,
                                       const std::vector<PathSpec>& ps) {
  std::vector<uint64_t> c(f.edges.size(), 0);
  for (const PathSpec& p : ps)
    for (size_t e : CfgEdgesOf(f, p)) c[e] += p.count;
  return c;
}

// loopif(4), loopif(4), loopif(0).
std::vector<PathSpec> LoopIfPaths() {
  return {
      {false, {0, 2, 3, 4, 6}, 3, -1, 2},     // i = 0
      {true, {3, 4, 5, 6}, 3, -1, 4},         // i = 1, 3
      {true, {3, 4, 6}, 3, -1, 2},            // i = 2
      {true, {3, 7, 1}, -1, -1, 2},           // i = 4: return
      {false, {0, 2, 3, 7, 1}, -1, -1, 1},    // n = 0
      {false, {0, 2, 3, 4, 5, 6}, 3, -1, 0},  // never
  };
}

// latchexit(3), latchexit(1), and one call that exit()s in its 2nd
// iteration.
std::vector<PathSpec> LatchExitPaths() {
  return {
      {false, {0, 2, 3, 4}, 3, -1, 2},  {true, {3, 4}, 3, -1, 1},
      {true, {3, 4, 1}, -1, -1, 1},     {false, {0, 2, 3, 4, 1}, -1, -1, 1},
      {true, {3, 1}, -1, -1, 1},         // did not return
      {false, {0, 2, 3, 1}, -1, -1, 0},  // never
  };
}

// loopif's CFG with its latch 6 as a cut block; cutfn(2) once.
std::vector<PathSpec> CutFnPaths() {
  return {
      {false, {0, 2, 3, 4}, -1, 6, 1},
      {true, {6}, 3, -1, 2},
      {true, {3, 4, 5}, -1, 6, 1},
      {true, {3, 7, 1}, -1, -1, 1},
  };
}

void PutDense(const Function& f, const Numbered& n,
              const std::vector<PathSpec>& ps, std::vector<uint64_t>* c) {
  if (c->size() < n.info.base + n.info.n_paths + 1)
    c->resize(n.info.base + n.info.n_paths + 1, 0);
  for (const PathSpec& p : ps)
    (*c)[n.info.base + PathNumber(f, n, p)] += p.count;
}

void PutSparse(const Function& f, const Numbered& n, uint64_t fn_index,
               const std::vector<PathSpec>& ps,
               std::vector<ballarus_sparse_entry>* out) {
  for (const PathSpec& p : ps)
    if (p.count) out->push_back({fn_index, PathNumber(f, n, p), p.count});
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.function, a.key) <
           std::make_pair(b.function, b.key);
  });
}

// mode=path: pd.c counts loopif and cutfn densely, ph.c latchexit in a
// hash table.
struct PathProfile {
  TranslationUnit pd, ph;
  Numbered loopif, cutfn, latch;
  std::vector<uint64_t> pd_counters;
  std::vector<ballarus_sparse_entry> ph_sparse;
  std::vector<Rec> Recs() const {
    Rec a{EncodeMetadata(pd), pd_counters};
    Rec b{EncodeMetadata(ph), {}};
    b.sparse = ph_sparse;
    return {a, b};
  }
};

PathProfile PathOnly() {
  PathProfile p;
  p.pd.source = "pd.c";
  p.pd.cwd = "/src";
  p.pd.flags = BALLARUS_META_F_PATH;
  p.pd.files = {"pd.c"};
  Function loop = LoopIf("loopif", 30, -1);
  Function cut = LoopIf("cutfn", 50, -1);
  p.loopif = Number(loop, {}, PathInfo::kDense, 0, kPathFlagEarlyTermination);
  p.cutfn = Number(cut, {6}, PathInfo::kDense, p.loopif.info.n_paths + 1,
                   kPathFlagEarlyTermination);
  PutDense(loop, p.loopif, LoopIfPaths(), &p.pd_counters);
  PutDense(cut, p.cutfn, CutFnPaths(), &p.pd_counters);
  AttachPathInfo(&loop, p.loopif.info);
  AttachPathInfo(&cut, p.cutfn.info);
  p.pd.functions = {cut, loop};
  p.pd.n_counters = p.pd_counters.size();

  p.ph.source = "ph.c";
  p.ph.cwd = "/src";
  p.ph.flags = BALLARUS_META_F_PATH;
  p.ph.files = {"ph.c"};
  Function latch = LatchExit("latchexit", 10, -1);
  p.latch = Number(latch, {}, PathInfo::kHashed, 0, kPathFlagEarlyTermination);
  PutSparse(latch, p.latch, 0, LatchExitPaths(), &p.ph_sparse);
  AttachPathInfo(&latch, p.latch.info);
  p.ph.functions = {latch};
  p.ph.n_counters = 0;
  return p;
}

// The JSON a path should have in `paths --json`.
json ExpectedPath(const Function& f, const Numbered& n, const PathSpec& p) {
  json j;
  j["id"] = std::to_string(PathNumber(f, n, p));
  j["count"] = p.count;
  j["blocks"] = p.blocks;
  const std::vector<uint32_t>& cuts = n.info.cut_blocks;
  j["start"] = !p.restart ? "entry"
               : std::count(cuts.begin(), cuts.end(), p.blocks[0])
                   ? "cut"
                   : "back_edge";
  if (p.back_to >= 0) {
    j["end"] = "back_edge";
    j["to"] = p.back_to;
  } else if (p.cut_at >= 0) {
    j["end"] = "cut";
    j["to"] = p.cut_at;
  } else {
    const Edge& last =
        f.edges[FindEdge(f, p.blocks[p.blocks.size() - 2], p.blocks.back())];
    j["end"] = (last.flags & kEdgeFake) ? "no_return" : "return";
  }
  return j;
}

// Executed paths in the documented order: count descending, number
// ascending.
// Each with its share of the function's executions (the specs' counts)
// and of the program's (`program_total` path executions).
json ExpectedPaths(const Function& f, const Numbered& n,
                   std::vector<PathSpec> ps, uint64_t program_total) {
  uint64_t function_total = 0;
  for (const PathSpec& p : ps) function_total += p.count;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, json>> v;
  for (const PathSpec& p : ps)
    if (p.count) {
      json j = ExpectedPath(f, n, p);
      j["function_share"] = static_cast<double>(p.count) / function_total;
      j["program_share"] = static_cast<double>(p.count) / program_total;
      v.push_back({{~p.count, PathNumber(f, n, p)}, j});
    }
  std::sort(v.begin(), v.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json out = json::array();
  for (auto& x : v) out.push_back(x.second);
  return out;
}

TEST(Paths, ListsExactlyTheCountedPaths) {
  const PathProfile pp = PathOnly();
  const std::string path = WriteProfile("paths.profile", Profile(pp.Recs()));
  Result r = RunTool("paths --json --top 0 '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const Function& loop = pp.pd.functions[1];
  const Function& cut = pp.pd.functions[0];
  const Function& latch = pp.ph.functions[0];

  const json& l = Fn(j, "loopif");
  EXPECT_EQ(l.at("n_paths"), "6");
  EXPECT_EQ(l.at("path_storage"), "dense");
  EXPECT_EQ(l.at("path_flags"), json::array({"early_termination"}));
  EXPECT_EQ(l.at("cut_edges"), json::parse(R"([{"edge":7,"src":6,"dst":3,"kind":"back_edge"}])"));
  EXPECT_EQ(l.at("cut_blocks"), json::array());
  EXPECT_EQ(l.at("distinct_paths"), 5);
  EXPECT_EQ(l.at("path_count_total"), 11);
  EXPECT_EQ(l.at("path_out_of_range"), 0);
  EXPECT_EQ(l.at("paths"), ExpectedPaths(loop, pp.loopif, LoopIfPaths(), 22));
  // Three paths counted twice: ties by ascending number.
  EXPECT_EQ(l["paths"][0]["count"], 4);
  EXPECT_EQ(l["paths"][0]["blocks"], json::array({3, 4, 5, 6}));

  const json& c = Fn(j, "cutfn");
  EXPECT_EQ(c.at("n_paths"), "7");
  EXPECT_EQ(c.at("cut_blocks"), json::array({6}));
  EXPECT_EQ(c.at("cut_edges"), json::parse(R"([{"edge":7,"src":6,"dst":3,"kind":"back_edge"}])"));
  EXPECT_EQ(c.at("paths"), ExpectedPaths(cut, pp.cutfn, CutFnPaths(), 22));
  EXPECT_EQ(c["paths"][0]["blocks"], json::array({6}));
  EXPECT_EQ(c["paths"][0]["start"], "cut");

  const json& h = Fn(j, "latchexit");
  EXPECT_EQ(h.at("n_paths"), "6");
  EXPECT_EQ(h.at("path_storage"), "hashed");
  EXPECT_EQ(h.at("paths"), ExpectedPaths(latch, pp.latch, LatchExitPaths(), 22));
  bool saw_no_return = false;
  for (const json& x : h.at("paths"))
    if (x.at("end") == "no_return") {
      saw_no_return = true;
      EXPECT_EQ(x.at("blocks"), json::array({3, 1}));
    }
  EXPECT_TRUE(saw_no_return);

  // --top limits the list, --function the functions; the document is
  // show's, path fields added.
  r = RunTool("paths --json --top 2 --function '^loop' '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json t = json::parse(r.out);
  ASSERT_EQ(t.at("functions").size(), 1u);
  EXPECT_EQ(t["functions"][0]["paths"].size(), 2u);
  EXPECT_EQ(t["functions"][0]["paths"][1], l["paths"][1]);
  EXPECT_EQ(t["functions"][0]["execution_count"], 3);

  // Text: header, marks, lines; default --top 10.
  r = RunTool("paths '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("loopif (pd.c:30): 6 paths, 5 executed, 11 path "
                       "counts, dense storage, early termination counted; "
                       "cuts: back edges 6->3, cut blocks none"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("latchexit (ph.c:10): 6 paths, 5 executed, 6 path "
                       "counts, hashed storage"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cut blocks 6"), std::string::npos) << r.out;
  const std::string n4 =
      std::to_string(PathNumber(loop, pp.loopif, LoopIfPaths()[1]));
  // Shares: 4 of loopif's 11 path executions, of the program's 22
  // (loopif 11, cutfn 5, latchexit 6).
  EXPECT_NE(r.out.find(std::string(21, ' ') + "4  36.4%  18.2%  path " + n4 +
                       ": ^3 4 5 6 -> back edge to 3\n" + std::string(38, ' ') +
                       "lines pd.c:32 pd.c:33 pd.c:34 pd.c:35\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Legend: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": ENTRY 2 3 7 EXIT\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": ^3 EXIT (did not return)\n"), std::string::npos);
  EXPECT_NE(r.out.find(": ENTRY 2 3 4 -> cut at 6\n"), std::string::npos);
  EXPECT_NE(r.out.find(": ^6 -> back edge to 3\n"), std::string::npos);
  // ENTRY's block 2 lists lines 31 and 32; 3 is line 32 again: deduplicated.
  EXPECT_NE(r.out.find("lines pd.c:31 pd.c:32 pd.c:33 pd.c:35\n"),
            std::string::npos)
      << r.out;
  r = RunTool("paths --top 1 --function latch '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(4 more executed paths; --top 0 lists all)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RunTool("paths --top -1 '" + path + "'").status, 2);

  // One ranking across functions: count descending, ties in report order
  // (pd.c loopif:30, pd.c cutfn:50, ph.c latchexit:10), then by number.
  r = RunTool("paths --program --top 6 '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("22 path executions, 14 distinct paths in 3 functions"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    1" + std::string(20, ' ') + "4  36.4%  18.2%  "
                       "loopif (pd.c:30) path " + n4 +
                       ": ^3 4 5 6 -> back edge to 3\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    5" + std::string(20, ' ') + "2  40.0%   9.1%  "
                       "cutfn (pd.c:50) path "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    6" + std::string(20, ' ') + "2  33.3%   9.1%  "
                       "latchexit (ph.c:10) path "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(8 more executed paths; --top 0 lists all)"),
            std::string::npos)
      << r.out;
  r = RunTool("paths --program --top 2 --json '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json rank = json::parse(r.out);
  EXPECT_EQ(rank.at("path_executions"), 22);
  ASSERT_EQ(rank.at("ranking").size(), 2u);
  EXPECT_EQ(rank["ranking"][0]["name"], "loopif");
  EXPECT_EQ(rank["ranking"][0]["count"], 4);
  EXPECT_DOUBLE_EQ(rank["ranking"][0]["function_share"].get<double>(), 4.0 / 11);
  EXPECT_DOUBLE_EQ(rank["ranking"][0]["program_share"].get<double>(), 4.0 / 22);
  EXPECT_EQ(rank["ranking"][0]["lines"][0]["file"], "pd.c");
  EXPECT_EQ(rank["ranking"][1]["count"], 2);
  // Filters apply: only ph.c.
  r = RunTool("paths --program --top 0 --exclude 'pd\\.c$' '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("loopif"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("latchexit"), std::string::npos) << r.out;
  EXPECT_EQ(RunTool("paths --exclude '.' '" + path + "'").status, 2);
}

TEST(Paths, ShowDerivesEdgeCountsFromPaths) {
  const PathProfile pp = PathOnly();
  const std::string path = WriteProfile("pshow.profile", Profile(pp.Recs()));
  Result r = RunTool("show --json '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const std::vector<std::pair<const Function*, std::vector<PathSpec>>> cases = {
      {&pp.pd.functions[1], LoopIfPaths()},
      {&pp.pd.functions[0], CutFnPaths()},
      {&pp.ph.functions[0], LatchExitPaths()}};
  for (const auto& [f, ps] : cases) {
    const json& s = Fn(j, f->name);
    EXPECT_EQ(s.at("edges_from_paths"), true) << f->name;
    const std::vector<uint64_t> want = EdgeCountsByHand(*f, ps);
    ASSERT_EQ(s.at("edges").size(), want.size());
    for (size_t e = 0; e < want.size(); ++e) {
      EXPECT_EQ(s["edges"][e]["count"], want[e]) << f->name << " edge " << e;
      EXPECT_EQ(s["edges"][e]["counted"], true) << f->name << " edge " << e;
    }
  }
  EXPECT_EQ(Fn(j, "loopif").at("execution_count"), 3);
  EXPECT_EQ(Fn(j, "loopif")["blocks"][3]["count"], 11);  // the loop header
  EXPECT_EQ(Fn(j, "cutfn")["blocks"][6]["count"], 2);    // the cut latch
  EXPECT_EQ(Fn(j, "latchexit").at("execution_count"), 3);
  EXPECT_EQ(Fn(j, "latchexit")["blocks"][1]["count"], 3);
  // gcov line counts come from the derived counts too: `return s` ran 3x.
  bool saw = false;
  for (const json& l : j.at("lines"))
    if (l.at("file") == "pd.c" && l.at("line") == 36) {
      saw = true;
      EXPECT_EQ(l.at("count"), 3);
    }
  EXPECT_TRUE(saw);
  r = RunTool("show '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  paths: 5 of 6 executed; edge counts derived from "
                       "them (counted = path)\n"),
            std::string::npos)
      << r.out;
  // A complete path profile conserves flow.
  r = RunTool("verify '" + path + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, path +
                       ": ok: 3 functions, 21 blocks, 24 edges checked; "
                       "paths: 3 functions, 0 path-derived edges "
                       "compared, 0 not comparable\n");
  // stats: edge fields unchanged (no edge counters), path fields added.
  r = RunTool("stats --json '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json st = json::parse(r.out);
  const json& tot = st.at("total");
  EXPECT_EQ(tot.at("static_counters"), 0);
  EXPECT_EQ(tot.at("dynamic_increments"), 0);
  EXPECT_EQ(tot.at("path_functions"), 3);
  EXPECT_EQ(tot.at("path_dense_slots"), 7 + 8);
  EXPECT_EQ(tot.at("path_hashed_functions"), 1);
  EXPECT_EQ(tot.at("path_hashed_entries"), 5);
  EXPECT_EQ(tot.at("path_increments"), 11 + 5 + 6);
  EXPECT_EQ(tot.at("distinct_paths"), 5 + 4 + 5);
  for (const json& f : st.at("functions"))
    if (f.at("name") == "latchexit") {
      EXPECT_EQ(f.at("n_paths"), "6");
      EXPECT_EQ(f.at("path_storage"), "hashed");
      EXPECT_EQ(f.at("path_increments"), 6);
      EXPECT_EQ(f.at("distinct_paths"), 5);
    }
  r = RunTool("stats '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("paths: 3 functions (15 dense counters, 1 hashed "
                       "functions with 5 sparse entries), 22 path "
                       "increments, 14 distinct paths executed"),
            std::string::npos)
      << r.out;
  // Profiles without paths: stats has no path fields, paths refuses.
  const std::string plain = WriteProfile(
      "plain.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}));
  r = RunTool("stats --json '" + plain + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out).at("total").contains("path_functions"));
  r = RunTool("paths '" + plain + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(plain + ": no path data"), std::string::npos) << r.err;
}

// mode=edge,path: ep.c has eloop (loopif's CFG, a counter on every edge,
// dense paths) and elatch (latchexit's, hashed paths).
struct EdgePath {
  TranslationUnit tu;
  std::vector<uint64_t> counters;
  std::vector<ballarus_sparse_entry> sparse;
};

EdgePath EdgeAndPath(bool latch_early, const std::vector<PathSpec>& latch_ps) {
  EdgePath ep;
  ep.tu.source = "ep.c";
  ep.tu.cwd = "/src";
  ep.tu.flags = BALLARUS_META_F_NAIVE | BALLARUS_META_F_PATH;
  ep.tu.files = {"ep.c"};
  Function loop = LoopIf("eloop", 30, 0);        // counters 0..8
  Function latch = LatchExit("elatch", 10, 16);  // counters 16..20
  const Numbered nl =
      Number(loop, {}, PathInfo::kDense, 9, kPathFlagEarlyTermination);
  const Numbered nh = Number(latch, {}, PathInfo::kHashed, 0,
                             latch_early ? kPathFlagEarlyTermination : 0);
  ep.counters.assign(21, 0);
  PutDense(loop, nl, LoopIfPaths(), &ep.counters);
  // The edge counters see every edge the run took, also on paths cut
  // short.
  const std::vector<uint64_t> lc = EdgeCountsByHand(loop, LoopIfPaths());
  for (size_t e = 0; e < lc.size(); ++e)
    ep.counters[loop.edges[e].counter] = lc[e];
  const std::vector<uint64_t> hc = EdgeCountsByHand(latch, LatchExitPaths());
  for (size_t e = 0; e < hc.size(); ++e)
    if (latch.edges[e].counter >= 0)
      ep.counters[latch.edges[e].counter] = hc[e];
  PutSparse(latch, nh, 1, latch_ps, &ep.sparse);
  AttachPathInfo(&loop, nl.info);
  AttachPathInfo(&latch, nh.info);
  ep.tu.functions = {loop, latch};
  ep.tu.n_counters = ep.counters.size();
  return ep;
}

std::string EdgePathProfile(const std::string& name, const EdgePath& ep) {
  Rec r{EncodeMetadata(ep.tu), ep.counters};
  r.sparse = ep.sparse;
  return WriteProfile(name, Profile({r}));
}

TEST(Paths, VerifyComparesPathsWithEdgeCounters) {
  EdgePath ep = EdgeAndPath(true, LatchExitPaths());
  const std::string good = EdgePathProfile("ep.profile", ep);
  Result r = RunTool("verify '" + good + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, good +
                       ": ok: 2 functions, 13 blocks, 15 edges checked; "
                       "paths: 2 functions, 15 path-derived edges "
                       "compared, 0 not comparable\n");
  // show uses the edge counters, not the paths.
  r = RunTool("show --json '" + good + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Fn(json::parse(r.out), "eloop").contains("edges_from_paths"));

  // One edge counter off by one: eloop's 4->6 (false).
  EdgePath bad = ep;
  ++bad.counters[5];
  const std::string badp = EdgePathProfile("ep_bad.profile", bad);
  r = RunTool("verify '" + badp + "'");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(badp + ": eloop (ep.c:30): edge 4->6 (false): edge "
                              "count 5, path-derived 4\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("elatch"), std::string::npos) << r.out;

  // Out-of-range path numbers: dense overflow counter, hashed key >= n.
  EdgePath oor = ep;
  oor.counters[9 + 6] = 2;
  oor.sparse.push_back({1, 6, 3});
  const std::string oorp = EdgePathProfile("ep_oor.profile", oor);
  r = RunTool("verify '" + oorp + "'");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(oorp + ": eloop (ep.c:30): 2 counts of path numbers "
                              ">= 6 in the out-of-range counter "
                              "(instrumentation error)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(oorp + ": elatch (ep.c:10): path number 6 >= 6 "
                              "counted 3 times (instrumentation error)\n"),
            std::string::npos)
      << r.out;
  r = RunTool("paths --json --top 0 '" + oorp + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Fn(json::parse(r.out), "elatch").at("path_out_of_range"), 3);
  EXPECT_EQ(Fn(json::parse(r.out), "elatch").at("distinct_paths"), 5);

  // A negative residue (a "-1" without its +1) is an error too.
  EdgePath neg = ep;
  neg.counters[9 + 5] = ~uint64_t{0};
  r = RunTool("verify '" + EdgePathProfile("ep_neg.profile", neg) + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("count 18446744073709551615 is negative (-1)"),
            std::string::npos)
      << r.out;

  // Without the early-termination flag, a path cut short by exit() is
  // lost: the mismatch is a warning that says why, and verify passes.
  std::vector<PathSpec> lost = LatchExitPaths();
  lost[4].count = 0;  // ^3 EXIT (did not return) was not counted
  const std::string lossy =
      EdgePathProfile("ep_lossy.profile", EdgeAndPath(false, lost));
  r = RunTool("verify '" + lossy + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(lossy + ": elatch (ep.c:10): warning: this build does "
                               "not count paths cut short by "
                               "exit()/longjmp/exceptions"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(lossy + ": elatch (ep.c:10): warning: edge 3->1 "
                               "(fake): edge count 1, path-derived 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; 1 warning\n"), std::string::npos) << r.out;
}

TEST(Paths, VerifyAgainstAnotherProfile) {
  const PathProfile pp = PathOnly();
  const std::string paths =
      WriteProfile("ag_paths.profile", Profile(pp.Recs()));
  // The same functions profiled with a counter on every edge.
  TranslationUnit naive;
  naive.source = "pd_naive.c";
  naive.cwd = "/src";
  naive.flags = BALLARUS_META_F_NAIVE;
  naive.files = {"pd.c"};
  naive.functions = {LoopIf("cutfn", 50, 0), LoopIf("loopif", 30, 9)};
  naive.n_counters = 18;
  std::vector<uint64_t> c(18);
  const std::vector<uint64_t> cc =
      EdgeCountsByHand(naive.functions[0], CutFnPaths());
  const std::vector<uint64_t> lc =
      EdgeCountsByHand(naive.functions[1], LoopIfPaths());
  std::copy(cc.begin(), cc.end(), c.begin());
  std::copy(lc.begin(), lc.end(), c.begin() + 9);
  const std::string edges =
      WriteProfile("ag_edges.profile", Profile({{EncodeMetadata(naive), c}}));
  Result r = RunTool("verify '" + paths + "' --against '" + edges + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, paths +
                       ": ok: 3 functions, 21 blocks, 24 edges checked; "
                       "paths: 3 functions, 0 path-derived edges "
                       "compared, 0 not comparable; against " +
                       edges +
                       ": 2 functions, 18 edges compared, 0 not "
                       "comparable\n");
  // Either way round.
  r = RunTool("verify '" + edges + "' --against '" + paths + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("; against " + paths + ": 2 functions, 18 edges"),
            std::string::npos)
      << r.out;

  // One edge off: reported with both files named, exit 1.
  std::vector<uint64_t> off = c;
  ++off[9 + 4];  // loopif 4->5
  const std::string edges2 = WriteProfile(
      "ag_edges2.profile", Profile({{EncodeMetadata(naive), off}}));
  r = RunTool("verify '" + paths + "' --against '" + edges2 + "'");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(paths +
                       ": loopif (pd.c:30): edge 4->5 (true): edge "
                       "count 5 in " +
                       edges2 + ", path-derived 4 in " + paths + "\n"),
            std::string::npos)
      << r.out;

  // Edges the other profile cannot determine are not comparable.
  TranslationUnit partial = naive;
  // 4->5, 4->6, 5->6: an undirected cycle of uncounted edges, which flow
  // conservation cannot solve.
  for (size_t e : {4, 5, 6}) partial.functions[1].edges[e].counter = kNoCounter;
  const std::string edges3 = WriteProfile(
      "ag_edges3.profile", Profile({{EncodeMetadata(partial), c}}));
  r = RunTool("verify '" + paths + "' --against '" + edges3 + "'");
  EXPECT_NE(r.out.find("; against " + edges3 +
                       ": 2 functions, 15 edges "
                       "compared, 3 not comparable\n"),
            std::string::npos)
      << r.out;

  // Nothing in common: a clear error.
  const std::string other = WriteProfile(
      "ag_other.profile", Profile({{EncodeMetadata(TuA()), CountersA()}}));
  r = RunTool("verify '" + paths + "' --against '" + other + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(other + ": no function matches a function of " + paths),
            std::string::npos)
      << r.err;
  r = RunTool("verify '" + other + "' --against '" + other + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("has path data"), std::string::npos) << r.err;
}

TEST(Paths, Decode) {
  const PathProfile pp = PathOnly();
  const std::string path = WriteProfile("dec.profile", Profile(pp.Recs()));
  const Function& latch = pp.ph.functions[0];
  const PathSpec never = LatchExitPaths()[5];  // ENTRY 2 3 EXIT, no return
  const uint64_t id = PathNumber(latch, pp.latch, never);
  Result r = RunTool("paths --json --function '^latchexit$' --decode " +
                     std::to_string(id) + " '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("decoded").size(), 1u);
  const json& d = j["decoded"][0];
  EXPECT_EQ(d.at("name"), "latchexit");
  EXPECT_EQ(d.at("n_paths"), "6");
  json want = ExpectedPath(latch, pp.latch, never);
  want["lines"] =
      json::parse(R"([{"file":"ph.c","line":11},{"file":"ph.c","line":12}])");
  EXPECT_EQ(d.at("path"), want);
  r = RunTool("paths --function '^latchexit$' --decode " + std::to_string(id) +
              " '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "latchexit (ph.c:10): path " + std::to_string(id) +
                       " of 6, executed 0 times\n"
                       "  blocks ENTRY 2 3 EXIT (did not return)\n"
                       "  lines ph.c:11 ph.c:12\n");
  // Every number below n_paths decodes, each to another block sequence.
  std::vector<std::string> seen;
  for (int k = 0; k < 7; ++k) {
    r = RunTool("paths --json --function cutfn --decode " + std::to_string(k) +
                " '" + path + "'");
    ASSERT_EQ(r.status, 0) << k << r.err;
    seen.push_back(json::parse(r.out)["decoded"][0]["path"].dump());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
  // Out of range, however large; not a number; no --function.
  for (const char* bad : {"6", "123456789012345678901234567890"}) {
    r = RunTool(std::string("paths --function '^latchexit$' --decode ") + bad +
                " '" + path + "'");
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(
        r.err.find(path + ": latchexit (ph.c:10): path " + std::string(bad) +
                   " is out of range: the function has 6 paths (0 to "
                   "5)"),
        std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  r = RunTool("paths --function latch --decode -1 '" + path + "'");
  EXPECT_EQ(r.status, 2);
  r = RunTool("paths --function latch --decode 1x '" + path + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a decimal path number"), std::string::npos);
  r = RunTool("paths --decode 1 '" + path + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--decode needs --function"), std::string::npos);
}

TEST(Paths, ComdatCopiesSumByPathNumber) {
  // The linker kept x.c's copy for two calls and y.c's for one (e.g. two
  // shared libraries): counts add up by path number.  z.c cut its copy
  // differently: kept apart.
  auto tu = [](const std::string& src, std::vector<uint32_t> cut_blocks,
               const std::vector<PathSpec>& ps, std::vector<uint64_t>* c) {
    TranslationUnit t;
    t.source = src;
    t.cwd = "/src";
    t.flags = BALLARUS_META_F_PATH;
    t.files = {src, "loop.h"};
    Function f = LoopIf("_Z4loopi", 30, -1);
    f.demangled = "loop(int)";
    f.file = 1;
    f.flags = kFunctionComdat;
    for (Block& b : f.blocks)
      for (Location& l : b.lines) l.file = 1;
    const Numbered n =
        Number(f, cut_blocks, PathInfo::kDense, 0, kPathFlagEarlyTermination);
    PutDense(f, n, ps, c);
    AttachPathInfo(&f, n.info);
    t.functions = {f};
    t.n_counters = c->size();
    return t;
  };
  std::vector<PathSpec> two = LoopIfPaths(), one = LoopIfPaths();
  for (PathSpec& p : two) p.count = 0;
  two[0].count = 2;  // loop(4) twice: i = 0 ...
  two[1].count = 4;
  two[2].count = 2;
  two[3].count = 2;
  for (PathSpec& p : one) p.count = 0;
  one[4].count = 1;  // loop(0)
  one[3].count = 0;
  std::vector<uint64_t> cx, cy, cz;
  const TranslationUnit x = tu("x.c", {}, two, &cx);
  const TranslationUnit y = tu("y.c", {}, one, &cy);
  std::vector<PathSpec> zp = CutFnPaths();
  const TranslationUnit z = tu("z.c", {6}, zp, &cz);
  const std::string path =
      WriteProfile("comdat_paths.profile", Profile({{EncodeMetadata(x), cx},
                                                    {EncodeMetadata(y), cy},
                                                    {EncodeMetadata(z), cz}}));
  Result r = RunTool("paths --json --top 0 '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("functions").size(), 2u);
  const Function& f = x.functions[0];
  Numbered n = Number(f, {}, PathInfo::kDense, 0, 0);
  int seen = 0;
  for (const json& g : j.at("functions")) {
    if (g.at("tus") == json::array({"x.c", "y.c"})) {
      ++seen;
      // The program: x and y's 11 path executions and z's 5 (CutFnPaths).
      EXPECT_EQ(g.at("paths"), ExpectedPaths(f, n, LoopIfPaths(), 16));
      EXPECT_EQ(g.at("execution_count"), 3);
    } else {
      ++seen;
      EXPECT_EQ(g.at("tus"), json::array({"z.c"}));
      EXPECT_EQ(g.at("n_paths"), "7");
      EXPECT_EQ(g.at("execution_count"), 1);
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(RunTool("verify '" + path + "'").status, 0);
}

TEST(Paths, DamagedPathDataRejected) {
  PathProfile pp = PathOnly();
  // Bytes that are no path info: the metadata decoder names the offset.
  TranslationUnit t = pp.pd;
  t.functions[1].extensions[0].bytes = {0xff};
  std::string p = WriteProfile("badext.profile",
                               Profile({{EncodeMetadata(t), pp.pd_counters}}));
  ExpectBadInput(p, "bad path extension bytes");
  Result r = RunTool("paths '" + p + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("ballarus-reconstruct: " + p + ": offset ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("loopif"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("path info"), std::string::npos) << r.err;

  // A path count the CFG does not have.
  t = pp.pd;
  PathInfo info = pp.loopif.info;
  info.n_paths = 5;
  t.functions[1].extensions[0].bytes = EncodePathInfo(info);
  p = WriteProfile("badcount.profile",
                   Profile({{EncodeMetadata(t), pp.pd_counters}}));
  ExpectBadInput(p, "wrong n_paths");
  r = RunTool("paths '" + p + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("record 0: metadata: function 'loopif': path "
                       "extension: declares 5 paths, the CFG with its cuts "
                       "has 6"),
            std::string::npos)
      << r.err;

  // Cuts that leave the loop a cycle.
  t = pp.pd;
  info = pp.loopif.info;
  info.cut_edges.clear();
  t.functions[1].extensions[0].bytes = EncodePathInfo(info);
  p = WriteProfile("badcuts.profile",
                   Profile({{EncodeMetadata(t), pp.pd_counters}}));
  ExpectBadInput(p, "cycle");
  r = RunTool("verify '" + p + "'");
  EXPECT_NE(r.err.find("function 'loopif': path extension: the cuts leave a "
                       "cycle"),
            std::string::npos)
      << r.err;

  // A sparse entry for a function without a hash table.
  Rec a{EncodeMetadata(pp.pd), pp.pd_counters};
  a.sparse = {{0, 1, 1}};
  p = WriteProfile("badsparse.profile", Profile({a}));
  ExpectBadInput(p, "sparse entry of a dense function");
  r = RunTool("show '" + p + "'");
  EXPECT_NE(r.err.find("sparse entry 0 names function 0 ('cutfn'), which has "
                       "no hashed path table"),
            std::string::npos)
      << r.err;
}

TEST(Paths, ArbitraryPathDataNeverCrashes) {
  // Path extensions and counts drawn at random, in blobs with correct
  // stamps (so only the decoders stand between them and the CLI): every
  // run ends with 0, 1 or 2, and a 2 is one line naming the file.
  uint64_t seed = 12345;
  auto rnd = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  const uint64_t kPathCounts[] = {0, 1, 5, 6, 7, 12, 1000, uint64_t{1} << 62};
  int loaded = 0, rejected = 0, failed_verify = 0;
  for (int round = 0; round < 40; ++round) {
    TranslationUnit t;
    t.source = "r.c";
    t.cwd = "/src";
    t.flags = BALLARUS_META_F_PATH | (rnd(2) ? BALLARUS_META_F_EDGE : 0);
    t.files = {"r.c"};
    t.n_counters = 24;
    t.functions = {LoopIf("f0", 10, rnd(2) ? -1 : 0),
                   LatchExit("f1", 20, rnd(2) ? -1 : 9)};
    std::vector<bool> hashed;
    for (Function& f : t.functions) {
      PathInfo info;
      info.storage = uint32_t(rnd(2));
      info.base = rnd(20);
      info.n_paths = kPathCounts[rnd(8)];
      info.flags = uint32_t(rnd(2));
      for (uint32_t e = 0; e < f.edges.size(); ++e)
        if (rnd(3) == 0) info.cut_edges.push_back(e);
      for (uint32_t b = 2; b < f.blocks.size(); ++b)
        if (rnd(4) == 0) info.cut_blocks.push_back(b);
      if (rnd(3)) info = Number(f, {}, info.storage, info.base, 0).info;
      hashed.push_back(info.storage == PathInfo::kHashed);
      AttachPathInfo(&f, info);
    }
    std::vector<uint64_t> c(24);
    for (uint64_t& x : c) x = rnd(4) ? rnd(5) : ~rnd(3);
    Rec r{EncodeMetadata(t), c};
    // Mostly entries of hashed functions, sometimes of any function.
    const bool any = rnd(6) == 0;
    for (uint64_t fn = 0; fn < 3; ++fn)
      for (uint64_t k = 0; k < 8; ++k)
        if ((any || (fn < 2 && hashed[fn])) && rnd(3) == 0)
          r.sparse.push_back({fn, k, 1 + rnd(3)});
    const std::string p = WriteProfile("random_paths.profile", Profile({r}));
    for (const char* cmd : {"show --json ", "verify ", "stats --json ",
                            "paths --top 0 ", "paths --json "}) {
      Result res = RunTool(std::string(cmd) + "'" + p + "'");
      EXPECT_TRUE(res.status == 0 || res.status == 1 || res.status == 2)
          << round << ": " << cmd << res.status << res.err;
      if (std::string(cmd) == "verify ") {
        (res.status == 2 ? rejected : loaded)++;
        if (res.status == 1) ++failed_verify;
      }
      if (res.status == 2) {
        EXPECT_EQ(Lines(res.err), 1) << round << ": " << cmd << res.err;
        EXPECT_EQ(res.err.rfind("ballarus-reconstruct: " + p + ": ", 0), 0u)
            << round << ": " << cmd << res.err;
      } else {
        EXPECT_TRUE(res.err.empty()) << round << ": " << cmd << res.err;
      }
    }
    if (HasFailure()) return;
  }
  // The draw covers both outcomes, and verify finds the random counts bad.
  EXPECT_GT(loaded, 3);
  EXPECT_GT(rejected, 3);
  EXPECT_GT(failed_verify, 3);
}

}  // namespace
}  // namespace ballarus
