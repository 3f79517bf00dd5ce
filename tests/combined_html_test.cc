// combined_html_test.cc — the HTML report of a combined profile
// (`ballarus-reconstruct html COMBINED`), end to end: tests/reports/
// varies.c built with the installed ballarus-gcc in edge,path mode, run on
// N = 2, 3, 10, 600, 1000 (one profile each), the five combined with
// `ballarus-reconstruct combine`, the report loaded in headless chromium
// (--dump-dom).  Oracles:
//   * by hand: rare() runs N times when N >= 500, else never: entry counts
//     0, 0, 0, 600, 1000: mean 320, stddev sqrt(169600) = 411.83, zero in
//     3, histogram 3 zeros and 2 in 32–1023; the branch of main's loop
//     calling it (line 25, true) is hot in two runs and never taken in
//     three, so the varies-most page lists it, with rare's path (line 8)
//     and main's loop iteration (lines 25 26 25); work()'s branch (line
//     13) runs in every run, so it does not;
//   * every other figure from the five profiles read one at a time
//     (`paths --json`: entry, edge, line and path counts per run), the
//     statistics computed here with integers: each function's entry row,
//     each branch's and each hot path's row, each line's mean ± stddev;
//     histogram columns summing to N; the varies-most page's two lists
//     against their definitions (README "HTML of a combined profile").
// Screenshots go to the test's undeclared outputs.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness.h"

namespace {

using harness::CommandResult;
using harness::Quote;
using harness::Runfiles;
using nlohmann::json;

const std::vector<int> kInputs = {2, 3, 10, 600, 1000};
constexpr unsigned kBins = 15;


std::string Prefix() {
  std::string error;
  std::string prefix = harness::InstallPrefix(&error);
  if (prefix.empty()) ADD_FAILURE() << error;
  return prefix;
}

std::string Tool() { return Quote(Prefix() + "/bin/ballarus-reconstruct"); }

CommandResult MustRun(const std::string& cmd, const std::string& cwd) {
  CommandResult r = harness::Run(cmd, cwd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
  return r;
}

std::string DumpDom(const std::string& url) {
  CommandResult r =
      harness::Chromium("--virtual-time-budget=3000 --dump-dom", url);
  EXPECT_EQ(r.status, 0) << url << ": " << r.err;
  return r.out;
}

void Screenshot(const std::string& url, const std::string& name) {
  const char* d = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string png = std::string(d && *d ? d : harness::TempRoot()) + "/" + name;
  CommandResult r = harness::Chromium(
      "--window-size=1280,1200 --virtual-time-budget=3000 --screenshot=" +
          Quote(png),
      url);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string bytes;
  ASSERT_TRUE(harness::ReadFile(png, &bytes)) << png;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << png;
  EXPECT_GT(bytes.size(), 20000u) << png << ": a blank page?";
}

// The statistics of one quantity over the runs, computed here.
struct Expected {
  std::vector<uint64_t> values;

  uint64_t Sum() const {
    uint64_t s = 0;
    for (uint64_t v : values) s += v;
    return s;
  }
  std::string Mean() const {
    const uint64_t n = values.size(), s = Sum();
    if (s % n == 0) return std::to_string(s / n);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(s) / n);
    return buf;
  }
  double Variance() const {  // population: mean of squared deviations
    const double m = static_cast<double>(Sum()) / values.size();
    double ss = 0;
    for (uint64_t v : values) ss += (v - m) * (v - m);
    return ss / values.size();
  }
  std::string Stddev() const {
    if (*std::min_element(values.begin(), values.end()) ==
        *std::max_element(values.begin(), values.end()))
      return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", std::sqrt(Variance()));
    return buf;
  }
  uint64_t Min() const { return *std::min_element(values.begin(), values.end()); }
  uint64_t Max() const { return *std::max_element(values.begin(), values.end()); }
  double Cv() const {
    const double m = static_cast<double>(Sum()) / values.size();
    return m > 0 ? std::sqrt(Variance()) / m : -1;
  }
  // The README's bins: 0 alone, then 1 + floor(floor(log2 v) * 14 / 64).
  std::vector<uint64_t> Histogram() const {
    std::vector<uint64_t> h(kBins, 0);
    for (uint64_t v : values) {
      unsigned e = 0;
      while (e < 63 && (v >> (e + 1)) != 0) ++e;
      ++h[v == 0 ? 0 : 1 + e * (kBins - 1) / 64];
    }
    return h;
  }
};

// Per function name: what each run's `paths --json` says.
struct Oracle {
  std::map<std::string, Expected> entry;
  std::map<std::string, std::vector<Expected>> edges;          // by index
  std::map<std::string, std::map<uint32_t, Expected>> lines;   // by line
  std::map<std::string, std::map<uint64_t, Expected>> paths;   // by number
  std::map<std::string, json> shape;  // the first run's function
};

Oracle ReadRuns(const std::string& dir) {
  Oracle o;
  for (size_t run = 0; run < kInputs.size(); ++run) {
    const json j = json::parse(
        MustRun(Tool() + " paths --json --top 0 run" +
                    std::to_string(kInputs[run]) + ".profile",
                dir)
            .out);
    for (const json& f : j["functions"]) {
      const std::string name = f["name"];
      o.shape.emplace(name, f);
      o.entry[name].values.push_back(f["execution_count"]);
      std::vector<Expected>& edges = o.edges[name];
      edges.resize(f["edges"].size());
      for (size_t e = 0; e < edges.size(); ++e)
        edges[e].values.push_back(f["edges"][e]["count"]);
      for (const json& l : f["line_counts"])
        o.lines[name][l["line"]].values.push_back(l["count"]);
      std::map<uint64_t, Expected>& paths = o.paths[name];
      for (const json& p : f["paths"]) paths[std::stoull(p["id"].get<std::string>())];
      for (auto& [number, e] : paths) e.values.resize(run + 1, 0);
      for (const json& p : f["paths"])
        paths[std::stoull(p["id"].get<std::string>())].values[run] = p["count"];
    }
  }
  return o;
}

// gcov's branches: edges neither fake, ignored nor re-entry, out of a
// block with two or more such edges.
std::vector<size_t> Branches(const json& f) {
  auto usable = [](const json& e) {
    for (const json& flag : e["flags"])
      if (flag == "fake" || flag == "ignored" || flag == "reentry") return false;
    return true;
  };
  std::map<uint64_t, int> outs;
  for (const json& e : f["edges"])
    if (usable(e)) ++outs[e["src"].get<uint64_t>()];
  std::vector<size_t> out;
  for (size_t k = 0; k < f["edges"].size(); ++k)
    if (usable(f["edges"][k]) && outs[f["edges"][k]["src"].get<uint64_t>()] >= 2)
      out.push_back(k);
  return out;
}

// The element `<tr ...>` of `dom` whose opening tag contains `marker`.
std::string RowWith(const std::string& dom, const std::string& marker) {
  const size_t at = dom.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = dom.rfind("<tr", at);
  return dom.substr(start, dom.find("</tr>", at) - start);
}

std::string Cell(const std::string& row, const std::string& cls) {
  std::smatch m;
  if (!std::regex_search(row, m, std::regex("class=\"" + cls + "\">([^<]*)</td>")))
    return "?";
  return m[1];
}

std::vector<uint64_t> Columns(const std::string& row) {
  std::vector<uint64_t> out;
  const std::regex column(R"re(<g data-bin="\d+" data-count="(\d+)">)re");
  for (auto it = std::sregex_iterator(row.begin(), row.end(), column);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stoull((*it)[1]));
  return out;
}

// The row shows `e`'s statistics: N, mean, stddev, min–max, zero in, and
// a histogram whose columns are e's and sum to N.
void ExpectStats(const std::string& row, const Expected& e, const std::string& what) {
  ASSERT_FALSE(row.empty()) << what;
  EXPECT_EQ(Cell(row, "mean"), e.Mean()) << what << "\n" << row;
  EXPECT_EQ(Cell(row, "sd"), e.Stddev()) << what;
  EXPECT_EQ(Cell(row, "range"),
            std::to_string(e.Min()) + "–" + std::to_string(e.Max()))
      << what;
  EXPECT_EQ(Cell(row, "zeros"), std::to_string(e.Histogram()[0])) << what;
  const std::vector<uint64_t> columns = Columns(row);
  EXPECT_EQ(columns, e.Histogram()) << what;
  uint64_t total = 0;
  for (uint64_t c : columns) total += c;
  EXPECT_EQ(total, kInputs.size()) << what;
}

class CombinedHtml : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = harness::TempRoot() + "/combined_html";
    harness::MakeFreshDir(dir_);
    MustRun("cp " + Quote(Runfiles() + "/tests/reports/varies.c") + " .", dir_);
    MustRun(Quote(Prefix() + "/bin/ballarus-gcc") +
                " -O0 -g -fplugin-arg-ballarus-mode=edge,path varies.c -o varies",
            dir_);
    std::string profiles;
    for (int n : kInputs) {
      const std::string p = "run" + std::to_string(n) + ".profile";
      CommandResult r = harness::Run("./varies " + std::to_string(n), dir_,
                                     {"BALLARUS_PROFILE=" + p});
      ASSERT_EQ(r.status, 0) << r.err;
      profiles += " " + p;
    }
    MustRun(Tool() + " combine -o all.combined" + profiles, dir_);
    MustRun(Tool() + " html all.combined -o report", dir_);
    oracle_ = new Oracle(ReadRuns(dir_));
    index_ = new std::string(DumpDom("file://" + dir_ + "/report/index.html"));
  }
  static void TearDownTestSuite() {
    delete oracle_;
    delete index_;
  }

  // The page of function `name`, from the index's link.
  static std::string PageOf(const std::string& name) {
    std::smatch m;
    if (!std::regex_search(*index_, m,
                           std::regex("<a href=\"(fn\\d+\\.html)\">" + name + "</a>")))
      return "";
    return m[1];
  }

  static std::string dir_;
  static Oracle* oracle_;
  static std::string* index_;
};

std::string CombinedHtml::dir_;
Oracle* CombinedHtml::oracle_ = nullptr;
std::string* CombinedHtml::index_ = nullptr;

TEST_F(CombinedHtml, IndexByHand) {
  EXPECT_NE(index_->find("<b id=\"n\">5</b>"), std::string::npos) << *index_;
  const std::string rare = RowWith(*index_, ">rare</a>");
  EXPECT_EQ(Cell(rare, "mean"), "320") << rare;
  EXPECT_EQ(Cell(rare, "sd"), "411.83");
  EXPECT_EQ(Cell(rare, "cv"), "1.29");
  EXPECT_EQ(Cell(rare, "range"), "0–1000");
  EXPECT_EQ(Cell(rare, "zeros"), "3");
  std::vector<uint64_t> hist(kBins, 0);
  hist[0] = 3;
  hist[2] = 2;  // 600 and 1000 in 32–1023
  EXPECT_EQ(Columns(rare), hist);
  EXPECT_NE(rare.find("<title>32–1023: 2 of 5</title>"), std::string::npos) << rare;
  const std::string work = RowWith(*index_, ">work</a>");
  EXPECT_EQ(Cell(work, "mean"), "1");
  EXPECT_EQ(Cell(work, "sd"), "0");
  Screenshot("file://" + dir_ + "/report/index.html", "combined-index.png");
}

TEST_F(CombinedHtml, IndexAgainstTheRuns) {
  for (const auto& [name, e] : oracle_->entry)
    ExpectStats(RowWith(*index_, ">" + name + "</a>"), e, name + " entry");
}

TEST_F(CombinedHtml, FunctionPagesAgainstTheRuns) {
  for (const auto& [name, f] : oracle_->shape) {
    const std::string link = PageOf(name);
    ASSERT_FALSE(link.empty()) << name;
    const std::string page = DumpDom("file://" + dir_ + "/report/" + link);
    ExpectStats(RowWith(page, "<td class=\"l\">calls</td>"), oracle_->entry[name],
                name + " calls");
    const std::vector<size_t> branches = Branches(f);
    EXPECT_EQ(branches.empty(), page.find("id=\"branches\"") == std::string::npos);
    for (size_t e : branches)
      ExpectStats(RowWith(page, "<tr id=\"edge-" + std::to_string(e) + "\""),
                  oracle_->edges[name][e], name + " edge " + std::to_string(e));
    for (const auto& [line, e] : oracle_->lines[name]) {
      const std::string row = RowWith(page, "<tr id=\"L" + std::to_string(line) + "\"");
      EXPECT_NE(row.find(">" + e.Mean() + " ± " + e.Stddev() + "</td>"),
                std::string::npos)
          << name << " line " << line << "\n" << row;
    }
    // The hottest paths (5 by default): those of the largest means.
    // Ties: the smaller number first.
    std::vector<std::pair<uint64_t, uint64_t>> by_sum;  // (sum, number)
    for (const auto& [number, e] : oracle_->paths[name])
      by_sum.emplace_back(e.Sum(), number);
    std::sort(by_sum.begin(), by_sum.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (size_t k = 0; k < by_sum.size(); ++k) {
      const std::string row =
          RowWith(page, "<tr id=\"path-" + std::to_string(by_sum[k].second) + "\"");
      if (k < 5)
        ExpectStats(row, oracle_->paths[name][by_sum[k].second],
                    name + " path " + std::to_string(by_sum[k].second));
      else
        EXPECT_TRUE(row.empty()) << name << " path " << by_sum[k].second;
    }
  }
  Screenshot("file://" + dir_ + "/report/" + PageOf("main"), "combined-main.png");
}

// A path or branch of the varies-most page: its link and statistics.
struct Item {
  std::string href;
  const Expected* e;
};

std::vector<Item> AllItems(const Oracle& o, const std::map<std::string, std::string>& page) {
  std::vector<Item> items;
  for (const auto& [name, f] : o.shape) {
    for (const auto& [number, e] : o.paths.at(name))
      items.push_back({page.at(name) + "#path-" + std::to_string(number), &e});
    for (size_t e : Branches(f))
      items.push_back({page.at(name) + "#edge-" + std::to_string(e), &o.edges.at(name)[e]});
  }
  return items;
}

std::vector<std::string> Hrefs(const std::string& table) {
  std::vector<std::string> out;
  const std::regex link(R"re(<a href="(fn\d+\.html#(?:path|edge)-\d+)">)re");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), link);
       it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

std::string Table(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("<table class=\"sortable\" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</table>", at) - at);
}

TEST_F(CombinedHtml, VariesMost) {
  const std::string dom = DumpDom("file://" + dir_ + "/report/varies.html");
  std::map<std::string, std::string> page;
  for (const auto& [name, f] : oracle_->shape) page[name] = PageOf(name);
  const std::vector<Item> items = AllItems(*oracle_, page);

  // By hand: main's loop branch on line 25 taken 0, 0, 0, 600, 1000 times.
  const json& main_fn = oracle_->shape.at("main");
  std::string chosen;
  for (size_t e : Branches(main_fn)) {
    const json& edge = main_fn["edges"][e];
    const json& src = main_fn["blocks"][edge["src"].get<size_t>()]["lines"];
    if (edge["kind"] == "true" && !src.empty() && src.back() == 25 &&
        oracle_->edges["main"][e].values == std::vector<uint64_t>{0, 0, 0, 600, 1000})
      chosen = page["main"] + "#edge-" + std::to_string(e);
  }
  ASSERT_FALSE(chosen.empty()) << main_fn.dump();
  const std::vector<std::string> hot = Hrefs(Table(dom, "hot-and-never"));
  EXPECT_EQ(std::count(hot.begin(), hot.end(), chosen), 1)
      << chosen << "\n" << Table(dom, "hot-and-never");
  for (size_t e : Branches(oracle_->shape.at("work")))
    EXPECT_EQ(std::count(hot.begin(), hot.end(),
                         page["work"] + "#edge-" + std::to_string(e)),
              0);
  // The paths among them by hand, with their source lines: rare's only
  // path (line 8), and main's loop iteration calling it (the condition and
  // ++k on line 25, the call on 26).
  EXPECT_TRUE(std::regex_search(
      dom, std::regex(R"re(>rare</a></td><td class="l"><a href="fn\d+\.html#path-0">path 0: lines 8</a>)re")))
      << Table(dom, "hot-and-never");
  EXPECT_TRUE(std::regex_search(
      dom, std::regex(R"re(>main</a></td><td class="l"><a href="fn\d+\.html#path-\d+">path \d+: lines 25 26 25</a>)re")));
  // Against the definition: min 0 and max >= 100, largest max first.
  std::multiset<std::string> want_hot;
  for (const Item& i : items)
    if (i.e->Min() == 0 && i.e->Max() >= 100) want_hot.insert(i.href);
  EXPECT_EQ(std::multiset<std::string>(hot.begin(), hot.end()), want_hot);
  std::map<std::string, const Expected*> by_href;
  for (const Item& i : items) by_href[i.href] = i.e;
  for (size_t k = 1; k < hot.size(); ++k)
    EXPECT_GE(by_href[hot[k - 1]]->Max(), by_href[hot[k]]->Max());
  for (const std::string& h : hot)
    ExpectStats(RowWith(dom, "<a href=\"" + h + "\">"), *by_href[h], h);

  // Most variable: mean >= 10, by CV descending, 50 at most.
  const std::vector<std::string> variable = Hrefs(Table(dom, "most-variable"));
  std::multiset<std::string> want_variable;
  for (const Item& i : items)
    if (static_cast<double>(i.e->Sum()) / kInputs.size() >= 10) want_variable.insert(i.href);
  ASSERT_LE(want_variable.size(), 50u);
  EXPECT_EQ(std::multiset<std::string>(variable.begin(), variable.end()), want_variable);
  for (size_t k = 1; k < variable.size(); ++k)
    EXPECT_GE(by_href[variable[k - 1]]->Cv() + 1e-12, by_href[variable[k]]->Cv())
        << variable[k - 1] << " before " << variable[k];
  Screenshot("file://" + dir_ + "/report/varies.html", "combined-varies.png");
}

// A combined profile is reported alone, and without filters: both refused
// with one line naming it, exit 2.
TEST_F(CombinedHtml, RefusesOtherInputsAndFilters) {
  for (const char* args : {"all.combined run2.profile", "run2.profile all.combined",
                           "--function main all.combined"}) {
    CommandResult r =
        harness::Run(Tool() + " html -o refused " + args, dir_);
    EXPECT_EQ(r.status, 2) << args << r.out << r.err;
    EXPECT_NE(r.err.find("all.combined: "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
