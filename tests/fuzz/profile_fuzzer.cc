// profile_fuzzer.cc — libFuzzer target (clang-14, -fsanitize=fuzzer,
// address,undefined): arbitrary bytes as a profile file, through everything
// ballarus-reconstruct does with one: the profile parser
// (runtime/profile_io.c), metadata decoding, path numbering and flow
// solving (core/profile_reader), loading and grouping, the report model,
// and every writer — show --json (streamed), gcov's .gcov text and JSON,
// lcov, Cobertura, paths' ranking, diff against itself, the HTML report
// (without pictures).  A malformed profile must be refused with a one-line
// error, never crash, hang, leak or hit undefined behaviour.
// tests/fuzz/fuzz_test.sh builds and runs it for a bounded time on the
// committed corpus (tests/fuzz/corpus/).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/combined_profile.h"
#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "reconstruct/coverage_summary.h"
#include "reconstruct/gcov_view.h"
#include "reconstruct/gcov_writer.h"
#include "reconstruct/html_writer.h"
#include "reconstruct/json_stream.h"
#include "reconstruct/json_writer.h"
#include "reconstruct/lcov_writer.h"
#include "reconstruct/report_filter.h"

namespace {

std::string Dir() {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::string d = std::string(t && *t ? t : "/tmp") + "/ballarus-fuzz-" +
                    std::to_string(getpid());
    return d;
  }();
  return dir;
}

void Exercise(const std::string& path) {
  const ballarus::ProfileInputs in{{path}, false};  // one file, as named
  using namespace ballarus;
  LoadedReport loaded;
  try {
    LoadReport(in, &loaded);
  } catch (const Fatal& f) {
    // Refused: the message must be one printable line.
    const std::string m = Printable(f.message);
    if (m.find('\n') != std::string::npos) __builtin_trap();
    return;
  }
  const report::Report& r = loaded.report;
  FilterOptions all;
  all.all_files = true;
  const FileFilter filter(r, all);

  {  // show --json
    JsonOut o;
    o.BeginObject().Key("functions").BeginArray();
    for (const report::FunctionReport& f : r.functions)
      StreamFunctionJson(o, r, f);
    o.EndArray().Key("lines");
    StreamFileLines(o, r);
    o.EndObject();
    (void)ojson::parse(o.TakeString());  // must be valid JSON
  }
  {  // gcov text, -b -c -u, and JSON per TU
    std::vector<uint32_t> tus;
    for (uint32_t t = 0; t < r.tus.size(); ++t) tus.push_back(t);
    gcov::Options vo;
    vo.branches = true;
    const gcov::View v(r, tus, vo);
    gcov::Format fmt;
    fmt.branches = fmt.counts = fmt.unconditional = true;
    gcov::Header h;
    const std::vector<std::string> text = {"a", "b", "c"};
    for (uint32_t s = 0; s < v.sources.size(); ++s)
      (void)gcov::GcovText(v, s, fmt, h, v.sources[s].name, text);
    for (uint32_t t : tus) {
      gcov::Options jo;
      jo.branches = jo.json = true;
      const gcov::View jv(r, {t}, jo);
      std::vector<std::string> names;
      for (const gcov::Source& s : jv.sources) names.push_back(s.name);
      (void)ojson::parse(gcov::GcovJson(jv, "12.2.0", "/", path, fmt, names));
    }
  }
  const coverage::Summary summary = coverage::Summarize(r, filter);
  (void)LcovTracefile(summary, "");
  (void)CoberturaXml(summary, "/", 0);
  // The subcommands themselves, text and JSON (stdout is /dev/null).
  auto run = [](auto&& f) {
    try {
      f();
    } catch (const ballarus::Fatal& e) {
      if (Printable(e.message).find('\n') != std::string::npos) __builtin_trap();
    }
  };
  FilterOptions none;
  run([&] { RunShow(in, false, ""); });
  run([&] { RunVerify(in, ProfileInputs{}); });
  run([&] { RunStats(in, true, {}); });
  run([&] {
    PathsOptions po;
    po.top = 0;
    RunPaths(in, po, all);
  });
  run([&] {
    PathsOptions po;
    po.program = po.json = true;
    RunPaths(in, po, none);
  });
  const DiffSides sides{{in, ""}, {in, ""}};
  run([&] { RunDiff(sides, false, 0, all); });
  run([&] { RunDiff(sides, true, 5, none); });
  run([&] { RunOverlap(sides, true, 0, none); });
  run([&] { RunTests(in, false); });
  run([&] {  // the first named test alone, if any
    const std::vector<std::string> tests = TestNames(loaded.profile.records);
    if (tests.empty()) return;
    ProfileInputs one = in;
    one.test = tests.front();
    RunShow(one, true, "");
  });
  {  // the HTML report, no pictures
    HtmlOptions ho;
    ho.out_dir = Dir();
    ho.cfg_functions = 0;
    try {
      WriteHtmlReport(r, filter, ho);
    } catch (const Fatal&) {
    }
  }
}

// The same bytes as a combined profile (`combine`'s output): refused with
// one line, or read and turned into the mean profile `gcda` writes.
void ExerciseCombined(const std::string& path) {
  ballarus::CombinedProfile c;
  std::string err;
  if (!ballarus::ReadCombinedProfile(path, &c, &err)) {
    if (ballarus::Printable(err).find('\n') != std::string::npos)
      __builtin_trap();
    return;
  }
  ballarus::ProfileRecords mean;
  (void)ballarus::MeanProfile(c, &mean, &err);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The subcommands print their reports on stdout.
  if (!std::freopen("/dev/null", "w", stdout)) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = Dir() + ".profile";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  Exercise(path);
  ExerciseCombined(path);
  return 0;
}
