// overlap_test.cc — the overlap figure (reconstruct/overlap.h) on
// hand-made edge counts, against fractions computed by hand.
#include "reconstruct/overlap.h"

#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

std::vector<Count> Counts(std::vector<uint64_t> v) {
  return std::vector<Count>(v.begin(), v.end());
}

OverlapInput Both(const std::vector<Count>& a, const std::vector<Count>& b) {
  return OverlapInput{&a, &b, true};
}

TEST(Overlap, IdenticalSharesAre100PercentWhateverTheRunLength) {
  // B ran twice as long: every edge's share is the same.
  const std::vector<Count> fa = Counts({3, 1, 2}), ga = Counts({5});
  const std::vector<Count> fb = Counts({6, 2, 4}), gb = Counts({10});
  const ProgramOverlap p = ComputeOverlap({Both(fa, fb), Both(ga, gb)});
  ASSERT_TRUE(p.overlap);
  EXPECT_DOUBLE_EQ(*p.overlap, 1.0);
  EXPECT_EQ(p.total_a, 11);
  EXPECT_EQ(p.total_b, 22);
  ASSERT_EQ(p.functions.size(), 2u);
  EXPECT_DOUBLE_EQ(*p.functions[0].overlap, 1.0);
  EXPECT_DOUBLE_EQ(p.functions[0].share_a, 6.0 / 11);
  EXPECT_DOUBLE_EQ(p.functions[0].contribution, 6.0 / 11);
  EXPECT_NEAR(p.functions[0].loss, 0, 1e-15);
  EXPECT_EQ(p.unknown, 0u);
}

TEST(Overlap, DisjointProfilesAreZero) {
  // f ran only in A, g only in B: no edge ran in both.
  const std::vector<Count> fa = Counts({2, 2}), fb = Counts({0, 0});
  const std::vector<Count> ga = Counts({0}), gb = Counts({7});
  const ProgramOverlap p = ComputeOverlap({Both(fa, fb), Both(ga, gb)});
  ASSERT_TRUE(p.overlap);
  EXPECT_DOUBLE_EQ(*p.overlap, 0.0);
  ASSERT_TRUE(p.functions[0].overlap);
  EXPECT_DOUBLE_EQ(*p.functions[0].overlap, 0.0);
  EXPECT_DOUBLE_EQ(*p.functions[1].overlap, 0.0);
  // Each loses half its side's whole share: 1/2 + 1/2 = 1 - 0.
  EXPECT_DOUBLE_EQ(p.functions[0].loss, 0.5);
  EXPECT_DOUBLE_EQ(p.functions[1].loss, 0.5);
}

TEST(Overlap, PartialOverlapByHand) {
  // A: f = (1, 3), g = (4): ΣA = 8.   B: f = (2, 2), g = (2): ΣB = 6.
  // f: min(1/8, 2/6) + min(3/8, 2/6) = 1/8 + 1/3 = 11/24;
  // g: min(4/8, 2/6) = 1/3;  program: 11/24 + 8/24 = 19/24.
  const std::vector<Count> fa = Counts({1, 3}), ga = Counts({4});
  const std::vector<Count> fb = Counts({2, 2}), gb = Counts({2});
  const ProgramOverlap p = ComputeOverlap({Both(fa, fb), Both(ga, gb)});
  ASSERT_TRUE(p.overlap);
  EXPECT_DOUBLE_EQ(*p.overlap, 19.0 / 24);
  const FunctionOverlap &f = p.functions[0], &g = p.functions[1];
  EXPECT_DOUBLE_EQ(f.contribution, 11.0 / 24);
  EXPECT_DOUBLE_EQ(g.contribution, 1.0 / 3);
  // Function level, on f's own totals 4 and 4: min(1/4, 2/4) + min(3/4,
  // 2/4) = 3/4; g's one edge: 100%.
  EXPECT_DOUBLE_EQ(*f.overlap, 0.75);
  EXPECT_DOUBLE_EQ(*g.overlap, 1.0);
  // Shares 4/8 and 4/6; loss (1/2 + 2/3)/2 - 11/24 = 1/8.  g: (1/2 +
  // 1/3)/2 - 1/3 = 1/12.  1/8 + 1/12 = 5/24 = 1 - 19/24.
  EXPECT_DOUBLE_EQ(f.share_a, 0.5);
  EXPECT_DOUBLE_EQ(f.share_b, 2.0 / 3);
  EXPECT_DOUBLE_EQ(f.loss, 1.0 / 8);
  EXPECT_DOUBLE_EQ(g.loss, 1.0 / 12);
}

TEST(Overlap, OneSidedAndChangedFunctionsCountInTheTotalsOnly) {
  // f as in both sides; h only in A (count 4 of ΣA = 8); k's CFG changed
  // (2 of ΣA, 2 of ΣB = 4).
  const std::vector<Count> fa = Counts({1, 1}), fb = Counts({1, 1});
  const std::vector<Count> h = Counts({4});
  const std::vector<Count> ka = Counts({2}), kb = Counts({1, 1});
  const ProgramOverlap p = ComputeOverlap(
      {Both(fa, fb), OverlapInput{&h, nullptr, false},
       OverlapInput{&ka, &kb, false}});
  EXPECT_EQ(p.total_a, 8);
  EXPECT_EQ(p.total_b, 4);
  // Only f's edges: min(1/8, 1/4) * 2 = 1/4.
  ASSERT_TRUE(p.overlap);
  EXPECT_DOUBLE_EQ(*p.overlap, 0.25);
  EXPECT_DOUBLE_EQ(*p.functions[0].overlap, 1.0);
  ASSERT_TRUE(p.functions[1].overlap);  // ran on one side only
  EXPECT_DOUBLE_EQ(*p.functions[1].overlap, 0.0);
  EXPECT_FALSE(p.functions[2].overlap);  // not comparable
  EXPECT_DOUBLE_EQ(p.functions[2].share_b, 0.5);
  // Losses: f (1/4 + 1/2)/2 - 1/4 = 1/8; h 1/4; k (1/4 + 1/2)/2 = 3/8.
  EXPECT_DOUBLE_EQ(p.functions[0].loss, 1.0 / 8);
  EXPECT_DOUBLE_EQ(p.functions[1].loss, 0.25);
  EXPECT_DOUBLE_EQ(p.functions[2].loss, 3.0 / 8);
}

TEST(Overlap, NothingRanHasNoFigure) {
  const std::vector<Count> a = Counts({0, 0}), b = Counts({0, 0});
  const ProgramOverlap p = ComputeOverlap({Both(a, b)});
  EXPECT_FALSE(p.overlap);
  EXPECT_FALSE(p.functions[0].overlap);
  EXPECT_FALSE(ComputeOverlap({}).overlap);
  // A function present on one side that never ran has no figure either.
  const ProgramOverlap q = ComputeOverlap({OverlapInput{&a, nullptr, false}});
  EXPECT_FALSE(q.functions[0].overlap);
}

TEST(Overlap, UnknownCountsAreZeroAndCounted) {
  // A: (unknown, 2); B: (1, 1).  ΣA = 2, ΣB = 2: min(0, 1/2) + min(1, 1/2).
  const std::vector<Count> a = {std::nullopt, Count(2)}, b = Counts({1, 1});
  const ProgramOverlap p = ComputeOverlap({Both(a, b)});
  EXPECT_EQ(p.unknown, 1u);
  EXPECT_EQ(p.functions[0].unknown, 1u);
  EXPECT_DOUBLE_EQ(*p.overlap, 0.5);
}

TEST(Overlap, SymmetricInItsSides) {
  const std::vector<Count> fa = Counts({1, 3}), ga = Counts({4});
  const std::vector<Count> fb = Counts({2, 2}), gb = Counts({2});
  const ProgramOverlap ab = ComputeOverlap({Both(fa, fb), Both(ga, gb)});
  const ProgramOverlap ba = ComputeOverlap({Both(fb, fa), Both(gb, ga)});
  EXPECT_DOUBLE_EQ(*ab.overlap, *ba.overlap);
  EXPECT_DOUBLE_EQ(ab.functions[0].loss, ba.functions[0].loss);
}

}  // namespace
}  // namespace ballarus
