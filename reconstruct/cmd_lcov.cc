// cmd_lcov.cc — `ballarus-reconstruct lcov PROFILE [-o OUT]`: an lcov
// tracefile; `ballarus-reconstruct cobertura PROFILE [-o OUT]`: Cobertura
// XML.  Both from the coverage summary (reconstruct/coverage_summary.h:
// lcov's own merge of gcov's data), for the files and functions the
// filters keep (reconstruct/report_filter.h).  A profile with named runs
// gives lcov one TN: section per test (lcov_writer.h) unless --one-section.
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "reconstruct/commands.h"
#include "reconstruct/coverage_summary.h"
#include "reconstruct/lcov_writer.h"
#include "reconstruct/named_runs.h"
#include "reconstruct/output_file.h"
#include "reconstruct/provenance.h"

namespace ballarus {
namespace {

void Emit(const std::string& out_path, const std::string& text) {
  if (out_path.empty() || out_path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  WriteOutputFileOrFail(out_path, text);
}

// The unnamed runs' section (`unnamed_name`; it lists every file), then
// each named test's (lcov_writer.h).
std::string TestSections(const LoadedReport& whole,
                         const std::vector<std::string>& tests,
                         const std::string& unnamed_name,
                         const FilterOptions& filter_options) {
  std::string out;
  {
    LoadedReport part;
    LoadTestReport(whole, "", &part);
    const FileFilter filter(part.report, filter_options);
    out = LcovTracefile(coverage::Summarize(part.report, filter), unnamed_name);
  }
  const std::vector<std::string> names = LcovTestNames(tests, unnamed_name);
  for (size_t t = 0; t < tests.size(); ++t) {
    LoadedReport part;
    LoadTestReport(whole, tests[t], &part);
    const FileFilter filter(part.report, filter_options);
    out += LcovTracefile(coverage::Summarize(part.report, filter), names[t],
                         /*executed_only=*/true);
  }
  return out;
}

}  // namespace

int RunLcov(const ProfileInputs& in, const std::string& out_path,
            const LcovOptions& o, const FilterOptions& filter_options) {
  for (char c : o.test_name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_'))
      Fail("", "--test-name: lcov allows letters, digits and '_' only: " +
                   Printable(o.test_name));
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const std::vector<std::string> tests =
      in.test.empty() && !o.one_section
          ? TestNames(loaded.profile.records)
          : std::vector<std::string>{};
  if (!tests.empty()) {
    Emit(out_path, TestSections(loaded, tests, o.test_name, filter_options));
    return 0;
  }
  // One section: the sum, or the --test's (named as the test by default).
  const std::string name = o.test_name.empty() && !in.test.empty()
                               ? LcovTestNames({in.test}, "")[0]
                               : o.test_name;
  const FileFilter filter(loaded.report, filter_options);
  Emit(out_path,
       LcovTracefile(coverage::Summarize(loaded.report, filter), name));
  return 0;
}

int RunCobertura(const ProfileInputs& in, const std::string& out_path,
                 const std::string& root, const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const FileFilter filter(loaded.report, filter_options);
  std::string base = root;
  if (base.empty())
    base = filter.roots().empty() ? std::string("/") : filter.roots().front();
  long long when = 0;  // the newest input's time
  for (const std::string& f : loaded.files) {
    struct stat st;
    if (stat(f.c_str(), &st) == 0 && st.st_mtime > when) when = st.st_mtime;
  }
  Emit(out_path, CoberturaXml(coverage::Summarize(loaded.report, filter),
                              NormalizePath(base), when));
  return 0;
}

}  // namespace ballarus
