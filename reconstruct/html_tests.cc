// html_tests.cc — see html_tests.h.
#include "reconstruct/html_tests.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "reconstruct/html_writer.h"

namespace ballarus {

std::string ExecutedByCell(const TestProvenance& p,
                           const std::vector<uint32_t>& which) {
  if (which.empty()) return "";
  std::string h = fmt::format(
      "<details class=\"tests\"><summary>{} test{}</summary><div>",
      which.size(), which.size() == 1 ? "" : "s");
  for (size_t k = 0; k < which.size(); ++k)
    h += (k ? "<br>" : "") + HtmlEscape(p.tests[which[k]]);
  return h + "</div></details>";
}

const std::vector<uint32_t>& TestsOfLine(const TestProvenance& p,
                                         uint32_t file, uint32_t line) {
  static const std::vector<uint32_t> kNone;
  if (file >= p.lines.size()) return kNone;
  auto it = p.lines[file].find(line);
  return it == p.lines[file].end() ? kNone : it->second;
}

std::vector<uint32_t> TestsOfFunctions(const TestProvenance& p,
                                       const std::vector<size_t>& functions) {
  std::set<uint32_t> all;
  for (size_t f : functions)
    if (f < p.functions.size())
      all.insert(p.functions[f].begin(), p.functions[f].end());
  return {all.begin(), all.end()};
}

std::string TestsSection(const TestProvenance& p,
                         const coverage::Summary& summary) {
  std::vector<uint64_t> lines(p.tests.size(), 0), functions(p.tests.size(), 0);
  for (const coverage::FileCoverage& fc : summary.files) {
    for (const auto& [line, count] : fc.lines)
      for (uint32_t t : TestsOfLine(p, fc.file, line)) ++lines[t];
    for (const auto& [name, fn] : fc.functions)
      for (uint32_t t : TestsOfFunctions(
               p, std::vector<size_t>(fn.reports.begin(), fn.reports.end())))
        ++functions[t];
  }
  std::string h = fmt::format(
      "<h2>Tests</h2>\n<p class=\"note\">{} named tests (BALLARUS_TEST); "
      "each source line and function says which of them executed it.</p>\n"
      "<table class=\"sortable\" id=\"tests\"><thead><tr><th class=\"l\">"
      "test</th><th>runs</th><th>lines executed</th><th>functions executed"
      "</th></tr></thead><tbody>\n",
      p.tests.size());
  for (size_t t = 0; t < p.tests.size(); ++t)
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}"
        "\">{}</td><td data-v=\"{}\">{}</td></tr>\n",
        HtmlEscape(p.tests[t]), p.runs[t], p.runs[t], lines[t], lines[t],
        functions[t], functions[t]);
  return h + "</tbody></table>\n";
}

}  // namespace ballarus
