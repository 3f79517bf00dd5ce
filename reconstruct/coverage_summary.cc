// coverage_summary.cc — lcov's merge of gcov's JSON (see
// coverage_summary.h; geninfo intermediate_json_to_info, lcov
// read_info_file / brcount_to_db / combine_info_entries).
#include "reconstruct/coverage_summary.h"

#include <map>
#include <string>
#include <vector>

#include "core/gcov_lines.h"
#include "reconstruct/gcov_view.h"

namespace ballarus {
namespace coverage {

void Totals::Add(const Totals& o) {
  lines += o.lines;
  lines_hit += o.lines_hit;
  functions += o.functions;
  functions_hit += o.functions_hit;
  branches += o.branches;
  branches_hit += o.branches_hit;
}

Summary Summarize(const report::Report& r, const FileFilter& filter) {
  std::map<std::string, FileCoverage> by_path;
  for (uint32_t t = 0; t < r.tus.size(); ++t) {
    gcov::Options o;
    o.branches = true;
    o.json = true;
    const gcov::View v(r, {t}, o);
    for (uint32_t si = 0; si < v.sources.size(); ++si) {
      const gcov::Source& src = v.sources[si];
      if (!filter.Keep(src.file)) continue;
      const std::string& path = filter.AbsolutePath(src.file);
      FileCoverage& fc = by_path[path];
      if (fc.path.empty()) {
        fc.path = path;
        fc.file = src.file;
      }
      for (uint32_t fi : v.SortedFunctions(si)) {
        const gcov::Function& fn = v.functions[fi];
        if (!filter.KeepFunction(r.functions[fn.function])) continue;
        FunctionCoverage& c = fc.functions[fn.name];
        if (c.name.empty()) {
          c.name = fn.name;
          c.demangled = fn.demangled;
          c.line = fn.start_line;
        }
        c.count = GcovAdd(c.count, fn.called());
        if (c.reports.empty() || c.reports.back() != fn.function)
          c.reports.push_back(fn.function);
      }
      for (const gcov::JsonLineRef& l : v.JsonLines(si)) {
        if (filter.ExcludedLine(src.file, l.line_number)) continue;
        // lcov clamps negative counts to 0.
        int64_t& line = fc.lines[l.line_number];
        line = GcovAdd(line, l.line->count < 0 ? 0 : l.line->count);
        if (filter.ExcludedBranches(src.file, l.line_number)) continue;
        const bool unexecuted = l.line->has_unexecuted_block && l.line->count == 0;
        std::vector<Branch>& brs = fc.branches[l.line_number];
        size_t i = 0;
        for (const gcov::ArcId& id : l.line->branches) {
          const gcov::Arc& arc = v.functions[id.first].arcs[id.second];
          if (arc.is_unconditional || arc.is_call_non_return) continue;
          if (i == brs.size()) brs.emplace_back();
          Branch& b = brs[i++];
          if (unexecuted) continue;  // "-" never changes a count
          if (!b.executed) {
            b.executed = true;
            b.count = arc.count;
          } else {
            b.count = GcovAdd(b.count, arc.count);
          }
        }
        if (brs.empty()) fc.branches.erase(l.line_number);
      }
    }
  }
  Summary s;
  for (auto& [path, fc] : by_path) {
    for (const auto& [line, count] : fc.lines) {
      ++fc.totals.lines;
      if (count > 0) ++fc.totals.lines_hit;
    }
    for (const auto& [name, f] : fc.functions) {
      ++fc.totals.functions;
      if (f.count > 0) ++fc.totals.functions_hit;
    }
    for (const auto& [line, brs] : fc.branches)
      for (const Branch& b : brs) {
        ++fc.totals.branches;
        if (b.executed && b.count > 0) ++fc.totals.branches_hit;
      }
    s.totals.Add(fc.totals);
    s.files.push_back(std::move(fc));
  }
  return s;
}

}  // namespace coverage
}  // namespace ballarus
