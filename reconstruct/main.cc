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
//
// This file only wires the command line (CLI11) to the subcommands, one
// file each (cmd_show.cc, cmd_verify.cc, cmd_merge.cc, cmd_stats.cc,
// cmd_paths.cc; reconstruct/commands.h).  A new subcommand is one more
// add_subcommand here and one more cmd_*.cc.
//
// Exit codes (docs/DESIGN.md): 0 success, 1 `verify` found violations,
// 2 bad usage or bad input, reported as ONE line
// `ballarus-reconstruct: FILE: offset N: problem`.  No exception escapes.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "reconstruct/cmd_gcda.h"
#include "reconstruct/commands.h"

namespace ballarus {
namespace {

constexpr const char* kVersion = "0.1.0";

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

int Main(int argc, char** argv) {
  CLI::App app{"Reconstruct and check ballarus profiles.", kProg};
  app.set_version_flag("--version", std::string(kProg) + " " + kVersion);
  app.require_subcommand(1);

  ProfileInputs show_in;
  std::string show_regex;
  bool show_json = false;
  CLI::App* show =
      app.add_subcommand("show", "Print every function's block, edge and "
                                 "line counts.");
  AddInputs(show, &show_in);
  show->add_flag("--json", show_json, "print JSON (see docs/DESIGN.md)");
  show->add_option("--function", show_regex,
                   "only functions whose name or demangled name matches "
                   "this regular expression");

  ProfileInputs verify_in, verify_against;
  std::string verify_against_path;
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check flow conservation at every block, path counts, and "
      "path-derived edge counts against edge counts; exit 1 on "
      "violations.");
  AddInputs(verify, &verify_in);
  verify
      ->add_option("--against", verify_against_path,
                   "another profile of the same build: compare the "
                   "path-derived edge counts of whichever side has paths "
                   "with the other side's edge counts")
      ->type_name("OTHER");

  std::string merge_out;
  ProfileInputs merge_in;
  CLI::App* merge = app.add_subcommand(
      "merge", "Merge profiles (counters of equal builds are added).");
  merge->add_option("-o,--output", merge_out, "output profile (written "
                                              "atomically)")
      ->required();
  AddInputs(merge, &merge_in);

  ProfileInputs stats_in;
  bool stats_json = false;
  std::vector<std::string> stats_gcov;
  CLI::App* stats = app.add_subcommand(
      "stats", "Counter work per function: blocks, edges, static counters, "
               "dynamic increments; with --gcov, gcov's for comparison.");
  AddInputs(stats, &stats_in);
  stats->add_flag("--json", stats_json, "print JSON");
  stats->add_option("--gcov", stats_gcov,
                    "gcov .gcda files of the same program and workload (the "
                    ".gcno must lie beside each)");

  ProfileInputs paths_in;
  PathsOptions paths_options;
  FilterOptions paths_filter;
  std::string& paths_regex = paths_options.regex;
  std::string& paths_decode = paths_options.decode;
  bool& paths_json = paths_options.json;
  uint64_t& paths_top = paths_options.top;
  CLI::App* paths = app.add_subcommand(
      "paths",
      "Ball-Larus path profile: each function's executed paths by "
      "count, with their blocks and source lines.");
  AddInputs(paths, &paths_in);
  paths
      ->add_option("--top", paths_top,
                   "paths listed per function (with --program: in all), most "
                   "executed first (0 = all; default 10)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  paths->add_option("--function", paths_regex,
                    "only functions whose name or demangled name matches "
                    "this regular expression");
  paths->add_flag("--json", paths_json,
                  "print the JSON of show --json with path fields (see "
                  "docs/DESIGN.md)");
  CLI::Option* decode_opt = paths->add_option(
      "--decode", paths_decode,
      "print path number ID (decimal, any size) of the --function "
      "function(s), executed or not");
  decode_opt->type_name("ID");
  paths->add_flag("--program", paths_options.program,
                  "one ranking of the hottest paths across all functions");
  paths->add_flag("--source", paths_options.source,
                  "the source text of each path's lines");
  AddFilterOptions(paths, &paths_filter, false);
  paths->add_option("--exclude-function", paths_filter.exclude_functions,
                    "leave out functions whose name or demangled name "
                    "matches (repeatable)")
      ->type_name("REGEX");

  GcdaArgs gcda_args;
  CLI::App* gcda = AddGcdaCommand(&app, &gcda_args);

  ProfileInputs gcov_in;
  GcovOptions gcov_options;
  FilterOptions gcov_filter;
  CLI::App* gcov = app.add_subcommand(
      "gcov",
      "Write .gcov annotated sources (or gcov's JSON with -j) exactly as "
      "gcov 12 writes them, from the profile.");
  AddInputs(gcov, &gcov_in);
  gcov->add_flag("-b,--branch-probabilities", gcov_options.branches,
                 "branch and call lines, function summaries");
  gcov->add_flag("-c,--branch-counts", gcov_options.counts,
                 "branch counts instead of percentages");
  gcov->add_flag("-u,--unconditional-branches", gcov_options.unconditional,
                 "unconditional branches too");
  gcov->add_flag("-m,--demangled-names", gcov_options.demangle,
                 "demangled function names");
  gcov->add_flag("-H,--human-readable", gcov_options.human,
                 "1.2k instead of 1234");
  gcov->add_flag("-f,--function-summaries", gcov_options.function_summaries,
                 "per-function summaries on stdout");
  gcov->add_flag("-j,--json-format", gcov_options.json,
                 "gcov's JSON intermediate format, one NAME.gcov.json.gz per "
                 "translation unit");
  gcov->add_flag("-t,--stdout", gcov_options.to_stdout,
                 "write to stdout instead of files");
  gcov->add_flag("-n,--no-output", gcov_options.no_output,
                 "write no files, only the summaries");
  gcov->add_flag("-l,--long-file-names", gcov_options.long_names,
                 "prefix included files' .gcov names with the main source's");
  gcov->add_flag("-p,--preserve-paths", gcov_options.preserve_paths,
                 "whole paths in .gcov names ('/' as '#', '..' as '^')");
  gcov->add_flag("-r,--relative-only", gcov_options.relative_only,
                 "only sources named by relative paths");
  gcov->add_option("-s,--source-prefix", gcov_options.source_prefix,
                   "prefix to remove from source names")
      ->type_name("DIR");
  gcov->add_option("-o,--output-dir", gcov_options.output_dir,
                   "where to write (default: the working directory)")
      ->type_name("DIR");
  gcov->add_option("--tu", gcov_options.tus,
                   "read only this translation unit (its source as compiled, "
                   "or its base name; repeatable; default: all)")
      ->type_name("SOURCE");
  AddFilterOptions(gcov, &gcov_filter, false);

  ProfileInputs lcov_in;
  std::string lcov_out, lcov_test;
  FilterOptions lcov_filter;
  CLI::App* lcov = app.add_subcommand(
      "lcov", "Write an lcov tracefile (for genhtml, lcov, CI services).");
  AddInputs(lcov, &lcov_in);
  lcov->add_option("-o,--output", lcov_out, "output file (default: stdout)")
      ->type_name("FILE");
  lcov->add_option("-t,--test-name", lcov_test,
                   "the TN: name (letters, digits, '_')")
      ->type_name("NAME");
  AddFilterOptions(lcov, &lcov_filter, true);

  ProfileInputs cob_in;
  std::string cob_out, cob_root;
  FilterOptions cob_filter;
  CLI::App* cobertura = app.add_subcommand(
      "cobertura", "Write Cobertura XML (for CI services).");
  AddInputs(cobertura, &cob_in);
  cobertura->add_option("-o,--output", cob_out, "output file (default: stdout)")
      ->type_name("FILE");
  cobertura
      ->add_option("--root", cob_root,
                   "directory file names are made relative to (default: the "
                   "first project root)")
      ->type_name("DIR");
  AddFilterOptions(cobertura, &cob_filter, true);

  ProfileInputs diff_a, diff_b;
  std::string diff_a_path, diff_b_path;
  bool diff_json = false;
  uint64_t diff_top = 20;
  FilterOptions diff_filter;
  CLI::App* diff = app.add_subcommand(
      "diff",
      "What changed between two profiles: functions, lines, branches, "
      "paths, as counts and shares.");
  diff->add_option("A", diff_a_path,
                   "the first profile (a file, or a directory of *.bprof)")
      ->required();
  diff->add_option("B", diff_b_path,
                   "the second profile (a file, or a directory of *.bprof)")
      ->required();
  diff->add_flag("--skip-bad", diff_a.skip_bad,
                 "name unusable profiles on stderr and go on without them");
  diff->add_flag("--json", diff_json, "print JSON");
  diff->add_option("--top", diff_top,
                   "entries listed per section, largest change of share "
                   "first (0 = all; default 20)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  AddFilterOptions(diff, &diff_filter, true);

  ProfileInputs html_in;
  HtmlOptions html_options;
  FilterOptions html_filter;
  CLI::App* html = app.add_subcommand(
      "html",
      "Write a self-contained HTML report: summaries, annotated source, "
      "hottest functions and paths, CFG pictures.");
  AddInputs(html, &html_in);
  html->add_option("-o,--output", html_options.out_dir,
                   "the report's directory (created)")
      ->required()
      ->type_name("DIR");
  html->add_option("--title", html_options.title, "the report's title");
  html->add_option("--top-functions", html_options.top_functions,
                   "hottest functions on the index (default 20)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  html->add_option("--top-paths", html_options.top_paths,
                   "hottest paths on the index (default 20)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  html->add_option("--paths-per-function", html_options.paths_per_function,
                   "hottest paths listed per function (default 5)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  html->add_option("--cfg-functions", html_options.cfg_functions,
                   "CFG pictures of the N hottest functions (default 50; 0 = "
                   "none)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  html->add_option("--dot", html_options.dot,
                   "the Graphviz dot command (default: dot)")
      ->type_name("CMD");
  AddFilterOptions(html, &html_filter, true);

  // CLI11 reports a stray word as "a subcommand is required"; name it.
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    known |= argc > 1 && sub->check_name(argv[1]);
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "%s: unknown subcommand '%s' (try --help)\n", kProg,
                 Printable(argv[1]).c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = e.get_name();
    std::fprintf(stderr, "%s: %s (try --help)\n", kProg,
                 Printable(what).c_str());
    return 2;
  }

  if (*show) return RunShow(show_in, show_json, show_regex);
  if (*gcov) return RunGcov(gcov_in, gcov_options, gcov_filter);
  if (*diff) {
    diff_a.args = {diff_a_path};
    diff_b.args = {diff_b_path};
    diff_b.skip_bad = diff_a.skip_bad;
    return RunDiff(diff_a, diff_b, diff_json, diff_top, diff_filter);
  }
  if (*html) return RunHtml(html_in, html_options, html_filter);
  if (*lcov) return RunLcov(lcov_in, lcov_out, lcov_test, lcov_filter);
  if (*cobertura) return RunCobertura(cob_in, cob_out, cob_root, cob_filter);
  if (*verify) {
    if (!verify_against_path.empty())
      verify_against.args = {verify_against_path};
    verify_against.skip_bad = verify_in.skip_bad;
    return RunVerify(verify_in, verify_against);
  }
  if (*merge) return RunMerge(merge_out, merge_in);
  if (*stats) return RunStats(stats_in, stats_json, stats_gcov);
  if (*paths) {
    paths_options.decode_given = decode_opt->count() > 0;
    return RunPaths(paths_in, paths_options, paths_filter);
  }
  if (*gcda) return RunGcda(gcda_args);
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
