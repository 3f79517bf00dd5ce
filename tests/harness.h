// harness.h — shared plumbing of the end-to-end tests: running commands,
// reading the corpus MANIFEST, building a corpus program (plain, gcov or
// ballarus), `/* count(N) */` annotations, and gcov's JSON line counts.
//
// Kept apart from the tests so gcov_oracle_test and e2e_test build programs
// exactly the same way (tests/programs/README.md documents the recipe).
#ifndef BALLARUS_TESTS_HARNESS_H_
#define BALLARUS_TESTS_HARNESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace harness {

struct CommandResult {
  int status = -1;  // exit status, or 128 + signal number
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh in directory `cwd`, capturing stdout and
// stderr.  `env` entries ("K=V") are added to the environment.
CommandResult Run(const std::string& command, const std::string& cwd,
                  const std::vector<std::string>& env = {});

// Shell-quotes one argument.
std::string Quote(const std::string& s);

std::string ReadFileOrDie(const std::string& path);
bool ReadFile(const std::string& path, std::string* out);
void WriteFileOrDie(const std::string& path, const std::string& bytes);
// Creates a fresh directory (removing an old one of that name).
void MakeFreshDir(const std::string& path);
std::string Basename(const std::string& path);

// The directory holding tests/programs in the runfiles (or $BALLARUS_SRCDIR
// /tests/programs when run by hand).
std::string ProgramsDir();
// A scratch directory: $TEST_TMPDIR, else /tmp.
std::string TempRoot();
// This workspace in the test's runfiles ($RUNFILES_DIR or $TEST_SRCDIR,
// then /ballarus), or "." when run by hand.
std::string Runfiles();
// Headless chromium (its profile in TempRoot()) on `url` with `flags`,
// e.g. "--virtual-time-budget=3000 --dump-dom": the DOM is r.out.
CommandResult Chromium(const std::string& flags, const std::string& url);

// ballarus installed (the //:install script of the runfiles) into
// TempRoot()/prefix, once per test process; every later call returns the
// same prefix.  "" when that failed, with the reason in *error.
std::string InstallPrefix(std::string* error);

struct Program {
  std::string name;
  std::vector<std::string> sources;  // relative to ProgramsDir()
  std::string shared_lib;            // e.g. "libshape.so", or empty
  std::vector<std::string> shared_sources;
  std::vector<std::string> cflags;
  std::vector<std::string> plain_ldflags;  // link flags of the plain build only
  bool cxx = false;
};

// Parses MANIFEST text; on error returns false with "FILE:LINE: problem".
bool ParseManifest(const std::string& file, const std::string& text,
                   std::vector<Program>* out, std::string* error);
std::vector<Program> LoadManifestOrDie();

enum class Kind { kPlain, kGcov, kBallarus };
const char* KindName(Kind k);

struct BuildOptions {
  Kind kind = Kind::kPlain;
  std::string opt = "-O0";
  std::vector<std::string> extra_flags;  // after the program's cflags
  std::string ballarus_prefix;           // install prefix, for kBallarus
  std::string ballarus_mode = "naive";   // -fplugin-arg-ballarus-mode=
};

struct Build {
  std::string dir;      // build directory (objects, .gcno, .gcda, program)
  std::string exe;      // absolute path of the program
  std::string log;      // commands run and their stderr, for diagnostics
  bool ok = false;
  // Base names (without extension) of every translation unit compiled.
  std::vector<std::string> units;
};

// Copies the program's sources into `dir` and builds it.
Build BuildProgram(const Program& p, const BuildOptions& o,
                   const std::string& dir);

// `p` built with gcov and with ballarus (naive mode, `o`'s other fields)
// in parallel, into ROOT/gcov and ROOT/ballarus, and each run once in its
// build directory, every TU's profile pooled into DIR/ballarus.profile.
struct GcovAndBallarus {
  Build gcov, ours;
  CommandResult gcov_run, our_run;
};
GcovAndBallarus BuildGcovAndBallarus(const Program& p, const BuildOptions& o,
                                     const std::string& root);

// `/* count(N) */` annotations of every source of `p`:
// (source basename, line) -> N.  gcov's other forms count too: `N*` (a
// line with a block that never ran) is N, `#####` and `=====` (never run;
// all its blocks exceptional) are 0.
std::map<std::pair<std::string, uint32_t>, int64_t> Annotations(
    const Program& p);
// The same annotations as written: "N", "N*", "#####" or "=====".
std::map<std::pair<std::string, uint32_t>, std::string> AnnotationForms(
    const Program& p);
// What gcov prints in its count column for a line of `count` executions
// with its flags (gcov.cc output_line_beginning): "N", "N*", "#####" or
// "=====".
std::string GcovCountForm(int64_t count, bool unexecuted_block,
                          bool exceptional);

// gcov's own view of one translation unit, from
// `gcov --json-format --stdout UNIT.gcda` run in the build directory.
struct GcovJson {
  // (source basename, line) -> count, summed over every entry (group
  // functions list their lines separately).
  std::map<std::pair<std::string, uint32_t>, int64_t> lines;
  // (source basename, line) -> gcov's "unexecuted_block", or-ed over the
  // entries of the line.
  std::map<std::pair<std::string, uint32_t>, bool> unexecuted;
  struct Fn {
    std::string name;
    std::string file;
    int64_t execution_count = 0;
    int64_t blocks = 0;
    uint32_t start_line = 0;
  };
  std::vector<Fn> functions;
};
bool RunGcovJson(const std::string& build_dir, const std::string& unit,
                 GcovJson* out, std::string* error);

}  // namespace harness

#endif  // BALLARUS_TESTS_HARNESS_H_
