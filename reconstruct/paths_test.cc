// paths_test.cc — path profiles (mode=path, mode=edge,path) through the
// real ballarus-reconstruct binary: the test numbers each hand-made
// function's paths itself (reconstruct/path_test_fixtures.h), assigns
// counts to chosen paths, and checks `paths`, the edge counts `show`
// derives from them against counts it adds up by walking each path's
// blocks by hand, `stats`, `--decode`, COMDAT copies summed by path
// number, and the legend of what a path's start and end mean.
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

// The legend of `paths` and of the HTML report's hottest paths says what
// each start and end of a path means for the program, in the words of the
// README's "Which paths a profile holds", and names no plugin mechanism.
TEST(Paths, LegendSaysWhatEachPathEndMeans) {
  const PathProfile pp = PathOnly();
  const std::string path = WriteProfile("legend.profile", Profile(pp.Recs()));
  Result r = RunTool("paths '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t at = r.out.find("Legend: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t end = r.out.find("\n\n", at);
  ASSERT_NE(end, std::string::npos) << r.out;
  // One paragraph: each line after the first indented by two spaces.
  std::string text = r.out.substr(at, end - at);
  for (size_t nl; (nl = text.find("\n  ")) != std::string::npos;)
    text.replace(nl, 3, " ");
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  const std::vector<std::string> meanings = {
      "a path is one run through a function's blocks that never goes "
      "round a loop.",
      "It starts at ENTRY (a call) or, marked \"^\", at the block listed "
      "first: a loop's next iteration, a loop entered, or a cut block.",
      "It ends at EXIT (a return);",
      "\"-> back edge to B\": the iteration ended, going back to the loop's "
      "header B;",
      "\"-> loop entry to B\": the program entered the loop at B",
      "\"-> cut at B\": the program entered block B, where paths are cut (a "
      "call that may not return, or a function with more paths than its "
      "table holds), and the next path starts there;",
      "\"(did not return)\": a call there never returned (exit, abort, "
      "longjmp or an exception);",
      "\"(abnormal jump)\": a computed goto, a nonlocal goto or a longjmp "
      "back to a setjmp left it, and the next path starts at ENTRY, then the "
      "block jumped to.",
      "\"% fn\": share of the function's path executions;",
      "README: \"Which paths a profile holds\"."};
  for (const std::string& m : meanings)
    EXPECT_NE(text.find(m), std::string::npos) << m << "\nin: " << text;
  for (const char* mechanism : {"path-loop-cuts", "path-call-cuts",
                                "entry edges are cut", "cut loop entry"})
    EXPECT_EQ(text.find(mechanism), std::string::npos) << mechanism;

  // The HTML index says the same, "->" escaped.
  const std::string dir = TmpDir() + "/legend-html";
  r = RunTool("html --cfg-functions 0 -o '" + dir + "' '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string index = ReadFile(dir + "/index.html");
  for (std::string m : meanings) {
    if (m.rfind("README", 0) == 0 || m.rfind("\"% fn\"", 0) == 0) continue;
    for (size_t arrow; (arrow = m.find("->")) != std::string::npos;)
      m.replace(arrow, 2, "-&gt;");
    if (m.rfind("a path", 0) == 0) m[0] = 'A';
    EXPECT_NE(index.find(m), std::string::npos) << m << "\nin: " << index;
  }
  for (const char* mechanism : {"path-loop-cuts", "path-call-cuts",
                                "entry edges are cut", "cut loop entry"})
    EXPECT_EQ(index.find(mechanism), std::string::npos) << mechanism;
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


}  // namespace
}  // namespace ballarus
