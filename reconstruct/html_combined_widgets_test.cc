// html_combined_widgets_test.cc — the combined report's cells, histogram
// and ranking on hand-made statistics, against hand-computed figures.
#include "reconstruct/html_combined_widgets.h"

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

CombinedStats Of(const std::vector<uint64_t>& values, unsigned bins = 15) {
  CombinedStats s(bins);
  for (uint64_t v : values) EXPECT_TRUE(s.Add(v));
  return s;
}

// (bin, count) of every column of an SVG histogram, in order.
std::vector<std::pair<unsigned, uint64_t>> Columns(const std::string& svg) {
  std::vector<std::pair<unsigned, uint64_t>> out;
  const std::regex column(R"re(<g data-bin="(\d+)" data-count="(\d+)">)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), column);
       it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stoul((*it)[1]), std::stoull((*it)[2]));
  return out;
}

TEST(HtmlCombinedWidgets, BinBounds) {
  // 15 bins: exponents split at ceil(64 (k-1) / 14): 0, 5, 10, 14, 19, ...
  EXPECT_EQ(BinBoundsText(0, 15), "0");
  EXPECT_EQ(BinBoundsText(1, 15), "1–31");
  EXPECT_EQ(BinBoundsText(2, 15), "32–1023");
  EXPECT_EQ(BinBoundsText(3, 15), "1024–16383");
  EXPECT_EQ(BinBoundsText(4, 15), "16384–524287");
  EXPECT_EQ(BinBoundsText(5, 15), "524288–2^23-1");
  EXPECT_EQ(BinBoundsText(14, 15), "2^60–2^64-1");
  // 65 bins: one per power of two.
  EXPECT_EQ(BinBoundsText(1, 65), "1–1");
  EXPECT_EQ(BinBoundsText(2, 65), "2–3");
  EXPECT_EQ(BinBoundsText(64, 65), "2^63–2^64-1");
  EXPECT_EQ(BinBoundsText(1, 2), "1–2^64-1");
}

TEST(HtmlCombinedWidgets, FiguresOfFiveObservations) {
  // 0, 0, 5, 40, 2000: sum 2045, mean 409; squares 4001625, variance
  // (5 * 4001625 - 2045^2) / 25 = 633044, stddev 795.6406..., CV 1.9453...
  const CombinedStats s = Of({0, 0, 5, 40, 2000});
  EXPECT_EQ(MeanText(s), "409");
  EXPECT_EQ(StddevText(s), "795.64");
  EXPECT_EQ(CvText(s), "1.95");
  const std::string cells = StatsCells(s);
  EXPECT_NE(cells.find(">0–2000</td>"), std::string::npos) << cells;
  EXPECT_NE(cells.find("class=\"zeros\">2</td>"), std::string::npos) << cells;
  EXPECT_NE(cells.find(">5</td>"), std::string::npos) << cells;
  EXPECT_NE(MeanSpreadCell(s).find(">409 ± 795.64</td>"), std::string::npos);
}

TEST(HtmlCombinedWidgets, FractionalMeanAndConstantCounter) {
  // 3, 4: mean 7/2, variance 1/4.
  const CombinedStats s = Of({3, 4});
  EXPECT_EQ(MeanText(s), "3.50");
  EXPECT_EQ(StddevText(s), "0.50");
  EXPECT_EQ(CvText(s), "0.14");
  // Always the same count: no spread.
  const CombinedStats c = Of({7, 7, 7});
  EXPECT_EQ(MeanText(c), "7");
  EXPECT_EQ(StddevText(c), "0");
  EXPECT_EQ(CvText(c), "0.00");
  // Never executed: CV undefined.
  const CombinedStats z = Of({0, 0});
  EXPECT_EQ(MeanText(z), "0");
  EXPECT_EQ(CvText(z), "-");
  // Counts near 2^64 stay exact in the mean.
  const CombinedStats big = Of({UINT64_MAX, UINT64_MAX});
  EXPECT_EQ(MeanText(big), "18446744073709551615");
}

TEST(HtmlCombinedWidgets, HistogramColumnsSumToN) {
  const CombinedStats s = Of({0, 0, 5, 40, 2000});
  const std::string svg = HistogramSvg(s);
  const auto columns = Columns(svg);
  ASSERT_EQ(columns.size(), 15u) << svg;
  uint64_t total = 0;
  for (unsigned k = 0; k < columns.size(); ++k) {
    EXPECT_EQ(columns[k].first, k);
    EXPECT_EQ(columns[k].second, s.histogram()[k]);
    total += columns[k].second;
  }
  EXPECT_EQ(total, 5u);
  EXPECT_EQ(columns[0].second, 2u);
  EXPECT_EQ(columns[1].second, 1u);  // 5
  EXPECT_EQ(columns[2].second, 1u);  // 40
  EXPECT_EQ(columns[3].second, 1u);  // 2000
  // Hover titles: bounds and counts.
  EXPECT_NE(svg.find("<title>0: 2 of 5</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>1024–16383: 1 of 5</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>2^60–2^64-1: 0 of 5</title>"), std::string::npos);
  // The fullest bin is full height (20), a bin of half its count half.
  EXPECT_NE(svg.find("y=\"0\" width=\"5\" height=\"20\" class=\"hzero\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("x=\"6\" y=\"10\" width=\"5\" height=\"10\" class=\"hbar\""),
            std::string::npos)
      << svg;
  // 65 bins: narrower columns, still all there.
  const auto fine = Columns(HistogramSvg(Of({1, 2, 3, 1u << 20}, 65)));
  ASSERT_EQ(fine.size(), 65u);
  EXPECT_EQ(fine[1].second, 1u);
  EXPECT_EQ(fine[2].second, 2u);
  EXPECT_EQ(fine[21].second, 1u);
}

TEST(HtmlCombinedWidgets, HotInSomeNeverInOthers) {
  const CombinedStats always_never = Of({0, 0, 500, 0});
  const CombinedStats cold = Of({0, 3, 0});      // never hot
  const CombinedStats always = Of({100, 200});   // never zero
  const CombinedStats bigger = Of({0, 9000});
  const CombinedStats empty;
  EXPECT_TRUE(HotInSomeNeverInOthers(always_never, 100));
  EXPECT_FALSE(HotInSomeNeverInOthers(always_never, 501));
  EXPECT_FALSE(HotInSomeNeverInOthers(cold, 100));
  EXPECT_TRUE(HotInSomeNeverInOthers(cold, 3));
  EXPECT_TRUE(HotInSomeNeverInOthers(cold, 0));  // hot counts from 1
  EXPECT_FALSE(HotInSomeNeverInOthers(always, 1));
  EXPECT_FALSE(HotInSomeNeverInOthers(empty, 0));
  const std::vector<size_t> ranked =
      RankHotAndNever({&always_never, &cold, &always, &bigger}, 100);
  EXPECT_EQ(ranked, (std::vector<size_t>{3, 0}));
}

TEST(HtmlCombinedWidgets, RankByVariation) {
  // CVs: a {10, 10}: 0; b {0, 20}: 1; c {5, 15}: 0.5; d {0, 0, 0, 40}:
  // sqrt(3) = 1.73 but mean 10; e {1, 0}: CV 1, mean 0.5 below the floor;
  // f {30}: one observation.
  const CombinedStats a = Of({10, 10}), b = Of({0, 20}), c = Of({5, 15}),
                      d = Of({0, 0, 0, 40}), e = Of({1, 0}), f = Of({30});
  VariationOptions o;
  o.mean_floor = 10;
  const std::vector<const CombinedStats*> all = {&a, &b, &c, &d, &e, &f};
  EXPECT_EQ(RankByVariation(all, o), (std::vector<size_t>{3, 1, 2, 0}));
  o.top = 2;
  EXPECT_EQ(RankByVariation(all, o), (std::vector<size_t>{3, 1}));
  o.top = 50;
  o.mean_floor = 0;
  EXPECT_EQ(RankByVariation(all, o), (std::vector<size_t>{3, 1, 4, 2, 0}));
}

}  // namespace
}  // namespace ballarus
