// json_writer.cc — see json_writer.h.
#include "reconstruct/json_writer.h"

#include <string>
#include <vector>

namespace ballarus {

using report::FunctionReport;
using report::Report;

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(const std::string& s, size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = s[i + k];
    if ((d & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (d & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

bool IsValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void MakeValid(ojson* j) {
  if (j->is_string()) {
    const std::string& s = j->get_ref<const std::string&>();
    if (!IsValidUtf8(s)) *j = ValidUtf8(s);
  } else if (j->is_array() || j->is_object()) {
    for (auto& v : *j) MakeValid(&v);
  }
}

}  // namespace

std::string ValidUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    const unsigned char c = s[i++];
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
  return out;
}

std::string JsonDump(const ojson& j) {
  ojson copy = j;
  MakeValid(&copy);
  return copy.dump(1);
}

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
