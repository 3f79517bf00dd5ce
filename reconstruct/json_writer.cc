// json_writer.cc — see json_writer.h.
#include "reconstruct/json_writer.h"

#include <string>
#include <vector>

namespace ballarus {

using report::FunctionReport;
using report::Report;

ojson CountJson(const Count& c) { return c ? ojson(*c) : ojson(nullptr); }

ojson FunctionJson(const Report& r, const FunctionReport& f) {
  ojson j;
  j["name"] = f.name;
  j["demangled"] = f.demangled;
  j["file"] = r.file_name(f.file);
  j["line"] = f.line;
  j["end_line"] = f.end_line;
  j["checksum"] = f.checksum;
  j["execution_count"] = CountJson(f.execution_count);
  std::vector<std::string> tus;
  for (uint32_t t : f.tus) tus.push_back(r.tus[t].source);
  j["tus"] = tus;
  if (f.edges_from_paths) j["edges_from_paths"] = true;
  ojson blocks = ojson::array();
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    ojson lines = ojson::array(), locs = ojson::array();
    for (const report::SourceLine& l : f.blocks[b].lines) {
      lines.push_back(l.line);
      locs.push_back(ojson{{"file", r.file_name(l.file)}, {"line", l.line}});
    }
    blocks.push_back(ojson{{"id", b},
                           {"count", CountJson(f.blocks[b].count)},
                           {"lines", lines},
                           {"locations", locs}});
  }
  j["blocks"] = blocks;
  ojson edges = ojson::array();
  for (const report::EdgeReport& e : f.edges)
    edges.push_back(ojson{{"src", e.src},
                          {"dst", e.dst},
                          {"count", CountJson(e.count)},
                          {"kind", report::EdgeKindName(e.kind)},
                          {"counted", e.counted},
                          {"flags", report::EdgeFlagNames(e.flags)}});
  j["edges"] = edges;
  ojson lines = ojson::array();
  for (const report::LineCount& l : f.lines)
    lines.push_back(ojson{{"file", r.file_name(l.where.file)},
                          {"line", l.where.line},
                          {"count", l.count},
                          {"unexecuted_block", l.unexecuted_block},
                          {"exceptional", l.exceptional}});
  j["line_counts"] = lines;
  return j;
}

ojson FileLinesJson(const Report& r) {
  ojson lines = ojson::array();
  for (size_t file = 0; file < r.by_file.size(); ++file)
    for (const report::FileLine& l : r.by_file[file].lines)
      if (l.count)
        lines.push_back(ojson{{"file", r.files[file]},
                              {"line", l.line},
                              {"count", *l.count},
                              {"unexecuted_block", l.unexecuted_block},
                              {"exceptional", l.exceptional}});
  return lines;
}

}  // namespace ballarus
