// html_combined_widgets.h — the small pieces of the HTML report of a
// combined profile (reconstruct/html_combined.h): one counter's statistics
// over the observations (core/combined_stats.h) as table cells and as a
// histogram, and the ranking of the "varies most" page.
//
// Figures as the pages print them:
//   - mean = sum / N exactly: an integer when N divides the sum, else two
//     decimals; stddev = sqrt of the population variance (n sumsq - sum²)
//     / n², two decimals ("0" when every observation is equal);
//   - CV (coefficient of variation) = stddev / mean, two decimals, "-"
//     when the mean is 0;
//   - "zero in": the observations that never executed the code, exactly
//     (bin 0 of the histogram holds the zero counts only).
// The histogram is an inline SVG (no script, no network): one column per
// bin of core/combined_stats.h (bin 0 = 0, bin k >= 1 = [2^ceil(64(k-1)/
// (B-1)), next bound - 1]), as tall as its share of the fullest bin; each
// column's title (shown on hover) says its bounds and how many
// observations fell in it, and its data-count attribute holds that number.
#ifndef BALLARUS_RECONSTRUCT_HTML_COMBINED_WIDGETS_H_
#define BALLARUS_RECONSTRUCT_HTML_COMBINED_WIDGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/combined_stats.h"

namespace ballarus {

// The bounds of bin `k` of `bins`, inclusive: "0", "1–31", "32–1023",
// ..., "2^60–2^64-1" (powers of two from 2^20 on are written as powers).
std::string BinBoundsText(unsigned k, unsigned bins);

// Mean, stddev and CV as printed (see above).
std::string MeanText(const CombinedStats& s);
std::string StddevText(const CombinedStats& s);
std::string CvText(const CombinedStats& s);
// The same as numbers, for sorting and ranking (CV: -1 when the mean is 0).
double MeanValue(const CombinedStats& s);
double StddevValue(const CombinedStats& s);
double CvValue(const CombinedStats& s);

// The histogram as an inline <svg class="hist">.
std::string HistogramSvg(const CombinedStats& s);

// The header cells and the cells of one counter: N, mean, stddev, CV,
// min–max, zero in, histogram; each sortable (data-v) by report.js.
std::string StatsHeaderCells();
std::string StatsCells(const CombinedStats& s);
// "mean ± stddev" in one cell, with min–max and N in its title.
std::string MeanSpreadCell(const CombinedStats& s);

// The "varies most" ranking of counters (paths, branches):
//   - hot in some observations, never in others: min = 0 and max >= `hot`
//     (every such counter is listed), most executed (max) first, ties by
//     more observations at zero, then by index;
//   - most variable: among counters with N >= 2 and mean >= `mean_floor`
//     (a floor, so that code run a few times in one observation does not
//     top the list), by CV descending, ties by mean descending, then by
//     index; the first `top`.
struct VariationOptions {
  uint64_t hot = 100;        // "hot": max at least this (>= 1)
  double mean_floor = 10;    // CV ranking: mean at least this
  size_t top = 50;           // CV ranking: how many
};
bool HotInSomeNeverInOthers(const CombinedStats& s, uint64_t hot);
// Indices into `stats`: the two lists above.
std::vector<size_t> RankHotAndNever(const std::vector<const CombinedStats*>& stats,
                                    uint64_t hot);
std::vector<size_t> RankByVariation(const std::vector<const CombinedStats*>& stats,
                                    const VariationOptions& o);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_COMBINED_WIDGETS_H_
