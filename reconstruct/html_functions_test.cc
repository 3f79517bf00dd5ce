// html_functions_test.cc — GroupFunctionCopies on hand-made report models:
// copies of one CFG summed (calls, blocks, edges, lines, paths re-ranked),
// copies of different CFGs kept apart and labelled, other functions left
// alone.
#include "reconstruct/html_functions.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

using report::FunctionReport;
using report::PathReport;

// A copy of f (file 0, line 3) from TU `tu`: ENTRY -> 2 -> EXIT, block 2
// on line 4, called `calls` times; its paths 0 and 1 ran a and b times.
FunctionReport Copy(uint32_t tu, uint64_t calls, uint64_t a, uint64_t b) {
  FunctionReport f;
  f.name = "f";
  f.line = 3;
  f.checksum = 77;
  f.tus = {tu};
  f.execution_count = calls;
  f.blocks.resize(3);
  for (auto& bl : f.blocks) bl.count = calls;
  f.blocks[2].lines = {{0, 4}};
  f.edges.resize(2);
  f.edges[0].src = kEntryBlock;
  f.edges[0].dst = 2;
  f.edges[1].src = 2;
  f.edges[1].dst = kExitBlock;
  for (auto& e : f.edges) e.count = calls;
  report::LineCount l;
  l.where = {0, 4};
  l.count = static_cast<int64_t>(calls);
  f.lines = {l};
  f.paths.emplace();
  f.paths->n_paths = 2;
  f.paths->total = a + b;
  PathReport p0, p1;
  p0.number = 0;
  p0.count = a;
  p1.number = 1;
  p1.count = b;
  if (a >= b)
    f.paths->executed = {p0, p1};
  else
    f.paths->executed = {p1, p0};
  return f;
}

report::Report TwoTus() {
  report::Report r;
  r.tus.resize(3);
  r.tus[0].source = "lib.c";
  r.tus[1].source = "lib.c";
  r.tus[2].source = "other.c";
  return r;
}

TEST(GroupFunctionCopies, SameCfgIsSummed) {
  report::Report r = TwoTus();
  r.functions = {Copy(0, 3, 2, 1), Copy(1, 4, 0, 4)};
  r.functions.push_back(Copy(2, 1, 1, 0));
  r.functions.back().name = "g";
  const std::vector<ShownFunction> shown = GroupFunctionCopies(r, {0, 1, 2});
  ASSERT_EQ(shown.size(), 2u);
  const FunctionReport& f = shown[0].f;
  EXPECT_EQ(shown[0].copies, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(shown[0].build, "");
  EXPECT_EQ(f.execution_count, Count(7));
  EXPECT_EQ(f.blocks[2].count, Count(7));
  EXPECT_EQ(f.edges[1].count, Count(7));
  EXPECT_EQ(f.lines[0].count, 7);
  EXPECT_EQ(f.tus, (std::vector<uint32_t>{0, 1}));
  // Paths by number: 0 ran 2 + 0, 1 ran 1 + 4; path 1 now ranks first.
  ASSERT_EQ(f.paths->executed.size(), 2u);
  EXPECT_EQ(f.paths->executed[0].number, 1u);
  EXPECT_EQ(f.paths->executed[0].count, 5u);
  EXPECT_EQ(f.paths->executed[1].count, 2u);
  EXPECT_EQ(f.paths->total, 7u);
  EXPECT_EQ(shown[1].f.name, "g");
  EXPECT_EQ(shown[1].f.execution_count, Count(1));
}

TEST(GroupFunctionCopies, UnknownCountStaysUnknown) {
  report::Report r = TwoTus();
  r.functions = {Copy(0, 3, 2, 1), Copy(1, 4, 0, 4)};
  r.functions[1].blocks[2].count.reset();
  const std::vector<ShownFunction> shown = GroupFunctionCopies(r, {0, 1});
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_FALSE(shown[0].f.blocks[2].count.has_value());
  EXPECT_EQ(shown[0].f.execution_count, Count(7));
}

TEST(GroupFunctionCopies, DifferentCfgsAreLabelled) {
  report::Report r = TwoTus();
  r.functions = {Copy(0, 3, 2, 1), Copy(1, 4, 0, 4)};
  r.functions[1].blocks[2].lines = {{0, 4}, {0, 5}};  // another build
  const std::vector<ShownFunction> shown = GroupFunctionCopies(r, {0, 1});
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0].f.execution_count, Count(3));
  EXPECT_EQ(shown[1].f.execution_count, Count(4));
  EXPECT_EQ(shown[0].build, "build 1 of 2: lib.c (profile record 1)");
  EXPECT_EQ(shown[1].build, "build 2 of 2: lib.c (profile record 2)");
}

TEST(GroupFunctionCopies, OnlyTheFunctionsAsked) {
  report::Report r = TwoTus();
  r.functions = {Copy(0, 3, 2, 1), Copy(1, 4, 0, 4)};
  const std::vector<ShownFunction> shown = GroupFunctionCopies(r, {1});
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].copies, (std::vector<size_t>{1}));
  EXPECT_EQ(shown[0].f.execution_count, Count(4));
}

}  // namespace
}  // namespace ballarus
