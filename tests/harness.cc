// harness.cc — see harness.h.
#include "tests/harness.h"

#include <cctype>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "nlohmann/json.hpp"

namespace harness {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  return !in.bad();
}

std::string ReadFileOrDie(const std::string& path) {
  std::string s;
  if (!ReadFile(path, &s)) {
    fprintf(stderr, "harness: cannot read %s\n", path.c_str());
    abort();
  }
  return s;
}

void WriteFileOrDie(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) {
    fprintf(stderr, "harness: cannot write %s\n", path.c_str());
    abort();
  }
}

CommandResult Run(const std::string& command, const std::string& cwd,
                  const std::vector<std::string>& env) {
  static int serial = 0;
  // Unique capture files (tests may run builds from several threads).
  std::string base;
  {
    static std::string root = TempRoot();
    char buf[64];
    snprintf(buf, sizeof buf, "/cap.%d.%d.%lx", (int)getpid(),
             __atomic_add_fetch(&serial, 1, __ATOMIC_SEQ_CST),
             (unsigned long)pthread_self());
    base = root + buf;
  }
  std::string out_path = base + ".out", err_path = base + ".err";
  std::string script = "cd " + Quote(cwd) + " && ";
  for (const std::string& e : env) script += "export " + Quote(e) + "; ";
  script += command;
  CommandResult r;
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0) _exit(126);
    dup2(n, 0);
    dup2(o, 1);
    dup2(e, 2);
    execl("/bin/sh", "sh", "-c", script.c_str(), (char*)nullptr);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status)
                               : 128 + WTERMSIG(status);
  ReadFile(out_path, &r.out);
  ReadFile(err_path, &r.err);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return r;
}

void MakeFreshDir(const std::string& path) {
  CommandResult r = Run("rm -rf " + Quote(path) + " && mkdir -p " + Quote(path), "/");
  if (r.status != 0) {
    fprintf(stderr, "harness: cannot create %s: %s\n", path.c_str(),
            r.err.c_str());
    abort();
  }
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string TempRoot() {
  const char* t = getenv("TEST_TMPDIR");
  return t && *t ? t : "/tmp";
}

std::string Runfiles() {
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* d = getenv(var);
    if (d && *d) return std::string(d) + "/ballarus";
  }
  return ".";
}

CommandResult Chromium(const std::string& flags, const std::string& url) {
  return Run("chromium --headless --no-sandbox --disable-gpu "
             "--disable-background-networking --disable-component-update "
             "--no-first-run --user-data-dir=" +
                 Quote(TempRoot() + "/chromium-profile") + " " + flags + " " +
                 Quote(url),
             "/");
}

std::string InstallPrefix(std::string* error) {
  static std::once_flag once;
  static std::string prefix, failure;
  std::call_once(once, [] {
    std::string installer;
    for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
      const char* d = getenv(var);
      if (!d || !*d) continue;
      const std::string p = std::string(d) + "/ballarus/install";
      if (access(p.c_str(), X_OK) == 0) {
        installer = p;
        break;
      }
    }
    if (installer.empty()) {
      failure = "cannot find the //:install script in the runfiles";
      return;
    }
    const std::string dir = TempRoot() + "/prefix";
    CommandResult r = Run(Quote(installer) + " " + Quote(dir), TempRoot());
    if (r.status != 0) {
      failure = "install " + dir + " exited " + std::to_string(r.status) +
                ": " + r.err;
      return;
    }
    prefix = dir;
  });
  if (prefix.empty() && error != nullptr) *error = failure;
  return prefix;
}

std::string ProgramsDir() {
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* d = getenv(var);
    if (!d || !*d) continue;
    std::string p = std::string(d) + "/ballarus/tests/programs";
    struct stat st;
    if (stat((p + "/MANIFEST").c_str(), &st) == 0) return p;
  }
  const char* src = getenv("BALLARUS_SRCDIR");
  if (src && *src) return std::string(src) + "/tests/programs";
  return "tests/programs";
}

static std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

static bool IsCxx(const std::string& src) {
  for (const char* ext : {".cc", ".cpp", ".cxx", ".C"}) {
    size_t n = strlen(ext);
    if (src.size() > n && src.compare(src.size() - n, n, ext) == 0) return true;
  }
  return false;
}

bool ParseManifest(const std::string& file, const std::string& text,
                   std::vector<Program>* out, std::string* error) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  out->clear();
  auto fail = [&](const std::string& what) {
    *error = file + ":" + std::to_string(lineno) + ": " + what;
    return false;
  };
  while (std::getline(in, line)) {
    lineno++;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    Program p;
    p.name = w[0];
    for (const Program& q : *out)
      if (q.name == p.name) return fail("program '" + p.name + "' listed twice");
    for (size_t i = 1; i < w.size(); i++) {
      const std::string& a = w[i];
      if (a.rfind("shared=", 0) == 0) {
        std::string v = a.substr(7);
        size_t colon = v.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
          return fail("shared= wants LIB.so:SOURCE[,SOURCE...], got '" + v + "'");
        p.shared_lib = v.substr(0, colon);
        if (p.shared_lib.rfind("lib", 0) != 0 ||
            p.shared_lib.size() < 7 ||
            p.shared_lib.compare(p.shared_lib.size() - 3, 3, ".so") != 0)
          return fail("shared library name '" + p.shared_lib +
                      "' is not libNAME.so");
        p.shared_sources = Split(v.substr(colon + 1), ',');
      } else if (a.rfind("cflags=", 0) == 0) {
        for (const std::string& f : Split(a.substr(7), ','))
          if (!f.empty()) p.cflags.push_back(f);
      } else if (a.rfind("plain=", 0) == 0) {
        for (const std::string& f : Split(a.substr(6), ','))
          if (!f.empty()) p.plain_ldflags.push_back(f);
      } else if (a.find('=') != std::string::npos) {
        return fail("unknown option '" + a + "'");
      } else {
        p.sources.push_back(a);
      }
    }
    if (p.sources.empty()) return fail("program '" + p.name + "' has no sources");
    for (const auto& s : p.sources) p.cxx |= IsCxx(s);
    for (const auto& s : p.shared_sources) p.cxx |= IsCxx(s);
    out->push_back(p);
  }
  if (out->empty()) {
    lineno = 0;
    return fail("no programs");
  }
  return true;
}

std::vector<Program> LoadManifestOrDie() {
  std::string path = ProgramsDir() + "/MANIFEST";
  std::vector<Program> programs;
  std::string error;
  if (!ParseManifest(path, ReadFileOrDie(path), &programs, &error)) {
    fprintf(stderr, "harness: %s\n", error.c_str());
    abort();
  }
  return programs;
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kPlain: return "plain";
    case Kind::kGcov: return "gcov";
    case Kind::kBallarus: return "ballarus";
  }
  return "?";
}

static std::string Stem(const std::string& src) {
  std::string b = Basename(src);
  size_t dot = b.rfind('.');
  return dot == std::string::npos ? b : b.substr(0, dot);
}

Build BuildProgram(const Program& p, const BuildOptions& o,
                   const std::string& dir) {
  Build b;
  b.dir = dir;
  b.exe = dir + "/" + p.name;
  MakeFreshDir(dir);
  const std::string src_root = ProgramsDir();
  // Copy sources; a source in a subdirectory brings its whole directory.
  std::vector<std::string> all = p.sources;
  all.insert(all.end(), p.shared_sources.begin(), p.shared_sources.end());
  std::string copy;
  for (const std::string& s : all) {
    size_t slash = s.rfind('/');
    if (slash == std::string::npos)
      copy += "cp " + Quote(src_root + "/" + s) + " . && ";
    else
      copy += "cp " + Quote(src_root + "/" + s.substr(0, slash)) + "/* . && ";
  }
  copy += "chmod u+w *";
  CommandResult r = Run(copy, dir);
  b.log += "$ " + copy + "\n" + r.err;
  if (r.status != 0) return b;

  std::string cc;
  switch (o.kind) {
    case Kind::kPlain:
    case Kind::kGcov:
      cc = p.cxx ? "g++" : "gcc";
      break;
    case Kind::kBallarus:
      cc = Quote(o.ballarus_prefix + "/bin/" +
                 (p.cxx ? "ballarus-g++" : "ballarus-gcc")) +
           " -fplugin-arg-ballarus-mode=" + o.ballarus_mode;
      break;
  }
  std::string flags;
  if (o.kind == Kind::kGcov) flags += " -fprofile-arcs -ftest-coverage";
  for (const auto& f : p.cflags) flags += " " + Quote(f);
  for (const auto& f : o.extra_flags) flags += " " + Quote(f);
  std::string compile = cc + " " + o.opt + " -g" + flags;
  std::string link = cc + flags;

  auto step = [&](const std::string& cmd) {
    CommandResult c = Run(cmd, dir);
    b.log += "$ " + cmd + "\n" + c.out + c.err;
    return c.status == 0;
  };
  std::string libflags;
  if (!p.shared_lib.empty()) {
    std::string objs;
    for (const auto& s : p.shared_sources) {
      std::string obj = Stem(s) + ".o";
      if (!step(compile + " -fPIC -c " + Quote(Basename(s)) + " -o " + obj))
        return b;
      b.units.push_back(Stem(s));
      objs += " " + obj;
    }
    if (!step(link + " -shared" + objs + " -o " + p.shared_lib)) return b;
    std::string lname = p.shared_lib.substr(3, p.shared_lib.size() - 6);
    libflags = " -L. -l" + lname + " '-Wl,-rpath,$ORIGIN'";
  }
  std::string objs;
  for (const auto& s : p.sources) {
    std::string obj = Stem(s) + ".o";
    if (!step(compile + " -c " + Quote(Basename(s)) + " -o " + obj)) return b;
    b.units.push_back(Stem(s));
    objs += " " + obj;
  }
  std::string plain_libs;
  if (o.kind == Kind::kPlain)
    for (const auto& f : p.plain_ldflags) plain_libs += " " + Quote(f);
  if (!step(link + objs + libflags + plain_libs + " -o " + Quote(p.name)))
    return b;
  b.ok = true;
  return b;
}

GcovAndBallarus BuildGcovAndBallarus(const Program& p, const BuildOptions& o,
                                     const std::string& root) {
  GcovAndBallarus out;
  auto build_and_run = [&](Kind kind, Build* b, CommandResult* run) {
    BuildOptions k = o;
    k.kind = kind;
    *b = BuildProgram(p, k, root + "/" + KindName(kind));
    if (b->ok)
      *run = Run(Quote(b->exe), b->dir,
                 {"BALLARUS_PROFILE=" + b->dir + "/ballarus.profile"});
  };
  std::thread gcov(build_and_run, Kind::kGcov, &out.gcov, &out.gcov_run);
  build_and_run(Kind::kBallarus, &out.ours, &out.our_run);
  gcov.join();
  return out;
}

std::map<std::pair<std::string, uint32_t>, int64_t> Annotations(
    const Program& p) {
  std::map<std::pair<std::string, uint32_t>, int64_t> result;
  for (const auto& [key, form] : AnnotationForms(p))
    result[key] = std::isdigit(static_cast<unsigned char>(form[0]))
                      ? std::stoll(form)
                      : 0;
  return result;
}

std::string GcovCountForm(int64_t count, bool unexecuted_block,
                          bool exceptional) {
  if (count > 0) return std::to_string(count) + (unexecuted_block ? "*" : "");
  return exceptional ? "=====" : "#####";
}

std::map<std::pair<std::string, uint32_t>, std::string> AnnotationForms(
    const Program& p) {
  static const std::regex kCount(
      R"(/\*\s*count\((\d+\*?|#####|=====)\)\s*\*/)");
  std::map<std::pair<std::string, uint32_t>, std::string> result;
  std::vector<std::string> files;
  // Every file of the program's directories, so headers count too.
  std::vector<std::string> all = p.sources;
  all.insert(all.end(), p.shared_sources.begin(), p.shared_sources.end());
  for (const std::string& s : all) {
    size_t slash = s.rfind('/');
    if (slash == std::string::npos) {
      files.push_back(ProgramsDir() + "/" + s);
      continue;
    }
    CommandResult r =
        Run("ls", ProgramsDir() + "/" + s.substr(0, slash));
    std::istringstream ls(r.out);
    for (std::string f; std::getline(ls, f);)
      files.push_back(ProgramsDir() + "/" + s.substr(0, slash) + "/" + f);
  }
  for (const std::string& f : files) {
    std::istringstream in(ReadFileOrDie(f));
    uint32_t lineno = 0;
    for (std::string line; std::getline(in, line);) {
      lineno++;
      std::smatch m;
      if (std::regex_search(line, m, kCount))
        result[{Basename(f), lineno}] = m[1];
    }
  }
  return result;
}

bool RunGcovJson(const std::string& build_dir, const std::string& unit,
                 GcovJson* out, std::string* error) {
  CommandResult r =
      Run("gcov --json-format --stdout " + Quote(unit + ".gcda"), build_dir);
  if (r.status != 0) {
    *error = "gcov on " + build_dir + "/" + unit + ".gcda failed: " + r.err;
    return false;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.out);
    for (const auto& f : j.at("files")) {
      std::string file = Basename(f.at("file").get<std::string>());
      for (const auto& fn : f.at("functions")) {
        GcovJson::Fn x;
        x.name = fn.at("name").get<std::string>();
        x.file = file;
        x.execution_count = fn.at("execution_count").get<int64_t>();
        x.blocks = fn.at("blocks").get<int64_t>();
        x.start_line = fn.at("start_line").get<uint32_t>();
        out->functions.push_back(x);
      }
      for (const auto& l : f.at("lines")) {
        const std::pair<std::string, uint32_t> key{
            file, l.at("line_number").get<uint32_t>()};
        out->lines[key] += l.at("count").get<int64_t>();
        bool& u = out->unexecuted[key];
        u = u || l.value("unexecuted_block", false);
      }
    }
  } catch (const std::exception& e) {
    *error = "gcov JSON for " + build_dir + "/" + unit + ".gcda: " + e.what();
    return false;
  }
  return true;
}

}  // namespace harness
