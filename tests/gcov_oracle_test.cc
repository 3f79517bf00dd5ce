// gcov_oracle_test.cc — checks the independent .gcno/.gcda reader against
// gcov itself on real gcov builds of corpus programs, its solver on a
// hand-made graph, and its rejection of damaged files.
#include "reconstruct/gcov_oracle.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness.h"

namespace {

using gcov_oracle::Arc;
using gcov_oracle::Function;
using gcov_oracle::Unit;

// if (c) A else B on a diamond: ENTRY(0) -> 2 -> {3, 4} -> 5 -> EXIT(1).
// The closed graph has 6 blocks and 7 arcs (the 6 below plus the virtual
// EXIT->ENTRY), so 7 - 6 + 1 = 2 chords are measured: 0->2 and 2->4; the
// spanning tree 2->3, 3->5, 4->5, 5->1 and EXIT->ENTRY is solved.
TEST(SolveArcs, DiamondFromChords) {
  Function fn;
  fn.name = "diamond";
  fn.n_blocks = 6;
  auto arc = [](uint32_t s, uint32_t d, bool tree, int64_t c) {
    Arc a;
    a.src = s;
    a.dst = d;
    a.flags = tree ? gcov_oracle::kArcOnTree : 0;
    a.count = tree ? 0 : c;
    return a;
  };
  fn.arcs = {arc(0, 2, false, 10), arc(2, 3, true, 0), arc(2, 4, false, 3),
             arc(3, 5, true, 0),   arc(4, 5, true, 0), arc(5, 1, true, 0)};
  std::string error;
  ASSERT_TRUE(gcov_oracle::SolveArcs(&fn, &error)) << error;
  EXPECT_EQ(fn.arcs[1].count, 7);
  EXPECT_EQ(fn.arcs[3].count, 7);
  EXPECT_EQ(fn.arcs[4].count, 3);
  EXPECT_EQ(fn.arcs[5].count, 10);
  EXPECT_EQ(fn.execution_count, 10);
  EXPECT_EQ(fn.block_counts[5], 10);
  EXPECT_EQ(fn.block_counts[1], 10);
  EXPECT_EQ(fn.negative_arcs, 0);
}

TEST(SolveArcs, UndeterminedArcIsAnError) {
  Function fn;
  fn.name = "loop";
  fn.n_blocks = 3;
  Arc a;
  a.src = 0, a.dst = 2, a.flags = gcov_oracle::kArcOnTree;
  Arc b = a;
  b.src = 2, b.dst = 2;  // self loop, on the tree: nothing determines it
  Arc c = a;
  c.src = 2, c.dst = 1, c.flags = 0, c.count = 4;
  fn.arcs = {a, b, c};
  std::string error;
  EXPECT_FALSE(gcov_oracle::SolveArcs(&fn, &error));
  EXPECT_NE(error.find("'loop': arc 2->2 is not determined"), std::string::npos)
      << error;
}

struct GcovRun {
  harness::Build build;
  harness::CommandResult run;
};

GcovRun BuildAndRun(const std::string& name, const std::string& opt) {
  harness::Program prog;
  bool found = false;
  for (const auto& p : harness::LoadManifestOrDie())
    if (p.name == name) prog = p, found = true;
  EXPECT_TRUE(found) << name;
  GcovRun r;
  std::string root = harness::TempRoot() + "/oracle_" + name + opt;
  harness::BuildOptions o;
  o.kind = harness::Kind::kGcov;
  o.opt = opt;
  r.build = harness::BuildProgram(prog, o, root + "/build");
  EXPECT_TRUE(r.build.ok) << r.build.log;
  harness::MakeFreshDir(root + "/run");
  r.run = harness::Run(harness::Quote(r.build.exe), root + "/run");
  return r;
}

class OracleVsGcov
    : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

// Every function gcov reports has the same execution count and block count
// in the oracle; every function of the oracle with data is reported by gcov
// unless it is artificial (gcov drops those).
TEST_P(OracleVsGcov, FunctionCountsAgree) {
  const std::string name = GetParam().first, opt = GetParam().second;
  GcovRun r = BuildAndRun(name, opt);
  ASSERT_TRUE(r.build.ok);
  int compared = 0;
  for (const std::string& unit : r.build.units) {
    Unit u;
    std::string error;
    ASSERT_TRUE(gcov_oracle::ReadGcno(r.build.dir + "/" + unit + ".gcno", &u,
                                      &error))
        << error;
    ASSERT_TRUE(gcov_oracle::ReadGcda(r.build.dir + "/" + unit + ".gcda", &u,
                                      &error))
        << error;
    EXPECT_GE(u.runs, 1u);
    harness::GcovJson g;
    ASSERT_TRUE(harness::RunGcovJson(r.build.dir, unit, &g, &error)) << error;
    std::map<std::string, const Function*> by_name;
    for (const Function& f : u.functions) by_name[f.name] = &f;
    for (const auto& gf : g.functions) {
      auto it = by_name.find(gf.name);
      ASSERT_NE(it, by_name.end()) << unit << ": gcov reports " << gf.name
                                   << " which the oracle did not read";
      const Function& f = *it->second;
      EXPECT_EQ(f.execution_count, gf.execution_count)
          << unit << ": " << gf.name << " execution count, oracle vs gcov";
      EXPECT_EQ(int64_t(f.n_blocks) - 2, gf.blocks) << unit << ": " << gf.name;
      EXPECT_EQ(f.start_line, gf.start_line) << unit << ": " << gf.name;
      compared++;
    }
    for (const Function& f : u.functions) {
      if (f.artificial || !f.has_data) continue;
      bool reported = false;
      for (const auto& gf : g.functions) reported |= gf.name == f.name;
      EXPECT_TRUE(reported) << unit << ": " << f.name << " not in gcov JSON";
      // Only setjmp receivers make the measured counts inconsistent.
      if (name != "setjmp_longjmp") {
        EXPECT_EQ(f.negative_arcs, 0) << unit << ": " << f.name;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, OracleVsGcov,
    ::testing::Values(std::make_pair("loops", "-O0"),
                      std::make_pair("loops", "-O2"),
                      std::make_pair("exceptions", "-O0"),
                      std::make_pair("exceptions", "-O2"),
                      std::make_pair("templates", "-O0"),
                      std::make_pair("setjmp_longjmp", "-O0"),
                      std::make_pair("computed_goto", "-O2"),
                      std::make_pair("exit_deep", "-O0")),
    [](const auto& info) {
      return std::string(info.param.first) + (info.param.second + 1);
    });

// Hand-checked values of one program, so the oracle is pinned to the
// program's semantics and not only to gcov's: in loops.c, mix() runs 38
// times and main once.
TEST(OracleValues, LoopsCounts) {
  GcovRun r = BuildAndRun("loops", "-O0");
  ASSERT_TRUE(r.build.ok);
  EXPECT_EQ(r.run.status, 0);
  Unit u;
  std::string error;
  ASSERT_TRUE(gcov_oracle::ReadGcno(r.build.dir + "/loops.gcno", &u, &error));
  ASSERT_TRUE(gcov_oracle::ReadGcda(r.build.dir + "/loops.gcda", &u, &error))
      << error;
  std::map<std::string, int64_t> exec;
  for (const Function& f : u.functions) exec[f.name] = f.execution_count;
  EXPECT_EQ(exec["mix"], 38);
  EXPECT_EQ(exec["main"], 1);
  // The sum of counts into EXIT equals the activations of every function.
  for (const Function& f : u.functions) {
    int64_t into_exit = 0;
    for (const Arc& a : f.arcs)
      if (a.dst == 1) into_exit += a.count;
    EXPECT_EQ(into_exit, f.execution_count) << f.name;
  }
}

// A damaged notes or data file yields one message naming the file and the
// offset, never a crash.
TEST(OracleErrors, DamagedFiles) {
  GcovRun r = BuildAndRun("switch", "-O0");
  ASSERT_TRUE(r.build.ok);
  const std::string gcno_path = r.build.dir + "/switch.gcno";
  const std::string gcda_path = r.build.dir + "/switch.gcda";
  std::string gcno_s = harness::ReadFileOrDie(gcno_path);
  std::string gcda_s = harness::ReadFileOrDie(gcda_path);
  std::vector<uint8_t> gcno(gcno_s.begin(), gcno_s.end());
  std::vector<uint8_t> gcda(gcda_s.begin(), gcda_s.end());
  Unit u;
  std::string error;
  ASSERT_TRUE(gcov_oracle::ParseGcno("n.gcno", gcno, &u, &error)) << error;

  // Every truncation of the notes file either parses a prefix of whole
  // records or fails with "n.gcno: offset N: ...".
  int failures = 0;
  for (size_t len = 0; len < gcno.size(); len += 7) {
    std::vector<uint8_t> cut(gcno.begin(), gcno.begin() + len);
    Unit v;
    std::string e;
    if (!gcov_oracle::ParseGcno("n.gcno", cut, &v, &e)) {
      failures++;
      EXPECT_EQ(e.rfind("n.gcno: offset ", 0), 0u) << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
  }
  EXPECT_GT(failures, 0);

  std::vector<uint8_t> bad_magic = gcno;
  bad_magic[0] ^= 0x40;
  EXPECT_FALSE(gcov_oracle::ParseGcno("n.gcno", bad_magic, &u, &error));
  EXPECT_EQ(error, "n.gcno: offset 0: not a gcov notes file (bad magic)");

  ASSERT_TRUE(gcov_oracle::ParseGcno("n.gcno", gcno, &u, &error));
  std::vector<uint8_t> stale = gcda;
  stale[8] ^= 1;  // the stamp
  EXPECT_FALSE(gcov_oracle::ParseGcda("d.gcda", stale, &u, &error));
  EXPECT_EQ(error.rfind("d.gcda: offset 8: stamp ", 0), 0u) << error;

  std::vector<uint8_t> short_data(gcda.begin(), gcda.end() - 12);
  ASSERT_TRUE(gcov_oracle::ParseGcno("n.gcno", gcno, &u, &error));
  EXPECT_FALSE(gcov_oracle::ParseGcda("d.gcda", short_data, &u, &error));
  EXPECT_EQ(error.rfind("d.gcda: offset ", 0), 0u) << error;

  EXPECT_FALSE(gcov_oracle::ReadGcno(r.build.dir + "/missing.gcno", &u, &error));
  EXPECT_EQ(error, r.build.dir + "/missing.gcno: cannot open");
}

}  // namespace
