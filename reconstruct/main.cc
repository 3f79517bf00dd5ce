// main.cc — ballarus-reconstruct: show, verify, merge, stats and paths of
// ballarus profiles.
//
//   ballarus-reconstruct show PROFILE [--json] [--function REGEX]
//   ballarus-reconstruct verify PROFILE [--against OTHER]
//   ballarus-reconstruct merge -o OUT PROFILE...
//   ballarus-reconstruct stats PROFILE [--json] [--gcov FILE.gcda...]
//   ballarus-reconstruct paths PROFILE [--top N] [--function REGEX] [--json]
//                                      [--decode ID]
//   ballarus-reconstruct gcda (--in-place | -o DIR) PROFILE...   (cmd_gcda.h)
//   ballarus-reconstruct combine [-o OUT] [--json F] INPUT... (cmd_combine.h)
//   ballarus-reconstruct tests PROFILE... [--json]   (cmd_tests.cc)
//   ballarus-reconstruct correlation PROFILE... [--top N] [--function REGEX]
//                                            [--json]   (cmd_correlation.cc)
//
// This file only wires the command line (CLI11) to the subcommands, one
// file each (cmd_show.cc, cmd_verify.cc, cmd_merge.cc, cmd_stats.cc,
// cmd_paths.cc, ...; reconstruct/commands.h).  Each subcommand is a class
// here that registers its options and calls its Run* function; a new
// subcommand is one more class in AllSubcommands' table and one more
// cmd_*.cc.
//
// Exit codes (docs/DESIGN.md): 0 success, 1 `verify` found violations,
// 2 bad usage or bad input, reported as ONE line
// `ballarus-reconstruct: FILE: offset N: problem`.  No exception escapes.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "reconstruct/cmd_combine.h"
#include "reconstruct/cmd_gcda.h"
#include "reconstruct/cmd_gcovr.h"
#include "reconstruct/cmd_trace.h"
#include "reconstruct/commands.h"

namespace ballarus {
namespace {

constexpr const char* kVersion = "0.4.0+dev";

// The file and function filters of reconstruct/report_filter.h.
void AddFilterOptions(CLI::App* app, FilterOptions* f, bool functions) {
  app->add_option("--include", f->include,
                  "only files whose absolute path matches this regular "
                  "expression (repeatable; replaces the project-root rule)")
      ->type_name("REGEX");
  app->add_option("--exclude", f->exclude,
                  "leave out files whose absolute path matches this "
                  "regular expression (repeatable)")
      ->type_name("REGEX");
  app->add_flag("--all-files", f->all_files,
                "every file, not only those under the project roots");
  if (!functions) return;
  app->add_option("--function", f->functions,
                  "only functions whose name or demangled name matches this "
                  "regular expression (repeatable)")
      ->type_name("REGEX");
  app->add_option("--exclude-function", f->exclude_functions,
                  "leave out functions whose name or demangled name matches "
                  "(repeatable)")
      ->type_name("REGEX");
}

// The filters of a coverage report (lcov, cobertura, gcovr-json, html):
// files, functions, and the sources' exclusion markers, honoured unless
// --no-markers (reconstruct/exclusion_markers.h).
void AddCoverageFilterOptions(CLI::App* app, FilterOptions* f) {
  AddFilterOptions(app, f, true);
  f->markers = true;
  app->add_flag("!--no-markers", f->markers,
                "ignore the exclusion markers in the sources "
                "(LCOV_EXCL_LINE, LCOV_EXCL_START/STOP, GCOVR_EXCL_*, ...)");
}

// -o FILE of a report written to stdout by default.
void AddOutputFile(CLI::App* app, std::string* out) {
  app->add_option("-o,--output", *out, "output file (default: stdout)")
      ->type_name("FILE");
}

// PROFILE... and --skip-bad (reconstruct/profile_inputs.h).
void AddInputs(CLI::App* app, ProfileInputs* in) {
  app->add_option("PROFILE", in->args,
                  "profile files, or directories searched for *.bprof "
                  "(several are merged, as merge does)")
      ->required();
  app->add_flag("--skip-bad", in->skip_bad,
                "name unusable profiles on stderr and go on without them "
                "(default: stop at the first)");
}

// --test NAME of the reports: the counts of one named test alone
// (reconstruct/named_runs.h).
void AddTestOption(CLI::App* app, ProfileInputs* in) {
  app->add_option("--test", in->test,
                  "report the counts of this named test alone (a "
                  "BALLARUS_TEST name; `tests` lists them)")
      ->type_name("NAME");
}

// One subcommand: Register adds it and its options to the command line
// (the options are stored in the object); Run runs it once it was chosen.
// Main holds them in a table, in the order --help lists them.
class Subcommand {
 public:
  virtual ~Subcommand() = default;
  virtual CLI::App* Register(CLI::App* app) = 0;
  virtual int Run() = 0;
};

class ShowCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* show = app->add_subcommand(
        "show", "Print every function's block, edge and line counts.");
    AddInputs(show, &in_);
    AddTestOption(show, &in_);
    show->add_flag("--json", json_, "print JSON (see docs/DESIGN.md)");
    show->add_option("--function", regex_,
                     "only functions whose name or demangled name matches "
                     "this regular expression");
    return show;
  }
  int Run() override { return RunShow(in_, json_, regex_); }

 private:
  ProfileInputs in_;
  std::string regex_;
  bool json_ = false;
};

class VerifyCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* verify = app->add_subcommand(
        "verify",
        "Check flow conservation at every block, path counts, and "
        "path-derived edge counts against edge counts; exit 1 on "
        "violations.");
    AddInputs(verify, &in_);
    verify
        ->add_option("--against", against_path_,
                     "another profile of the same build: compare the "
                     "path-derived edge counts of whichever side has paths "
                     "with the other side's edge counts")
        ->type_name("OTHER");
    return verify;
  }
  int Run() override {
    if (!against_path_.empty()) against_.args = {against_path_};
    against_.skip_bad = in_.skip_bad;
    return RunVerify(in_, against_);
  }

 private:
  ProfileInputs in_, against_;
  std::string against_path_;
};

class MergeCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* merge = app->add_subcommand(
        "merge", "Merge profiles (counters of equal builds are added).");
    merge->add_option("-o,--output", out_, "output profile (written "
                                           "atomically)")
        ->required();
    AddInputs(merge, &in_);
    return merge;
  }
  int Run() override { return RunMerge(out_, in_); }

 private:
  std::string out_;
  ProfileInputs in_;
};

class StatsCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* stats = app->add_subcommand(
        "stats", "Counter work per function: blocks, edges, static counters, "
                 "dynamic increments; with --gcov, gcov's for comparison.");
    AddInputs(stats, &in_);
    AddTestOption(stats, &in_);
    stats->add_flag("--json", json_, "print JSON");
    stats->add_option("--gcov", gcov_,
                      "gcov .gcda files of the same program and workload (the "
                      ".gcno must lie beside each)");
    return stats;
  }
  int Run() override { return RunStats(in_, json_, gcov_); }

 private:
  ProfileInputs in_;
  bool json_ = false;
  std::vector<std::string> gcov_;
};

class TraceCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* trace = app->add_subcommand(
        "trace",
        "Regenerate each thread's executed blocks from trace files and "
        "print them as source lines or blocks.");
    trace->add_option("TRACEFILE", o_.trace_files,
                      "trace file(s): a process's file and its fork "
                      "children's (PATH.<pid>)")
        ->required();
    trace->add_option("--profile", o_.profiles,
                      "profile(s) of the traced program: its CFGs and "
                      "trace plans (repeatable, in the order they were "
                      "numbered).  Needed only for trace files without "
                      "METADATA records (older runtimes); a TU that both "
                      "hold must be the same build (else an error), and is "
                      "read from the profile");
    trace->add_option("--function", o_.function_regex,
                      "only blocks of functions whose name or demangled "
                      "name matches this regular expression");
    trace->add_option("--last", o_.last,
                      "only the last N lines (or blocks) of each thread");
    trace->add_option("--range", o_.range,
                      "only steps FROM to TO (inclusive; step indices as "
                      "--numbered, --blocks and --json print them)")
        ->type_name("FROM:TO");
    trace->add_flag("--numbered", o_.numbered,
                    "print each line's step index");
    trace->add_flag("--blocks", o_.blocks,
                    "print (function, block) instead of source lines");
    trace->add_flag("--lines", lines_, "print source lines (the default)");
    trace->add_option("--thread", o_.thread,
                      "only the thread of this serial number (from 1)");
    trace->add_flag("--json", o_.json, "print JSON");
    return trace;
  }
  int Run() override {
    if (lines_ && o_.blocks) Fail("", "--lines and --blocks exclude each other");
    return RunTrace(o_);
  }

 private:
  TraceOptions o_;
  bool lines_ = false;
};

class PathsCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* paths = app->add_subcommand(
        "paths",
        "Ball-Larus path profile: each function's executed paths by "
        "count, with their blocks and source lines.");
    AddInputs(paths, &in_);
    AddTestOption(paths, &in_);
    paths
        ->add_option("--top", options_.top,
                     "paths listed per function (with --program: in all), "
                     "most executed first (0 = all; default 10)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    paths->add_option("--function", options_.regex,
                      "only functions whose name or demangled name matches "
                      "this regular expression");
    paths->add_flag("--json", options_.json,
                    "print the JSON of show --json with path fields (see "
                    "docs/DESIGN.md)");
    decode_ = paths->add_option(
        "--decode", options_.decode,
        "print path number ID (decimal, any size) of the --function "
        "function(s), executed or not");
    decode_->type_name("ID");
    paths->add_flag("--program", options_.program,
                    "one ranking of the hottest paths across all functions");
    paths->add_flag("--source", options_.source,
                    "the source text of each path's lines");
    AddFilterOptions(paths, &filter_, false);
    paths->add_option("--exclude-function", filter_.exclude_functions,
                      "leave out functions whose name or demangled name "
                      "matches (repeatable)")
        ->type_name("REGEX");
    return paths;
  }
  int Run() override {
    options_.decode_given = decode_->count() > 0;
    return RunPaths(in_, options_, filter_);
  }

 private:
  ProfileInputs in_;
  PathsOptions options_;
  FilterOptions filter_;
  CLI::Option* decode_ = nullptr;
};

class CorrelationCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* c = app->add_subcommand(
        "correlation",
        "Where the path profile knows more than the edge profile: "
        "executions on paths the edge counts leave undetermined, branch "
        "directions a path-qualified prediction gains, per function.");
    AddInputs(c, &in_);
    AddTestOption(c, &in_);
    c->add_option("--top", o_.top,
                  "functions listed, largest gain first (0 = all; "
                  "default 20)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    c->add_option("--function", o_.regex,
                  "only functions whose name or demangled name matches "
                  "this regular expression");
    c->add_flag("--json", o_.json, "print JSON");
    AddFilterOptions(c, &filter_, false);
    return c;
  }
  int Run() override { return RunCorrelation(in_, o_, filter_); }

 private:
  ProfileInputs in_;
  CorrelationOptions o_;
  FilterOptions filter_;
};

class GcdaCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    return AddGcdaCommand(app, &args_);
  }
  int Run() override { return RunGcda(args_); }

 private:
  GcdaArgs args_;
};

class GcovCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* gcov = app->add_subcommand(
        "gcov",
        "Write .gcov annotated sources (or gcov's JSON with -j) exactly as "
        "gcov 12 writes them, from the profile.");
    AddInputs(gcov, &in_);
    AddTestOption(gcov, &in_);
    AddGcovFlags(gcov);
    gcov->add_option("-s,--source-prefix", o_.source_prefix,
                     "prefix to remove from source names")
        ->type_name("DIR");
    gcov->add_option("-o,--object-directory", o_.object_dir,
                     "where the profiles of inputs named as gcov's are "
                     "(a directory, or an object file's name)")
        ->type_name("DIR|FILE");
    gcov->add_option("--tu", o_.tus,
                     "read only this translation unit (its source as "
                     "compiled, or its base name; repeatable; default: all)")
        ->type_name("SOURCE");
    AddFilterOptions(gcov, &filter_, false);
    return gcov;
  }
  int Run() override { return RunGcov(in_, o_, filter_); }

 private:
  // gcov's own one-letter flags.
  void AddGcovFlags(CLI::App* gcov) {
    gcov->add_flag("-a,--all-blocks", o_.all_blocks,
                   "a line per basic block");
    gcov->add_flag("-b,--branch-probabilities", o_.branches,
                   "branch and call lines, function summaries");
    gcov->add_flag("-c,--branch-counts", o_.counts,
                   "branch counts instead of percentages");
    gcov->add_flag("-u,--unconditional-branches", o_.unconditional,
                   "unconditional branches too");
    gcov->add_flag("-m,--demangled-names", o_.demangle,
                   "demangled function names");
    gcov->add_flag("-H,--human-readable", o_.human, "1.2k instead of 1234");
    gcov->add_flag("-f,--function-summaries", o_.function_summaries,
                   "per-function summaries on stdout");
    gcov->add_flag("-j,--json-format", o_.json,
                   "gcov's JSON intermediate format, one NAME.gcov.json.gz "
                   "per translation unit");
    gcov->add_flag("-t,--stdout", o_.to_stdout,
                   "write to stdout instead of files");
    gcov->add_flag("-n,--no-output", o_.no_output,
                   "write no files, only the summaries");
    gcov->add_flag("-l,--long-file-names", o_.long_names,
                   "prefix included files' .gcov names with the main "
                   "source's");
    gcov->add_flag("-p,--preserve-paths", o_.preserve_paths,
                   "whole paths in .gcov names ('/' as '#', '..' as '^')");
    gcov->add_flag("-r,--relative-only", o_.relative_only,
                   "only sources named by relative paths");
  }

  ProfileInputs in_;
  GcovOptions o_;
  FilterOptions filter_;
};

class LcovCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* lcov = app->add_subcommand(
        "lcov", "Write an lcov tracefile (for genhtml, lcov, CI services).");
    AddInputs(lcov, &in_);
    AddTestOption(lcov, &in_);
    AddOutputFile(lcov, &out_);
    lcov->add_option("-t,--test-name", o_.test_name,
                     "the TN: name (letters, digits, '_'); with named runs, "
                     "that of the runs under no name")
        ->type_name("NAME");
    lcov->add_flag("--one-section", o_.one_section,
                   "one TN: section per file with the sum of all runs, "
                   "not one per named test");
    AddCoverageFilterOptions(lcov, &filter_);
    return lcov;
  }
  int Run() override { return RunLcov(in_, out_, o_, filter_); }

 private:
  ProfileInputs in_;
  std::string out_;
  LcovOptions o_;
  FilterOptions filter_;
};

class CoberturaCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* cobertura = app->add_subcommand(
        "cobertura", "Write Cobertura XML (for CI services).");
    AddInputs(cobertura, &in_);
    AddTestOption(cobertura, &in_);
    AddOutputFile(cobertura, &out_);
    cobertura
        ->add_option("--root", root_,
                     "directory file names are made relative to (default: "
                     "the first project root)")
        ->type_name("DIR");
    AddCoverageFilterOptions(cobertura, &filter_);
    return cobertura;
  }
  int Run() override { return RunCobertura(in_, out_, root_, filter_); }

 private:
  ProfileInputs in_;
  std::string out_, root_;
  FilterOptions filter_;
};

class GcovrJsonCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* gcovr = app->add_subcommand(
        "gcovr-json",
        "Write gcovr's JSON tracefile (for gcovr --add-tracefile: its HTML, "
        "Cobertura, SonarQube, Coveralls reports).");
    AddInputs(gcovr, &in_);
    AddTestOption(gcovr, &in_);
    AddOutputFile(gcovr, &out_);
    gcovr
        ->add_option("--root", o_.root,
                     "name files relative to this directory, as gcovr "
                     "--root does (default: absolute names)")
        ->type_name("DIR");
    gcovr->add_flag("--include-internal-functions", o_.internal_functions,
                    "keep functions named __* and _GLOBAL__sub_I_* (gcovr "
                    "leaves them out by default)");
    AddCoverageFilterOptions(gcovr, &filter_);
    return gcovr;
  }
  int Run() override { return RunGcovrJson(in_, out_, o_, filter_); }

 private:
  ProfileInputs in_;
  std::string out_;
  GcovrJsonOptions o_;
  FilterOptions filter_;
};

// A and B of diff and overlap, each a profile or one named test of it
// (reconstruct/profile_pair.h): B may be left out when the tests select
// two runs of A.
class TwoSides {
 public:
  void Register(CLI::App* app) {
    app->add_option("A", a_path_,
                    "the first profile (a file, or a directory of *.bprof)")
        ->required();
    app->add_option("B", b_path_,
                    "the second profile (default: A, to compare two of its "
                    "tests)");
    app->add_flag("--skip-bad", sides_.a.inputs.skip_bad,
                  "name unusable profiles on stderr and go on without them");
    app->add_option("--test", test_,
                    "compare only the runs named NAME (BALLARUS_TEST=NAME) "
                    "on both sides")
        ->type_name("NAME");
    app->add_option("--test-a", test_a_, "A's runs named NAME (default: --test)")
        ->type_name("NAME");
    app->add_option("--test-b", test_b_, "B's runs named NAME (default: --test)")
        ->type_name("NAME");
  }
  const DiffSides& Resolve() {
    sides_.a.test = test_a_.empty() ? test_ : test_a_;
    sides_.b.test = test_b_.empty() ? test_ : test_b_;
    if (b_path_.empty() && sides_.a.test == sides_.b.test)
      Fail("", "B is needed unless --test-a and --test-b select two "
                "different runs of A (a test, or all runs)");
    sides_.a.inputs.args = {a_path_};
    sides_.b.inputs.args = {b_path_.empty() ? a_path_ : b_path_};
    sides_.b.inputs.skip_bad = sides_.a.inputs.skip_bad;
    return sides_;
  }

 private:
  DiffSides sides_;
  std::string a_path_, b_path_, test_, test_a_, test_b_;
};

class DiffCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* diff = app->add_subcommand(
        "diff",
        "What changed between two profiles or tests: functions, lines, "
        "branches, paths, as counts and shares, and their overlap.");
    sides_.Register(diff);
    diff->add_flag("--json", json_, "print JSON");
    diff->add_option("--top", top_,
                     "entries listed per section, largest change of share "
                     "first (0 = all; default 20)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    AddFilterOptions(diff, &filter_, true);
    return diff;
  }
  int Run() override { return RunDiff(sides_.Resolve(), json_, top_, filter_); }

 private:
  TwoSides sides_;
  bool json_ = false;
  uint64_t top_ = 20;
  FilterOptions filter_;
};

class OverlapCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* overlap = app->add_subcommand(
        "overlap",
        "How much two profiles or tests agree: the overlap of their edge "
        "executions (llvm-profdata overlap's measure), whole program and per "
        "function.");
    sides_.Register(overlap);
    overlap->add_flag("--json", json_, "print JSON");
    overlap->add_option("--top", top_,
                        "functions listed, largest loss of overlap first (0 = "
                        "all; default 20)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    AddFilterOptions(overlap, &filter_, true);
    return overlap;
  }
  int Run() override {
    return RunOverlap(sides_.Resolve(), json_, top_, filter_);
  }

 private:
  TwoSides sides_;
  bool json_ = false;
  uint64_t top_ = 20;
  FilterOptions filter_;
};

class HtmlCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* html = app->add_subcommand(
        "html",
        "Write a self-contained HTML report: summaries, annotated source, "
        "hottest functions and paths, CFG pictures.");
    AddInputs(html, &in_);
    AddTestOption(html, &in_);
    html->add_option("-o,--output", o_.out_dir,
                     "the report's directory (created)")
        ->required()
        ->type_name("DIR");
    html->add_option("--title", o_.title, "the report's title");
    AddCount(html, "--top-functions", &o_.top_functions,
             "hottest functions on the index (default 20)");
    AddCount(html, "--top-paths", &o_.top_paths,
             "hottest paths on the index (default 20)");
    AddCount(html, "--paths-per-function", &o_.paths_per_function,
             "hottest paths listed per function (default 5)");
    html->add_option_function<std::string>(
            "--cfg-functions",
            [this](const std::string& v) {
              o_.cfg_functions =
                  v == "all" ? HtmlOptions::kAll : std::stoull(v);
            },
            "CFG pictures of the N hottest functions that ran (default 20; "
            "0 = none; all = every one, with no time limit unless "
            "--cfg-time is given)")
        ->check(CLI::Validator(
            [](std::string& v) {
              return v == "all" || (!v.empty() && v.size() < 20 &&
                                    v.find_first_not_of("0123456789") ==
                                        std::string::npos)
                         ? std::string()
                         : "expected a count or 'all'";
            },
            ""))
        ->type_name("N|all");
    html->add_option("--cfg-time", o_.cfg_time,
                     "seconds for drawing the CFG pictures (default 5; 0 = "
                     "no limit); each one not drawn by then is named, with "
                     "its Graphviz source")
        ->check(CLI::NonNegativeNumber)
        ->type_name("SECONDS");
    AddCount(html, "--cfg-jobs", &o_.cfg_jobs,
             "dot processes at once (default: one per CPU)");
    html->add_flag("-q,--quiet", o_.quiet, "no progress line on stderr");
    html->add_option("--dot", o_.dot, "the Graphviz dot command (default: dot)")
        ->type_name("CMD");
    AddCoverageFilterOptions(html, &filter_);
    AddVariationOptions(html);
    return html;
  }
  int Run() override { return RunHtml(in_, o_, filter_, variation_); }

 private:
  template <typename T>
  static void AddCount(CLI::App* html, const char* name, T* value,
                       const char* help) {
    html->add_option(name, *value, help)
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
  }

  // The "varies most" page of a combined profile's report.
  void AddVariationOptions(CLI::App* html) {
    AddCount(html, "--hot", &variation_.hot,
             "combined profile: list every path and branch never executed "
             "in some observation and at least N times in another (default "
             "100)");
    html->add_option("--vary-floor", variation_.mean_floor,
                     "combined profile: rank by CV only paths and branches "
                     "of mean at least X (default 10)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("X");
    AddCount(html, "--vary-top", &variation_.top,
             "combined profile: how many to rank by CV (default 50)");
  }

  ProfileInputs in_;
  HtmlOptions o_;
  FilterOptions filter_;
  VariationOptions variation_;
};

class CombineCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    return AddCombineCommand(app, &args_);
  }
  int Run() override { return RunCombine(args_); }

 private:
  CombineArgs args_;
};

class TestsCommand : public Subcommand {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* tests = app->add_subcommand(
        "tests",
        "List the named tests of the profiles (BALLARUS_TEST): runs, "
        "translation units, functions and lines each executed.");
    AddInputs(tests, &in_);
    tests->add_flag("--json", json_, "print JSON");
    return tests;
  }
  int Run() override { return RunTests(in_, json_); }

 private:
  ProfileInputs in_;
  bool json_ = false;
};

// The subcommands, in the order --help lists them.
std::vector<std::unique_ptr<Subcommand>> AllSubcommands() {
  std::vector<std::unique_ptr<Subcommand>> all;
  all.push_back(std::make_unique<ShowCommand>());
  all.push_back(std::make_unique<VerifyCommand>());
  all.push_back(std::make_unique<MergeCommand>());
  all.push_back(std::make_unique<CombineCommand>());
  all.push_back(std::make_unique<StatsCommand>());
  all.push_back(std::make_unique<PathsCommand>());
  all.push_back(std::make_unique<CorrelationCommand>());
  all.push_back(std::make_unique<TraceCommand>());
  all.push_back(std::make_unique<GcdaCommand>());
  all.push_back(std::make_unique<GcovCommand>());
  all.push_back(std::make_unique<LcovCommand>());
  all.push_back(std::make_unique<CoberturaCommand>());
  all.push_back(std::make_unique<GcovrJsonCommand>());
  all.push_back(std::make_unique<DiffCommand>());
  all.push_back(std::make_unique<OverlapCommand>());
  all.push_back(std::make_unique<HtmlCommand>());
  all.push_back(std::make_unique<TestsCommand>());
  return all;
}

// Parses the command line; returns -1 when a subcommand is to run, else
// the exit status (help, version, or a usage error named on stderr).
int Parse(CLI::App* app, int argc, char** argv) {
  // CLI11 reports a stray word as "a subcommand is required"; name it.
  bool known = false;
  for (const CLI::App* sub :
       app->get_subcommands([](CLI::App*) { return true; }))
    known |= argc > 1 && sub->check_name(argv[1]);
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "%s: unknown subcommand '%s' (try --help)\n", kProg,
                 Printable(argv[1]).c_str());
    return 2;
  }
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = e.get_name();
    std::fprintf(stderr, "%s: %s (try --help)\n", kProg,
                 Printable(what).c_str());
    return 2;
  }
  return -1;
}

int Main(int argc, char** argv) {
  CLI::App app{"Reconstruct and check ballarus profiles.", kProg};
  app.set_version_flag("--version", std::string(kProg) + " " + kVersion);
  app.require_subcommand(1);
  const std::vector<std::unique_ptr<Subcommand>> subcommands =
      AllSubcommands();
  std::vector<CLI::App*> apps;
  for (const auto& s : subcommands) apps.push_back(s->Register(&app));
  const int status = Parse(&app, argc, argv);
  if (status >= 0) return status;
  for (size_t i = 0; i < subcommands.size(); ++i)
    if (*apps[i]) return subcommands[i]->Run();
  return 2;
}

}  // namespace
}  // namespace ballarus

int main(int argc, char** argv) {
  try {
    return ballarus::Main(argc, argv);
  } catch (const ballarus::Fatal& f) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", ballarus::kProg,
                 ballarus::Printable(f.message).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: internal error: %s\n", ballarus::kProg,
                 ballarus::Printable(e.what()).c_str());
    return 2;
  }
}
