// commands.cc — loading and selection shared by the subcommands (see
// commands.h).
#include "reconstruct/commands.h"

#include <regex>

namespace ballarus {

void Fail(const std::string& file, const std::string& problem) {
  throw Fatal{file.empty() ? problem : file + ": " + problem};
}

std::string Printable(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    size_t n = 0;
    if (c >= 0x20 && c < 0x7f) {
      n = 1;
    } else if (c >= 0xc2 && c <= 0xf4) {
      const size_t len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      if (i + len <= s.size()) {
        uint32_t cp = c & (0x7f >> len);
        bool ok = true;
        for (size_t k = 1; k < len && ok; ++k) {
          const unsigned char d = s[i + k];
          ok = (d & 0xc0) == 0x80;
          cp = cp << 6 | (d & 0x3f);
        }
        // Shortest form, no surrogates, at most U+10FFFF, and not a C1
        // control character (U+0080..U+009F).
        if (ok && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000) &&
            !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff &&
            !(cp >= 0x80 && cp <= 0x9f))
          n = len;
      }
    }
    if (n == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  return out;
}

void LoadReport(const ProfileInputs& in, LoadedReport* out) {
  const std::vector<std::string> files = ExpandProfileInputs(in.args);
  std::string err;
  if (files.size() == 1 && in.args.size() == 1 && files[0] == in.args[0]) {
    // One file named: read as it is (error offsets are the file's).
    if (!LoadProfile(files[0], &out->profile, &err, in.test))
      Fail(files[0], err);
    out->files = files;
  } else {
    ballarus_profile merged{};
    struct Free {
      ballarus_profile* p;
      ~Free() { ballarus_profile_free(p); }
    } free_merged{&merged};
    MergeProfileFiles(files, in.skip_bad, &merged, &out->files);
    const std::string label = InputsLabel(in.args);
    if (!LoadProfileFrom(&merged, label, &out->profile, &err, in.test))
      Fail(label, (in.test.empty() ? "merged: " : "") + err);
  }
  out->report = report::BuildReport(out->profile);
}

std::vector<const report::FunctionReport*> Select(const report::Report& r,
                                                  const std::string& pattern) {
  std::vector<const report::FunctionReport*> out;
  std::regex re;
  if (!pattern.empty()) {
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      Fail("", "--function: invalid regular expression '" +
                   Printable(pattern) + "': " + e.what());
    }
  }
  for (const report::FunctionReport& f : r.functions)
    if (pattern.empty() || std::regex_search(f.name, re) ||
        std::regex_search(f.demangled, re))
      out.push_back(&f);
  return out;
}

}  // namespace ballarus
