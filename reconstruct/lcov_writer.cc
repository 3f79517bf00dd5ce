// lcov_writer.cc — see lcov_writer.h.
#include "reconstruct/lcov_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "reconstruct/commands.h"

namespace ballarus {

std::string LcovTracefile(const coverage::Summary& s,
                          const std::string& test_name, bool executed_only) {
  std::string out;
  for (const coverage::FileCoverage& f : s.files) {
    if (executed_only && f.totals.lines_hit == 0 &&
        f.totals.functions_hit == 0 && f.totals.branches_hit == 0)
      continue;
    out += "TN:" + test_name + "\n";
    out += "SF:" + f.path + "\n";
    // FN by line, then name (lcov keeps them in a hash: any order reads).
    std::vector<const coverage::FunctionCoverage*> fns;
    for (const auto& [name, fc] : f.functions) fns.push_back(&fc);
    std::stable_sort(fns.begin(), fns.end(), [](const auto* a, const auto* b) {
      return a->line < b->line;
    });
    // Names escaped as error lines are (commands.h Printable): lcov reads
    // \xNN as name characters; a raw newline would end the record.
    for (const auto* fc : fns)
      out += fmt::format("FN:{},{}\n", fc->line, Printable(fc->name));
    for (const auto* fc : fns)
      out += fmt::format("FNDA:{},{}\n", fc->count < 0 ? 0 : fc->count,
                         Printable(fc->name));
    out += fmt::format("FNF:{}\nFNH:{}\n", f.totals.functions,
                       f.totals.functions_hit);
    for (const auto& [line, brs] : f.branches)
      for (size_t i = 0; i < brs.size(); ++i)
        out += fmt::format(
            "BRDA:{},0,{},{}\n", line, i,
            brs[i].executed ? std::to_string(brs[i].count < 0 ? 0 : brs[i].count)
                            : std::string("-"));
    if (f.totals.branches)
      out += fmt::format("BRF:{}\nBRH:{}\n", f.totals.branches,
                         f.totals.branches_hit);
    for (const auto& [line, count] : f.lines)
      out += fmt::format("DA:{},{}\n", line, count);
    out += fmt::format("LF:{}\nLH:{}\nend_of_record\n", f.totals.lines,
                       f.totals.lines_hit);
  }
  return out;
}

std::vector<std::string> LcovTestNames(const std::vector<std::string>& tests,
                                       const std::string& taken) {
  std::set<std::string> used{taken};
  std::vector<std::string> out;
  for (const std::string& t : tests) {
    std::string name = t;
    for (char& c : name)
      if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
    std::string unique = name;
    for (int k = 2; used.count(unique); ++k)
      unique = name + "_" + std::to_string(k);
    used.insert(unique);
    out.push_back(unique);
  }
  return out;
}

std::string XmlEscape(const std::string& raw) {
  const std::string s = Printable(raw);
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string Rate(uint64_t hit, uint64_t total) {
  return total ? fmt::format("{:.4f}", static_cast<double>(hit) / total)
               : std::string("1.0");
}

std::string Dirname(const std::string& p) {
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
}

std::string Relative(const std::string& path, const std::string& root) {
  if (!root.empty() && root != "/" && path.size() > root.size() &&
      path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
    return path.substr(root.size() + 1);
  return path;
}

}  // namespace

std::string CoberturaXml(const coverage::Summary& s, const std::string& root,
                         long long timestamp) {
  std::string out =
      "<?xml version=\"1.0\" ?>\n"
      "<!DOCTYPE coverage SYSTEM "
      "'http://cobertura.sourceforge.net/xml/coverage-04.dtd'>\n";
  out += fmt::format(
      "<coverage line-rate=\"{}\" branch-rate=\"{}\" lines-covered=\"{}\" "
      "lines-valid=\"{}\" branches-covered=\"{}\" branches-valid=\"{}\" "
      "complexity=\"0.0\" timestamp=\"{}\" version=\"ballarus\">\n",
      Rate(s.totals.lines_hit, s.totals.lines),
      Rate(s.totals.branches_hit, s.totals.branches), s.totals.lines_hit,
      s.totals.lines, s.totals.branches_hit, s.totals.branches, timestamp);
  out += "  <sources>\n    <source>" + XmlEscape(root) + "</source>\n  </sources>\n";
  out += "  <packages>\n";
  // Packages: directories relative to the root, files in path order.
  std::map<std::string, std::vector<const coverage::FileCoverage*>> packages;
  for (const coverage::FileCoverage& f : s.files)
    packages[Dirname(Relative(f.path, root))].push_back(&f);
  for (const auto& [dir, files] : packages) {
    coverage::Totals t;
    for (const auto* f : files) t.Add(f->totals);
    std::string name = dir == "." ? std::string() : dir;
    for (char& c : name)
      if (c == '/') c = '.';
    out += fmt::format(
        "    <package name=\"{}\" line-rate=\"{}\" branch-rate=\"{}\" "
        "complexity=\"0.0\">\n      <classes>\n",
        XmlEscape(name), Rate(t.lines_hit, t.lines),
        Rate(t.branches_hit, t.branches));
    for (const auto* f : files) {
      const std::string rel = Relative(f->path, root);
      const size_t slash = rel.rfind('/');
      out += fmt::format(
          "        <class name=\"{}\" filename=\"{}\" line-rate=\"{}\" "
          "branch-rate=\"{}\" complexity=\"0.0\">\n"
          "          <methods/>\n          <lines>\n",
          XmlEscape(slash == std::string::npos ? rel : rel.substr(slash + 1)),
          XmlEscape(rel), Rate(f->totals.lines_hit, f->totals.lines),
          Rate(f->totals.branches_hit, f->totals.branches));
      for (const auto& [line, count] : f->lines) {
        auto b = f->branches.find(line);
        if (b == f->branches.end()) {
          out += fmt::format(
              "            <line number=\"{}\" hits=\"{}\" branch=\"false\"/>\n",
              line, count);
          continue;
        }
        size_t taken = 0;
        for (const coverage::Branch& br : b->second)
          taken += br.executed && br.count > 0;
        const size_t n = b->second.size();
        out += fmt::format(
            "            <line number=\"{}\" hits=\"{}\" branch=\"true\" "
            "condition-coverage=\"{}% ({}/{})\"/>\n",
            line, count, n ? taken * 100 / n : 0, taken, n);
      }
      out += "          </lines>\n        </class>\n";
    }
    out += "      </classes>\n    </package>\n";
  }
  out += "  </packages>\n</coverage>\n";
  return out;
}

}  // namespace ballarus
