// reconstruct_test.cc — runs the real ballarus-reconstruct binary on
// profiles built in memory from hand-made TUs (EncodeMetadata + profile_io)
// and checks its JSON, exit codes, merging, COMDAT summing and the handling
// of damaged input.  Path profiles: paths_test.cc and paths_check_test.cc.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "gtest/gtest.h"
#include "reconstruct/cli_test_util.h"
#include "runtime/ballarus_format.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace {

using namespace cli_test;  // NOLINT: the tests' shared vocabulary


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
  const std::string p2 =
      WriteProfile("m2.profile", Profile({{ma, CountersA(), 2}}, 2));
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
  // The merged profile's runs are its largest record's: TuA's 1 + 2 (x.c
  // and y.c, of another program, ran once).
  EXPECT_EQ(j.at("runs"), 3);
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
  EXPECT_EQ(r.out, "ballarus-reconstruct 0.4.0+dev\n");
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

}  // namespace
}  // namespace ballarus
