// cmd_gcov.cc — `ballarus-reconstruct gcov PROFILE [gcov's options]`: the
// profile's annotated sources as `.gcov` files, or gcov's JSON
// intermediate format (`-j`, NAME.gcov.json.gz), written exactly as gcov 12
// writes them for the same build (reconstruct/gcov_view.h,
// gcov_writer.h), with gcov's summaries on stdout.
//
// `gcov a.gcda b.gcda ...` reads every data file, then writes one .gcov
// per source file with the counts of all of them (and no Graph/Data/Runs
// header lines when there is more than one); `gcov -j` writes one JSON
// file per data file.  Here a translation unit of the profile stands for a
// data file: all of them (sorted by source name) unless --tu selects some.
// Where gcov names its notes and data files (Graph:, Data:,
// "data_file"), the profile is named: it holds both.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "reconstruct/commands.h"
#include "reconstruct/gcov_view.h"
#include "reconstruct/gcov_writer.h"
#include "reconstruct/output_file.h"
#include "reconstruct/report_filter.h"

namespace ballarus {
namespace {

using gcov::View;

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (name.empty() || name[0] == '/' || dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// gcov's lbasename, extension stripped.
std::string StemOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

bool MTime(const std::string& path, struct timespec* t) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  *t = st.st_mtim;
  return true;
}

bool Newer(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

// The TUs to read, in order.
std::vector<uint32_t> SelectTus(const report::Report& r,
                                const std::vector<std::string>& names) {
  std::vector<uint32_t> all(r.tus.size());
  for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
  std::stable_sort(all.begin(), all.end(), [&](uint32_t a, uint32_t b) {
    return r.tus[a].source != r.tus[b].source
               ? r.tus[a].source < r.tus[b].source
               : r.tus[a].cwd < r.tus[b].cwd;
  });
  if (names.empty()) return all;
  std::vector<uint32_t> out;
  for (const std::string& name : names) {
    bool found = false;
    for (uint32_t t : all) {
      const std::string& s = r.tus[t].source;
      const size_t slash = s.rfind('/');
      if (s == name || (slash != std::string::npos && s.substr(slash + 1) == name) ||
          JoinPath(r.tus[t].cwd, s) == name) {
        if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
        found = true;
      }
    }
    if (!found)
      Fail(r.profile, "--tu " + Printable(name) +
                          ": no translation unit has that source");
  }
  return out;
}

void WriteFileOrFail(const std::string& path, const std::string& bytes) {
  WriteOutputFileOrFail(path, bytes);
}

// gcov's gzopen(name, "w") + gzputs, through a file made as every output
// is (reconstruct/output_file.h).
void WriteGzOrFail(const std::string& path, const std::string& text) {
  OutputFile file;
  std::string error;
  if (!file.Open(path, {}, &error)) Fail(path, error);
  const int fd = dup(file.fd());  // gzclose closes its own
  gzFile gz = fd < 0 ? nullptr : gzdopen(fd, "w");
  if (gz == nullptr) {
    if (fd >= 0) close(fd);
    Fail(path, std::string("cannot write: ") + std::strerror(errno));
  }
  const bool ok = text.empty() || gzputs(gz, text.c_str()) != -1;
  if (gzclose(gz) != Z_OK || !ok)  // a write failed: errno says why
    Fail(path, std::string("cannot write: ") + std::strerror(errno));
  if (!file.Commit(&error)) Fail(path, error);
}

std::string GccVersion(const std::string& compiler) {
  const std::string prefix = "gcc ";
  return compiler.compare(0, prefix.size(), prefix) == 0
             ? compiler.substr(prefix.size())
             : compiler;
}

}  // namespace

int RunGcov(const ProfileInputs& in, const GcovOptions& o,
            const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const std::string& path = loaded.report.profile;
  const report::Report& r = loaded.report;
  const FileFilter filter(r, filter_options);
  const std::vector<uint32_t> tus = SelectTus(r, o.tus);
  gcov::Format format;
  format.branches = o.branches;
  format.counts = o.counts;
  format.unconditional = o.unconditional;
  format.demangle = o.demangle;
  format.human = o.human;
  struct timespec profile_time = {};
  for (const std::string& f : loaded.files) {  // the newest input
    struct timespec t = {};
    if (MTime(f, &t) && (t.tv_sec > profile_time.tv_sec ||
                         (t.tv_sec == profile_time.tv_sec &&
                          t.tv_nsec > profile_time.tv_nsec)))
      profile_time = t;
  }
  const bool messages = !o.to_stdout;

  // The name each source is shown with (-s removes a prefix), or empty
  // when -r or the filters leave it out.
  auto names_of = [&](const View& v) {
    std::vector<std::string> names;
    for (const gcov::Source& s : v.sources) {
      std::string name = s.name;
      const std::string& p = o.source_prefix;
      if (!p.empty() && name.size() > p.size() &&
          name.compare(0, p.size(), p) == 0 && name[p.size()] == '/')
        name = name.substr(p.size() + 1);
      const bool absolute = !name.empty() && name[0] == '/';
      names.push_back((o.relative_only && absolute) || !filter.Keep(s.file)
                          ? std::string()
                          : name);
    }
    return names;
  };
  auto function_summaries = [&](const View& v) {
    if (!o.function_summaries || !messages) return;
    for (const gcov::Function& fn : v.functions) {
      std::printf("Function '%s'\n",
                  Printable(o.demangle ? fn.demangled : fn.name).c_str());
      gcov::Coverage c;
      c.lines = fn.coverage.lines;
      c.lines_executed = fn.coverage.lines_executed;
      std::printf("%s\n", gcov::SummaryText(c, false).c_str());
    }
  };
  int64_t total_lines = 0, total_executed = 0;
  auto file_summary = [&](const std::string& name, const gcov::Coverage& c) {
    total_lines += c.lines;
    total_executed += c.lines_executed;
    if (!messages) return;
    std::printf("File '%s'\n%s", Printable(name).c_str(),
                gcov::SummaryText(c, o.branches).c_str());
  };

  if (o.json) {
    // gcov -j: each data file alone, group lines apart.
    for (uint32_t t : tus) {
      gcov::Options vo;
      vo.branches = o.branches;
      vo.json = true;
      const View v(r, {t}, vo);
      function_summaries(v);
      const std::vector<std::string> names = names_of(v);
      for (size_t i = 0; i < v.sources.size(); ++i) {
        if (names[i].empty()) continue;
        file_summary(names[i], v.sources[i].coverage);
        if (messages) std::printf("\n");
      }
      const report::TuReport& tu = r.tus[t];
      const std::string json = gcov::GcovJson(v, GccVersion(tu.compiler),
                                              tu.cwd, path, format, names);
      if (o.no_output) continue;
      if (o.to_stdout) {
        std::printf("%s\n", json.c_str());
        continue;
      }
      const std::string name = StemOf(tu.source) + ".gcov.json.gz";
      std::printf("Creating '%s'\n", Printable(name).c_str());
      WriteGzOrFail(JoinPath(o.output_dir, name), json);
    }
  } else {
    gcov::Options vo;
    vo.branches = o.branches;
    const View v(r, tus, vo);
    function_summaries(v);
    gcov::Header header;
    header.single = tus.size() == 1;
    header.graph = header.data = path;
    header.runs = v.runs;
    // -l prefixes the input's name: gcov's last input file.
    const std::string input =
        tus.empty() ? std::string()
                    : gcov::CanonicalizeName(r.tus[tus.back()].source);
    const std::vector<std::string> names = names_of(v);
    for (uint32_t si = 0; si < v.sources.size(); ++si) {
      const gcov::Source& s = v.sources[si];
      const std::string& name = names[si];
      if (name.empty()) continue;
      file_summary(name, s.coverage);
      if (o.no_output) continue;
      const std::string gcov_name =
          gcov::GcovFileName(input, name, o.long_names, o.preserve_paths);
      if (!s.coverage.lines) {
        if (messages) {
          std::remove(JoinPath(o.output_dir, gcov_name).c_str());
          std::printf("Removing '%s'\n\n", Printable(gcov_name).c_str());
        }
        continue;
      }
      // The source as the compiler read it: relative to its TU's compile
      // directory, else to ours.
      std::string source_path = JoinPath(r.tus[s.tu].cwd, s.name);
      std::vector<std::string> text;
      if (!gcov::ReadSourceLines(source_path, &text)) {
        source_path = s.name;
        if (!gcov::ReadSourceLines(source_path, &text))
          std::fprintf(stderr, "%s: %s: cannot open source file\n", kProg,
                       Printable(s.name).c_str());
      }
      struct timespec source_time;
      gcov::Header h = header;
      h.source_newer = !text.empty() && MTime(source_path, &source_time) &&
                       Newer(source_time, profile_time);
      const std::string out = gcov::GcovText(v, si, format, h, name, text);
      if (o.to_stdout) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        continue;
      }
      std::printf("Creating '%s'\n\n", Printable(gcov_name).c_str());
      WriteFileOrFail(JoinPath(o.output_dir, gcov_name), out);
    }
  }
  if (messages) {
    gcov::Coverage total;
    total.lines = total_lines;
    total.lines_executed = total_executed;
    std::fputs(gcov::SummaryText(total, false).c_str(), stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace ballarus
