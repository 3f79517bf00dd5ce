// paths.cc — see paths.h.  GcovDataBase follows coverage_init in GCC 12's
// gcc/coverage.cc line by line; the end-to-end test tests/store_test.cc
// compares ProfilePathFor with the .gcda files real gcc -fprofile-arcs
// writes for a range of command lines.
#include "core/paths.h"

#include <string>
#include <vector>

namespace ballarus {

std::string NormalizePath(const std::string& path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string c = path.substr(i, j - i);
    i = j + 1;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(c);
      continue;  // ".." at the root is the root
    }
    parts.push_back(c);
  }
  std::string out = absolute ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out += '/';
    out += parts[k];
  }
  if (out.empty()) out = ".";
  return out;
}

std::string AbsolutePath(const std::string& base, const std::string& path) {
  if (!path.empty() && path[0] == '/') return NormalizePath(path);
  return NormalizePath(base + "/" + path);
}

std::string SourcePath(const std::string& cwd, const std::string& name) {
  if (cwd.empty()) return NormalizePath(name);
  return AbsolutePath(cwd, name);
}

std::string MangleGcovPath(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    const bool slash = j != std::string::npos;
    if (!slash) j = path.size();
    std::string c = path.substr(i, j - i);
    out += c == ".." ? "^" : c;
    if (slash) out += '#';
    i = slash ? j + 1 : j;
  }
  return out;
}

std::string GcovDataBase(const GcovNameInputs& in, std::string* warning) {
  if (warning) warning->clear();
  std::string filename = in.aux_base;
  std::string prefix = in.profile_dir;
  const bool absolute = !filename.empty() && filename[0] == '/';
  if (!absolute) {
    if (!in.profile_dir.empty()) {
      // "When a profile_data_prefix is provided, then mangle full path of
      // filename in order to prevent file path clashing."
      filename = in.pwd + "/" + filename;
      if (!in.prefix_path.empty()) {
        if (filename.compare(0, in.prefix_path.size(), in.prefix_path) == 0) {
          filename = filename.substr(in.prefix_path.size());
          size_t k = 0;
          while (k < filename.size() && filename[k] == '/') ++k;
          filename = filename.substr(k);
        } else if (warning) {
          *warning = "filename '" + filename +
                     "' does not start with profile prefix '" +
                     in.prefix_path + "'";
        }
      }
      filename = MangleGcovPath(filename);
    } else {
      prefix = in.pwd;
    }
  }
  if (prefix.empty()) return filename;
  return prefix + "/" + filename;
}

std::string ProfilePathFor(const GcovNameInputs& in) {
  return AbsolutePath(in.pwd, GcovDataBase(in) + ".bprof");
}

bool ParseCollectGccOptions(const std::string& text,
                            std::vector<std::string>* words) {
  words->clear();
  size_t i = 0;
  const size_t n = text.size();
  while (true) {
    while (i < n && text[i] == ' ') ++i;
    if (i == n) return true;
    if (text[i] != '\'') return false;
    ++i;
    std::string w;
    while (true) {
      size_t q = text.find('\'', i);
      if (q == std::string::npos) return false;
      w += text.substr(i, q - i);
      i = q + 1;
      // '\'' continues the word with a quote.
      if (text.compare(i, 3, "\\''") == 0) {
        w += '\'';
        i += 3;
        continue;
      }
      break;
    }
    words->push_back(w);
  }
}

std::string ObjectFileFor(const std::vector<std::string>& opts,
                          const std::string& source, const std::string& pwd) {
  bool compile_only = false;
  std::string output;
  for (size_t i = 0; i < opts.size(); ++i) {
    const std::string& o = opts[i];
    if (o == "-S" || o == "-E") return "";
    if (o == "-c") compile_only = true;
    if (o == "-o" && i + 1 < opts.size()) output = opts[++i];
  }
  if (!compile_only) return "";
  if (output.empty()) {
    if (source.empty() || source == "-" || source == "<stdin>") return "";
    std::string base = source.substr(source.rfind('/') + 1);
    size_t dot = base.rfind('.');
    if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
    output = base + ".o";
  }
  return AbsolutePath(pwd, output);
}

}  // namespace ballarus
