// cmd_gcov.cc — `ballarus-reconstruct gcov PROFILE [gcov's options]`: the
// profile's annotated sources as `.gcov` files, or gcov's JSON
// intermediate format (`-j`, NAME.gcov.json.gz), written exactly as gcov 12
// writes them for the same build (reconstruct/gcov_view.h,
// gcov_writer.h), with gcov's summaries on stdout.
//
// The inputs are gcov's: a source, .gcda, .gcno or object name stands for
// the profile NAME.bprof where gcov would look for NAME.gcda (-o is gcov's
// object directory); profiles and directories of them are read as they
// are.  `gcov a.gcda b.gcda ...` reads every data file, then writes one
// .gcov per source file with the counts of all of them (and no
// Graph/Data/Runs header lines when there is more than one); `gcov -j`
// writes one JSON file per data file.  Here a translation unit of the
// profiles stands for a data file: all of them (sorted by source name)
// unless --tu selects some.  Where gcov names its notes and data files
// (Graph:, Data:, "data_file"), the profile is named: it holds both.
// Files are written into the working directory, as gcov's.
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
#include "runtime/ballarus_format.h"

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

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A profile argument: a directory, a *.bprof or *.profile name, or a file
// that starts with a profile's magic.  Anything else is named as gcov's
// inputs are (a source, .gcda, .gcno or object).
bool IsProfileArgument(const std::string& arg) {
  struct stat st;
  if (stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;
  if (EndsWith(arg, ".bprof") || EndsWith(arg, ".profile")) return true;
  char magic[sizeof BALLARUS_PROFILE_MAGIC - 1] = {};
  FILE* f = std::fopen(arg.c_str(), "rb");
  if (f == nullptr) return false;
  const bool is = std::fread(magic, 1, sizeof magic, f) == sizeof magic &&
                  std::memcmp(magic, BALLARUS_PROFILE_MAGIC, sizeof magic) == 0;
  std::fclose(f);
  return is;
}

// gcov's create_file_names: the data file gcov would read for input
// `name`, with the suffix .bprof (where an object's counts go by default):
// with -o DIR (a directory) DIR/BASE, with -o FILE that file's name, else
// the input's own name; the extension of the last component removed.
std::string ProfileFor(const std::string& name, const std::string& objdir) {
  std::string stem = name;
  if (!objdir.empty()) {
    struct stat st;
    stem = objdir;
    if (stat(objdir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      if (stem.back() != '/') stem += '/';
      const size_t slash = name.rfind('/');
      stem += slash == std::string::npos ? name : name.substr(slash + 1);
    }
  }
  const size_t slash = stem.rfind('/');
  const size_t dot = stem.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    stem.resize(dot);
  return stem + ".bprof";
}

// The profiles the arguments stand for.  A gcov-style input whose profile
// is missing is reported as gcov reports a missing notes file (status 1)
// and skipped.  `last_input`: gcov's last input name (what -l prefixes),
// empty when the last argument is a profile; `gcov_named`: some argument
// is named as gcov's inputs are.
ProfileInputs ResolveInputs(const ProfileInputs& in, const GcovOptions& o,
                            std::string* last_input, bool* gcov_named,
                            int* status) {
  ProfileInputs out = in;
  out.args.clear();
  last_input->clear();
  for (const std::string& arg : in.args) {
    if (IsProfileArgument(arg)) {
      out.args.push_back(arg);
      last_input->clear();
      continue;
    }
    *last_input = arg;
    *gcov_named = true;
    const std::string profile = ProfileFor(arg, o.object_dir);
    struct stat st;
    if (stat(profile.c_str(), &st) != 0) {
      std::fprintf(stderr, "%s:cannot open profile\n",
                   Printable(profile).c_str());
      *status = 1;
      continue;
    }
    out.args.push_back(profile);
  }
  return out;
}

gcov::Format FormatOf(const GcovOptions& o) {
  gcov::Format format;
  format.branches = o.branches;
  format.counts = o.counts;
  format.unconditional = o.unconditional;
  format.demangle = o.demangle;
  format.human = o.human;
  format.all_blocks = o.all_blocks;
  return format;
}

// The newest modification time of the inputs.
struct timespec NewestTime(const std::vector<std::string>& files) {
  struct timespec newest = {};
  for (const std::string& f : files) {
    struct timespec t = {};
    if (MTime(f, &t) && Newer(t, newest)) newest = t;
  }
  return newest;
}

// What one `gcov` run shares between its steps.
struct GcovRun {
  const report::Report& r;
  const GcovOptions& o;
  const FileFilter& filter;
  gcov::Format format;
  bool messages;
  struct timespec profile_time;
  int64_t total_lines = 0, total_executed = 0;

  // The name each source is shown with (-s removes a prefix), or empty
  // when -r or the filters leave it out.
  std::vector<std::string> NamesOf(const View& v) const {
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
  }

  void FunctionSummaries(const View& v) const {
    if (!o.function_summaries || !messages) return;
    for (const gcov::Function& fn : v.functions) {
      std::printf("Function '%s'\n",
                  Printable(o.demangle ? fn.demangled : fn.name).c_str());
      gcov::Coverage c;
      c.lines = fn.coverage.lines;
      c.lines_executed = fn.coverage.lines_executed;
      std::printf("%s\n", gcov::SummaryText(c, false).c_str());
    }
  }

  void FileSummary(const std::string& name, const gcov::Coverage& c) {
    total_lines += c.lines;
    total_executed += c.lines_executed;
    if (!messages) return;
    std::printf("File '%s'\n%s", Printable(name).c_str(),
                gcov::SummaryText(c, o.branches).c_str());
  }

  void WriteJson(const std::vector<uint32_t>& tus);
  void WriteGcovFiles(const std::vector<uint32_t>& tus,
                      const std::string& input);
  void WriteGcovFile(const View& v, const gcov::Header& header, uint32_t si,
                     const std::string& name, const std::string& gcov_name);
};

// gcov -j: each data file alone, group lines apart.
void GcovRun::WriteJson(const std::vector<uint32_t>& tus) {
  for (uint32_t t : tus) {
    gcov::Options vo;
    vo.branches = o.branches;
    vo.json = true;
    const View v(r, {t}, vo);
    FunctionSummaries(v);
    const std::vector<std::string> names = NamesOf(v);
    for (size_t i = 0; i < v.sources.size(); ++i) {
      if (names[i].empty()) continue;
      FileSummary(names[i], v.sources[i].coverage);
      if (messages) std::printf("\n");
    }
    const report::TuReport& tu = r.tus[t];
    const std::string json = gcov::GcovJson(v, GccVersion(tu.compiler), tu.cwd,
                                            r.profile, format, names);
    if (o.no_output) continue;
    if (o.to_stdout) {
      std::printf("%s\n", json.c_str());
      continue;
    }
    const std::string name = StemOf(tu.source) + ".gcov.json.gz";
    std::printf("Creating '%s'\n", Printable(name).c_str());
    WriteGzOrFail(name, json);
  }
}

// One .gcov file: source `si` of `v`, shown as `name`.
void GcovRun::WriteGcovFile(const View& v, const gcov::Header& header,
                            uint32_t si, const std::string& name,
                            const std::string& gcov_name) {
  const gcov::Source& s = v.sources[si];
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
    return;
  }
  std::printf("Creating '%s'\n\n", Printable(gcov_name).c_str());
  WriteFileOrFail(gcov_name, out);
}

// The .gcov files of all `tus` read together; -l prefixes `input`.
void GcovRun::WriteGcovFiles(const std::vector<uint32_t>& tus,
                             const std::string& input) {
  gcov::Options vo;
  vo.branches = o.branches;
  const View v(r, tus, vo);
  FunctionSummaries(v);
  gcov::Header header;
  header.single = tus.size() == 1;
  header.graph = header.data = r.profile;
  header.runs = v.runs;
  const std::vector<std::string> names = NamesOf(v);
  for (uint32_t si = 0; si < v.sources.size(); ++si) {
    const std::string& name = names[si];
    if (name.empty()) continue;
    FileSummary(name, v.sources[si].coverage);
    if (o.no_output) continue;
    const std::string gcov_name =
        gcov::GcovFileName(input, name, o.long_names, o.preserve_paths);
    if (!v.sources[si].coverage.lines) {
      if (messages) {
        std::remove(gcov_name.c_str());
        std::printf("Removing '%s'\n\n", Printable(gcov_name).c_str());
      }
      continue;
    }
    WriteGcovFile(v, header, si, name, gcov_name);
  }
}

}  // namespace

int RunGcov(const ProfileInputs& given, const GcovOptions& o,
            const FilterOptions& filter_options) {
  std::string last_input;
  bool gcov_named = false;
  int status = 0;
  const ProfileInputs in =
      ResolveInputs(given, o, &last_input, &gcov_named, &status);
  if (in.args.empty()) {
    if (!o.to_stdout) std::printf("No executable lines\n");
    std::fflush(stdout);
    return status;
  }
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const report::Report& r = loaded.report;
  // Given gcov's inputs, every source is written, as gcov writes them
  // (system headers too), unless a filter option says otherwise.
  FilterOptions fo = filter_options;
  if (gcov_named && fo.include.empty() && fo.exclude.empty())
    fo.all_files = true;
  const FileFilter filter(r, fo);
  const std::vector<uint32_t> tus = SelectTus(r, o.tus);
  GcovRun run{r, o, filter, FormatOf(o), !o.to_stdout,
              NewestTime(loaded.files)};
  if (o.json) {
    run.WriteJson(tus);
  } else {
    // -l prefixes gcov's last input: the last argument as given, or for a
    // profile the last TU's source.
    std::string input = last_input;
    if (input.empty() && !tus.empty())
      input = gcov::CanonicalizeName(r.tus[tus.back()].source);
    run.WriteGcovFiles(tus, input);
  }
  if (run.messages) {
    gcov::Coverage total;
    total.lines = run.total_lines;
    total.lines_executed = run.total_executed;
    std::fputs(gcov::SummaryText(total, false).c_str(), stdout);
  }
  std::fflush(stdout);
  return status;
}

}  // namespace ballarus
