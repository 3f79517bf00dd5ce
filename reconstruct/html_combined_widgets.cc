// html_combined_widgets.cc — statistics cells, histogram and variation
// ranking of the combined-profile HTML report (see html_combined_widgets.h).
#include "reconstruct/html_combined_widgets.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ballarus {

namespace {

// A bin bound: exact below 2^20, else as a power of two (bounds from bin 1
// on are powers of two); `minus_one` for an inclusive upper bound.
std::string BoundText(unsigned exponent, bool minus_one) {
  if (exponent < 20)
    return std::to_string((uint64_t{1} << exponent) - (minus_one ? 1 : 0));
  return fmt::format("2^{}{}", exponent, minus_one ? "-1" : "");
}

unsigned Log2(uint64_t power_of_two) {
  return static_cast<unsigned>(__builtin_ctzll(power_of_two));
}

std::string TwoDecimals(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

std::string BinBoundsText(unsigned k, unsigned bins) {
  if (k == 0) return "0";
  const unsigned lo = Log2(BinLowerBound(k, bins));
  const unsigned hi = k + 1 < bins ? Log2(BinLowerBound(k + 1, bins)) : 64;
  return BoundText(lo, false) + "–" + BoundText(hi, true);
}

double MeanValue(const CombinedStats& s) { return s.Mean().get_d(); }

double StddevValue(const CombinedStats& s) {
  return std::sqrt(s.Variance().get_d());
}

double CvValue(const CombinedStats& s) {
  const double mean = MeanValue(s);
  return mean > 0 ? StddevValue(s) / mean : -1;
}

std::string MeanText(const CombinedStats& s) {
  const mpq_class mean = s.Mean();
  if (mean.get_den() == 1) return mean.get_num().get_str();
  return TwoDecimals(mean.get_d());
}

std::string StddevText(const CombinedStats& s) {
  if (s.Variance() == 0) return "0";
  return TwoDecimals(StddevValue(s));
}

std::string CvText(const CombinedStats& s) {
  const double cv = CvValue(s);
  return cv < 0 ? "-" : TwoDecimals(cv);
}

std::string HistogramSvg(const CombinedStats& s) {
  const std::vector<uint64_t>& h = s.histogram();
  const unsigned bins = s.bins();
  const int w = bins <= 20 ? 6 : 2;  // column width, px
  const int height = 20;
  const uint64_t fullest = *std::max_element(h.begin(), h.end());
  std::string svg = fmt::format(
      "<svg class=\"hist\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"histogram of {} observations\">",
      w * bins, height, w * bins, height, s.n());
  for (unsigned k = 0; k < bins; ++k) {
    const int bar =
        h[k] == 0 ? 0
                  : std::max(2, static_cast<int>(height * h[k] / fullest));
    svg += fmt::format(
        "<g data-bin=\"{}\" data-count=\"{}\"><title>{}: {} of {}</title>"
        "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" class=\"hbg\"/>",
        k, h[k], BinBoundsText(k, bins), h[k], s.n(), k * w, w, height);
    if (bar > 0)
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{}\"/>",
          k * w, height - bar, w - (w > 2 ? 1 : 0), bar,
          k == 0 ? "hzero" : "hbar");
    svg += "</g>";
  }
  return svg + "</svg>";
}

std::string StatsHeaderCells() {
  return "<th title=\"observations\">N</th><th>mean</th><th>stddev</th>"
         "<th title=\"coefficient of variation: stddev / mean\">CV</th>"
         "<th>min–max</th><th title=\"observations that never executed "
         "it\">zero in</th><th class=\"l\" title=\"observations per bin: "
         "0, then ranges of counts growing by powers of two (hover a "
         "column)\">histogram</th>";
}

std::string StatsCells(const CombinedStats& s) {
  return fmt::format(
      "<td data-v=\"{}\">{}</td><td data-v=\"{}\" class=\"mean\">{}</td>"
      "<td data-v=\"{}\" class=\"sd\">{}</td><td data-v=\"{}\" "
      "class=\"cv\">{}</td><td data-v=\"{}\" class=\"range\">{}–{}</td>"
      "<td data-v=\"{}\" class=\"zeros\">{}</td><td class=\"l\">{}</td>",
      s.n(), s.n(), MeanValue(s), MeanText(s), StddevValue(s), StddevText(s),
      CvValue(s), CvText(s), s.max(), s.min(), s.max(), s.histogram()[0],
      s.histogram()[0], HistogramSvg(s));
}

std::string MeanSpreadCell(const CombinedStats& s) {
  return fmt::format(
      "<td class=\"ms\" data-v=\"{}\" title=\"N {}, min–max {}–{}, zero in "
      "{}\">{} ± {}</td>",
      MeanValue(s), s.n(), s.min(), s.max(), s.histogram()[0], MeanText(s),
      StddevText(s));
}

bool HotInSomeNeverInOthers(const CombinedStats& s, uint64_t hot) {
  return s.n() > 0 && s.min() == 0 && s.max() >= std::max<uint64_t>(hot, 1);
}

std::vector<size_t> RankHotAndNever(const std::vector<const CombinedStats*>& stats,
                                    uint64_t hot) {
  std::vector<size_t> out;
  for (size_t i = 0; i < stats.size(); ++i)
    if (HotInSomeNeverInOthers(*stats[i], hot)) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    if (stats[a]->max() != stats[b]->max())
      return stats[a]->max() > stats[b]->max();
    return stats[a]->histogram()[0] > stats[b]->histogram()[0];
  });
  return out;
}

std::vector<size_t> RankByVariation(const std::vector<const CombinedStats*>& stats,
                                    const VariationOptions& o) {
  std::vector<size_t> out;
  std::vector<double> cv(stats.size()), mean(stats.size());
  for (size_t i = 0; i < stats.size(); ++i) {
    mean[i] = MeanValue(*stats[i]);
    cv[i] = CvValue(*stats[i]);
    if (stats[i]->n() >= 2 && mean[i] > 0 && mean[i] >= o.mean_floor)
      out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    if (cv[a] != cv[b]) return cv[a] > cv[b];
    return mean[a] > mean[b];
  });
  if (out.size() > o.top) out.resize(o.top);
  return out;
}

}  // namespace ballarus
