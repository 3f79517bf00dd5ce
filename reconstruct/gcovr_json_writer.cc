// gcovr_json_writer.cc — see gcovr_json_writer.h.
#include "reconstruct/gcovr_json_writer.h"

#include <algorithm>
#include <map>
#include <string>

#include "reconstruct/json_stream.h"

namespace ballarus {
namespace {

constexpr const char* kFormatVersion = "0.3";

// Python's str.strip() of ASCII text.
std::string Strip(const std::string& s) {
  const char* kSpace = " \t\n\v\f\r\x1c\x1d\x1e\x1f";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

int64_t NonNegative(int64_t n) { return n < 0 ? 0 : n; }

// The name gcovr shows: gcov -m's, the demangled name when there is one.
const std::string& ShownName(const coverage::FunctionCoverage& f) {
  return f.demangled.empty() ? f.name : f.demangled;
}

bool Internal(const std::string& name) {
  return name.rfind("__", 0) == 0 || name.rfind("_GLOBAL__sub_I_", 0) == 0;
}

struct Function {
  int64_t count = 0;
  uint32_t line = 0;
};

void WriteFunctions(const coverage::FileCoverage& f,
                    const GcovrJsonOptions& options, JsonOut* out) {
  std::map<std::string, Function> by_name;
  for (const auto& [symbol, fc] : f.functions) {
    const std::string& name = ShownName(fc);
    if (!options.internal_functions && Internal(name)) continue;
    Function& fn = by_name[name];
    fn.count += NonNegative(fc.count);
    fn.line = std::max(fn.line, fc.line);
  }
  out->Key("functions").BeginArray();
  for (const auto& [name, fn] : by_name) {
    out->BeginObject()
        .Key("execution_count").Int(fn.count)
        .Key("lineno").Uint(fn.line)
        .Key("name").String(name)
        .EndObject();
  }
  out->EndArray();
}

void WriteLine(const coverage::FileCoverage& f, uint32_t line, int64_t count,
               JsonOut* out) {
  out->BeginObject().Key("branches").BeginArray();
  auto b = f.branches.find(line);
  if (b != f.branches.end())
    for (const coverage::Branch& br : b->second)
      out->BeginObject()
          .Key("count").Int(br.executed ? NonNegative(br.count) : 0)
          .Key("fallthrough").Bool(false)
          .Key("throw").Bool(false)
          .EndObject();
  out->EndArray()
      .Key("count").Int(NonNegative(count))
      .Key("gcovr/excluded").Bool(false)
      .Key("gcovr/noncode").Bool(false)
      .Key("line_number").Uint(line)
      .EndObject();
}

std::string FileName(const std::string& path, const std::string& root) {
  if (root.empty()) return path;
  const std::string prefix = root.back() == '/' ? root : root + "/";
  if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0)
    return path.substr(prefix.size());
  return path;
}

}  // namespace

bool GcovrNonCode(const std::string& text) {
  std::string code = text.substr(0, text.find("//"));
  for (size_t open; (open = code.find("/*")) != std::string::npos;) {
    const size_t close = code.find("*/", open + 2);
    if (close == std::string::npos) break;
    code.erase(open, close + 2 - open);
  }
  code = Strip(code);
  return code.empty() || code == "{" || code == "}" || code == "else";
}

std::string GcovrJson(const coverage::Summary& s, const SourceLineFn& text,
                      const GcovrJsonOptions& options) {
  JsonOut out;
  out.BeginObject().Key("files").BeginArray();
  for (const coverage::FileCoverage& f : s.files) {
    out.BeginObject().Key("file").String(FileName(f.path, options.root));
    WriteFunctions(f, options, &out);
    out.Key("lines").BeginArray();
    for (const auto& [line, count] : f.lines) {
      if (count <= 0) {
        const std::string* t = text(f.file, line);
        if (t && GcovrNonCode(*t)) continue;
      }
      WriteLine(f, line, count, &out);
    }
    out.EndArray().EndObject();
  }
  out.EndArray().Key("gcovr/format_version").String(kFormatVersion);
  out.EndObject();
  std::string json = out.TakeString();
  json += '\n';
  return json;
}

}  // namespace ballarus
