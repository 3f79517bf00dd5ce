// paths_check_test.cc — `verify` on path profiles (edge counters against
// paths, --against another profile, out-of-range counts), and damaged or
// arbitrary path data refused with one line, never a crash; profiles of
// hand-made functions (reconstruct/path_test_fixtures.h).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metadata.h"
#include "core/model.h"
#include "core/path_profile.h"
#include "gtest/gtest.h"
#include "reconstruct/cli_test_util.h"
#include "reconstruct/path_test_fixtures.h"
#include "runtime/ballarus_format.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace {

using namespace cli_test;  // NOLINT: the tests' shared vocabulary

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
