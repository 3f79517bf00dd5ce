// cmd_lcov.cc — `ballarus-reconstruct lcov PROFILE [-o OUT]`: an lcov
// tracefile; `ballarus-reconstruct cobertura PROFILE [-o OUT]`: Cobertura
// XML.  Both from the coverage summary (reconstruct/coverage_summary.h:
// lcov's own merge of gcov's data), for the files and functions the
// filters keep (reconstruct/report_filter.h).
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <string>

#include "reconstruct/commands.h"
#include "reconstruct/coverage_summary.h"
#include "reconstruct/lcov_writer.h"
#include "reconstruct/output_file.h"

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

}  // namespace

int RunLcov(const ProfileInputs& in, const std::string& out_path,
            const std::string& test_name, const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const FileFilter filter(loaded.report, filter_options);
  for (char c : test_name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_'))
      Fail("", "--test-name: lcov allows letters, digits and '_' only: " +
                   Printable(test_name));
  Emit(out_path,
       LcovTracefile(coverage::Summarize(loaded.report, filter), test_name));
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
