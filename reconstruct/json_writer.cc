// json_writer.cc — see json_writer.h.
#include "reconstruct/json_writer.h"

#include "reconstruct/json_stream.h"
#include "reconstruct/provenance.h"

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

namespace {

bool HasTests(const TestProvenance* tests) {
  return tests != nullptr && !tests->empty();
}

void StreamIndices(JsonOut& o, const std::vector<uint32_t>& which) {
  o.BeginArray();
  for (uint32_t t : which) o.Uint(t);
  o.EndArray();
}

}  // namespace

void StreamCount(JsonOut& o, const Count& c) {
  if (c)
    o.Uint(*c);
  else
    o.Null();
}

void StreamFunctionJson(JsonOut& o, const Report& r, const FunctionReport& f,
                        const TestProvenance* tests) {
  o.BeginObject();
  o.Key("name").String(f.name);
  o.Key("demangled").String(f.demangled);
  o.Key("file").String(r.file_name(f.file));
  o.Key("path").String(r.paths[f.file]);
  o.Key("line").Uint(f.line);
  o.Key("end_line").Uint(f.end_line);
  o.Key("checksum").Uint(f.checksum);
  o.Key("execution_count");
  StreamCount(o, f.execution_count);
  o.Key("tus").BeginArray();
  for (uint32_t t : f.tus) o.String(r.tus[t].source);
  o.EndArray();
  if (HasTests(tests)) {
    o.Key("tests");
    StreamIndices(o, tests->functions[&f - r.functions.data()]);
  }
  if (f.edges_from_paths) o.Key("edges_from_paths").Bool(true);
  // The other way round: its path counts are solved from its edge counts.
  if (f.paths && f.paths->storage == PathInfo::kFromEdges)
    o.Key("paths_from_edges").Bool(true);
  // Edge mode: its entry count is its callers' call blocks' (the edge
  // marked "from_calls").
  if (f.entry_from_calls) o.Key("entry_from_calls").Bool(true);
  o.Key("blocks").BeginArray();
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    o.BeginObject();
    o.Key("id").Uint(b);
    o.Key("count");
    StreamCount(o, f.blocks[b].count);
    o.Key("lines").BeginArray();
    for (const report::SourceLine& l : f.blocks[b].lines) o.Uint(l.line);
    o.EndArray();
    o.Key("locations").BeginArray();
    for (const report::SourceLine& l : f.blocks[b].lines) {
      o.BeginObject();
      o.Key("file").String(r.file_name(l.file));
      o.Key("line").Uint(l.line);
      o.EndObject();
    }
    o.EndArray();
    o.EndObject();
  }
  o.EndArray();
  o.Key("edges").BeginArray();
  for (const report::EdgeReport& e : f.edges) {
    o.BeginObject();
    o.Key("src").Uint(e.src);
    o.Key("dst").Uint(e.dst);
    o.Key("count");
    StreamCount(o, e.count);
    o.Key("kind").String(report::EdgeKindName(e.kind));
    o.Key("counted").Bool(e.counted);
    if (e.from_calls) o.Key("from_calls").Bool(true);
    o.Key("flags").BeginArray();
    for (const std::string& n : report::EdgeFlagNames(e.flags)) o.String(n);
    o.EndArray();
    o.EndObject();
  }
  o.EndArray();
  o.Key("line_counts").BeginArray();
  for (const report::LineCount& l : f.lines) {
    o.BeginObject();
    o.Key("file").String(r.file_name(l.where.file));
    o.Key("line").Uint(l.where.line);
    o.Key("count").Int(l.count);
    o.Key("unexecuted_block").Bool(l.unexecuted_block);
    o.Key("exceptional").Bool(l.exceptional);
    o.EndObject();
  }
  o.EndArray();
  o.EndObject();
}

ojson FunctionJson(const Report& r, const FunctionReport& f,
                   const TestProvenance* tests) {
  JsonOut o;
  StreamFunctionJson(o, r, f, tests);
  return ojson::parse(o.TakeString());
}

void StreamFileLines(JsonOut& o, const Report& r, const TestProvenance* tests) {
  static const std::vector<uint32_t> kNone;
  o.BeginArray();
  for (size_t file = 0; file < r.by_file.size(); ++file)
    for (const report::FileLine& l : r.by_file[file].lines)
      if (l.count) {
        o.BeginObject();
        o.Key("file").String(r.files[file]);
        o.Key("path").String(r.paths[file]);
        o.Key("line").Uint(l.line);
        o.Key("count").Int(*l.count);
        o.Key("unexecuted_block").Bool(l.unexecuted_block);
        o.Key("exceptional").Bool(l.exceptional);
        if (HasTests(tests)) {
          auto it = tests->lines[file].find(l.line);
          o.Key("tests");
          StreamIndices(o, it == tests->lines[file].end() ? kNone : it->second);
        }
        o.EndObject();
      }
  o.EndArray();
}

ojson FileLinesJson(const Report& r, const TestProvenance* tests) {
  JsonOut o;
  StreamFileLines(o, r, tests);
  return ojson::parse(o.TakeString());
}

void StreamTests(JsonOut& o, const TestProvenance& tests) {
  o.BeginArray();
  for (size_t t = 0; t < tests.tests.size(); ++t) {
    o.BeginObject();
    o.Key("name").String(tests.tests[t]);
    o.Key("runs").Uint(tests.runs[t]);
    o.EndObject();
  }
  o.EndArray();
}

ojson TestsJson(const TestProvenance& tests) {
  JsonOut o;
  StreamTests(o, tests);
  return ojson::parse(o.TakeString());
}

ojson PathTestsJson(const Report& r, const FunctionReport& f, uint64_t number,
                    const TestProvenance& tests) {
  const auto& of = tests.paths[&f - r.functions.data()];
  auto it = of.find(number);
  return it == of.end() ? ojson::array() : ojson(it->second);
}

}  // namespace ballarus
