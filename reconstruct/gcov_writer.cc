// gcov_writer.cc — gcov's .gcov text and JSON (see gcov_writer.h),
// transcribed from gcc-12.2.0/gcc/gcov.cc: output_lines,
// output_line_beginning, output_line_details, output_branch_count,
// output_function_details, format_gcov, format_count,
// output_json_intermediate_file, output_intermediate_json_line and GCC's
// json.cc printer (", " and ": " separators, one line).  The JSON key
// order is the order gcov 12 prints (its json::object iterates a hash map;
// the order is fixed for the keys gcov uses).
#include "reconstruct/gcov_writer.h"

#include "core/gcov_lines.h"
#include "reconstruct/commands.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace ballarus {
namespace gcov {
namespace {

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, n);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(&out[0], out.size(), fmt, ap);
  va_end(ap);
  out.resize(n);
  return out;
}

constexpr const char* kLineMarks[2] = {"=====", "#####"};
constexpr const char* kBlockMarks[2] = {"%%%%%", "$$$$$"};

void Pad9(std::string* s) {
  if (s->size() < 9) s->insert(0, 9 - s->size(), ' ');
}

// A function's name as the text report prints it: control bytes escaped
// \xNN as in error lines (commands.h Printable), so a name cannot move the
// terminal's cursor or split a line of the .gcov file.  Names GCC gives
// are printable UTF-8 and come out unchanged, as gcov prints them.
std::string NameOf(const Function& fn, bool demangle) {
  return Printable(demangle ? fn.demangled : fn.name);
}

// output_line_beginning; `marks` are the never-run marks for an
// exceptional and an unexceptional line ("=====" "#####"; -a's block lines
// "%%%%%" "$$$$$").
std::string LineBeginning(bool exists, bool unexceptional,
                          bool has_unexecuted_block, int64_t count,
                          uint32_t line_num, bool human,
                          const char* const marks[2] = kLineMarks) {
  std::string s;
  if (exists) {
    if (count > 0) {
      s = FormatGcov(count, 0, -1, human);
      if (has_unexecuted_block) s += "*";
      Pad9(&s);
    } else {
      s = marks[unexceptional ? 1 : 0];
      Pad9(&s);
    }
  } else {
    s = "-";
    Pad9(&s);
  }
  return s + Printf(":%5u", line_num);
}

// output_branch_count: one line for arc `a` numbered `ix`, or nothing.
bool BranchCount(const View& v, const ArcId& id, int ix, const Format& f,
                 std::string* out) {
  const Function& fn = v.functions[id.first];
  const Arc& arc = fn.arcs[id.second];
  const int64_t src_count = fn.blocks[arc.src].count;
  const int places = f.counts ? -1 : 0;
  if (arc.is_call_non_return) {
    if (src_count)
      *out += Printf("call   %2d returned %s\n", ix,
                     FormatGcov(fn.CallReturns(arc), src_count, places,
                                f.human)
                         .c_str());
    else
      *out += Printf("call   %2d never executed\n", ix);
  } else if (!arc.is_unconditional) {
    if (src_count)
      *out += Printf("branch %2d taken %s%s\n", ix,
                     FormatGcov(arc.count, src_count, places, f.human).c_str(),
                     arc.fall_through ? " (fallthrough)"
                     : arc.is_throw   ? " (throw)"
                                      : "");
    else
      *out += Printf("branch %2d never executed\n", ix);
  } else if (f.unconditional && !fn.blocks[arc.dst].is_call_return) {
    if (src_count)
      *out += Printf("unconditional %2d taken %s\n", ix,
                     FormatGcov(arc.count, src_count, places, f.human).c_str());
    else
      *out += Printf("unconditional %2d never executed\n", ix);
  } else {
    return false;
  }
  return true;
}

// output_line_details: with -a a line per block ending on the line (but
// call returns), numbered on the line, each followed with -b by its
// successor arcs; else with -b the line's branches.
void LineDetails(const View& v, const Line& line, uint32_t line_num,
                 const Format& f, std::string* out) {
  if (f.all_blocks) {
    int ix = 0, jx = 0;
    for (const BlockId& id : line.blocks) {
      const Function& fn = v.functions[id.first];
      const Block& b = fn.blocks[id.second];
      if (!b.is_call_return) {
        // gcov passes the block's `exceptional` where the line's
        // `unexceptional` goes: an exceptional block shows "$$$$$".
        *out += LineBeginning(line.exists, b.exceptional, false, b.count,
                              line_num, f.human, kBlockMarks);
        *out += Printf("-block %2d\n", ix++);
      }
      if (f.branches)
        for (uint32_t a : b.succ)
          jx += BranchCount(v, ArcId{id.first, a}, jx, f, out);
    }
    return;
  }
  if (!f.branches) return;
  int ix = 0;
  for (const ArcId& a : line.branches) ix += BranchCount(v, a, ix, f, out);
}

void FunctionDetails(const Function& fn, const Format& f, std::string* out) {
  if (!f.branches) return;
  *out += "function " + NameOf(fn, f.demangle);
  *out += " called " + FormatGcov(fn.called(), 0, -1, f.human);
  *out += " returned " + FormatGcov(fn.returned(), fn.called(), 0, f.human);
  *out += " blocks executed " +
          FormatGcov(fn.blocks_executed, fn.block_count(), 0, f.human);
  *out += "\n";
}

void SourceLine(const std::vector<std::string>& text, uint32_t line,
                std::string* out) {
  *out += ':';
  if (line >= 1 && line <= text.size()) *out += text[line - 1];
  *out += '\n';
}

// UTF-8 decoding: the length of the valid sequence at s[i], or 0.
size_t Utf8Sequence(const std::string& s, size_t i) {
  const unsigned char c = s[i];
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
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
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

std::string JsonLine(const View& v, const Line& line, uint32_t line_num,
                     const std::string* function_name, const Format& f) {
  std::string branches = "[";
  bool first = true;
  if (f.branches)
    for (const ArcId& id : line.branches) {
      const Arc& arc = v.functions[id.first].arcs[id.second];
      if (arc.is_unconditional || arc.is_call_non_return) continue;
      if (!first) branches += ", ";
      first = false;
      branches += Printf("{\"fallthrough\": %s, \"count\": %" PRId64
                         ", \"throw\": %s}",
                         arc.fall_through ? "true" : "false", arc.count,
                         arc.is_throw ? "true" : "false");
    }
  branches += "]";
  std::string s = "{\"branches\": " + branches +
                  Printf(", \"count\": %" PRId64 ", \"line_number\": %u",
                         line.count, line_num) +
                  ", \"unexecuted_block\": " +
                  (line.has_unexecuted_block ? "true" : "false");
  if (function_name) s += ", \"function_name\": " + JsonString(*function_name);
  return s + "}";
}

}  // namespace

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        if (c < 0x20 || c == 0x7f) {
          out += Printf("\\u%04x", c);
          break;
        }
        const size_t n = Utf8Sequence(s, i);
        if (n == 0) {
          out += Printf("\\u%04x", c);
          break;
        }
        out.append(s, i, n);
        i += n;
        continue;
      }
    }
    ++i;
  }
  return out + "\"";
}

std::string FormatGcov(int64_t top, int64_t bottom, int decimals, bool human) {
  if (decimals >= 0) {
    float ratio = bottom ? 100.0f * top / bottom : 0;
    if (ratio > 0.0f && ratio < 0.5f && decimals == 0) ratio = 1.0f;
    return Printf("%.*f%%", decimals, ratio);
  }
  if (top < 1000 || !human) return Printf("%" PRId64, top);
  static const char kUnits[] = " kMGTPEZY";
  unsigned i;
  // gcov's int64 divisor overflows past 'E'; a double gives the same
  // figures without that.
  double divisor = 1;
  for (i = 0; kUnits[i + 1]; i++, divisor *= 1000)
    if (static_cast<double>(top) + std::floor(divisor / 2) < 1000 * divisor) break;
  const float r = 1.0f * top / static_cast<float>(divisor);
  return Printf("%.1f%c", r, kUnits[i]);
}

bool ReadSourceLines(const std::string& path, std::vector<std::string>* out) {
  out->clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    // read_line: a NUL ends what fprintf("%s") prints.
    const size_t nul = line.find('\0');
    if (nul != std::string::npos) line.resize(nul);
    out->push_back(line);
  }
  return true;
}

std::string GcovText(const View& v, uint32_t source, const Format& f,
                     const Header& h, const std::string& name,
                     const std::vector<std::string>& text) {
  const Source& src = v.sources[source];
  std::string out = "        -:    0:Source:" + name + "\n";
  if (h.single) {
    out += "        -:    0:Graph:" + h.graph + "\n";
    out += "        -:    0:Data:" + h.data + "\n";
    out += Printf("        -:    0:Runs:%u\n", static_cast<unsigned>(h.runs));
  }
  if (h.source_newer) out += "        -:    0:Source is newer than graph\n";

  uint32_t line_start_group = 0;
  std::vector<uint32_t> fns;
  for (uint32_t line_num = 1; line_num <= text.size(); ++line_num) {
    if (line_num >= src.lines.size()) {
      out += Printf("%9s:%5u", "-", line_num);
      SourceLine(text, line_num, &out);
      continue;
    }
    const Line& line = src.lines[line_num];
    if (line_start_group == 0) {
      fns = src.FunctionsAt(v.functions, line_num);
      if (fns.size() > 1) {
        for (uint32_t fi : fns)
          if (v.functions[fi].end_line > line_start_group)
            line_start_group = v.functions[fi].end_line;
      } else if (fns.size() == 1) {
        FunctionDetails(v.functions[fns[0]], f, &out);
      }
    }
    out += LineBeginning(line.exists, line.unexceptional,
                         line.has_unexecuted_block, line.count, line_num,
                         f.human);
    SourceLine(text, line_num, &out);
    LineDetails(v, line, line_num, f, &out);
    if (line_start_group == line_num) {
      for (uint32_t fi : fns) {
        const Function& fn = v.functions[fi];
        out += "------------------\n";
        out += NameOf(fn, f.demangle) + ":\n";
        FunctionDetails(fn, f, &out);
        for (size_t i = 0; i < fn.lines.size(); ++i) {
          const Line& fl = fn.lines[i];
          const uint32_t l = fn.start_line + static_cast<uint32_t>(i);
          out += LineBeginning(fl.exists, fl.unexceptional,
                               fl.has_unexecuted_block, fl.count, l, f.human);
          SourceLine(text, l, &out);
          LineDetails(v, fl, l, f, &out);
        }
      }
      out += "------------------\n";
      line_start_group = 0;
    }
  }
  return out;
}

std::string GcovJson(const View& v, const std::string& gcc_version,
                     const std::string& cwd, const std::string& data_file,
                     const Format& f, const std::vector<std::string>& names) {
  std::string files = "[";
  bool first_file = true;
  for (size_t si = 0; si < v.sources.size(); ++si) {
    if (si >= names.size() || names[si].empty()) continue;
    if (!first_file) files += ", ";
    first_file = false;
    std::string functions = "[";
    const std::vector<uint32_t> sorted = v.SortedFunctions(si);
    for (size_t k = 0; k < sorted.size(); ++k) {
      const Function& fn = v.functions[sorted[k]];
      if (k) functions += ", ";
      functions += Printf("{\"blocks\": %u, \"end_column\": %u, "
                          "\"start_line\": %u, \"name\": ",
                          fn.block_count(), fn.end_column, fn.start_line) +
                   JsonString(fn.name) +
                   Printf(", \"blocks_executed\": %u, \"execution_count\": "
                          "%" PRId64 ", \"demangled_name\": ",
                          fn.blocks_executed, fn.called()) +
                   JsonString(fn.demangled) +
                   Printf(", \"start_column\": %u, \"end_line\": %u}",
                          fn.start_column, fn.end_line);
    }
    functions += "]";
    std::string lines = "[";
    bool first = true;
    for (const JsonLineRef& l : v.JsonLines(static_cast<uint32_t>(si))) {
      if (!first) lines += ", ";
      first = false;
      lines += JsonLine(v, *l.line, l.line_number,
                        l.function < 0 ? nullptr : &v.functions[l.function].name,
                        f);
    }
    lines += "]";
    files += "{\"lines\": " + lines + ", \"functions\": " + functions +
             ", \"file\": " + JsonString(names[si]) + "}";
  }
  files += "]";
  return "{\"gcc_version\": " + JsonString(gcc_version) + ", \"files\": " +
         files + ", \"format_version\": \"1\", "
                 "\"current_working_directory\": " +
         JsonString(cwd) + ", \"data_file\": " + JsonString(data_file) + "}";
}

std::string GcovFileName(const std::string& input_name,
                         const std::string& source_name, bool long_names,
                         bool preserve_paths) {
  auto mangle = [&](const std::string& n) {
    if (preserve_paths) return ManglePath(n);
    const size_t slash = n.rfind('/');
    return slash == std::string::npos ? n : n.substr(slash + 1);
  };
  std::string s;
  if (long_names && !input_name.empty() && source_name != input_name)
    s += mangle(input_name) + "##";
  return s + mangle(source_name) + ".gcov";
}

std::string SummaryText(const Coverage& c, bool branches) {
  std::string s =
      c.lines ? Printf("Lines executed:%s of %" PRId64 "\n",
                       FormatGcov(c.lines_executed, c.lines, 2, false).c_str(),
                       c.lines)
              : std::string("No executable lines\n");
  if (!branches) return s;
  if (c.branches) {
    s += Printf("Branches executed:%s of %" PRId64 "\n",
                FormatGcov(c.branches_executed, c.branches, 2, false).c_str(),
                c.branches);
    s += Printf("Taken at least once:%s of %" PRId64 "\n",
                FormatGcov(c.branches_taken, c.branches, 2, false).c_str(),
                c.branches);
  } else {
    s += "No branches\n";
  }
  if (c.calls)
    s += Printf("Calls executed:%s of %" PRId64 "\n",
                FormatGcov(c.calls_executed, c.calls, 2, false).c_str(),
                c.calls);
  else
    s += "No calls\n";
  return s;
}

}  // namespace gcov
}  // namespace ballarus
