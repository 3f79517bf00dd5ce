// cmd_gcovr.cc — see cmd_gcovr.h.
#include "reconstruct/cmd_gcovr.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "reconstruct/commands.h"
#include "reconstruct/coverage_summary.h"
#include "reconstruct/output_file.h"
#include "reconstruct/source_text.h"

namespace ballarus {

int RunGcovrJson(const ProfileInputs& in, const std::string& out_path,
                 const GcovrJsonOptions& options,
                 const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const FileFilter filter(loaded.report, filter_options);
  GcovrJsonOptions o = options;
  if (!o.root.empty()) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) Fail(".", "cannot read the working directory");
    o.root = AbsoluteIn(cwd, o.root);
  }
  SourceCache sources(loaded.report, filter);
  const std::string json = GcovrJson(
      coverage::Summarize(loaded.report, filter),
      [&](uint32_t file, uint32_t line) { return sources.Line(file, line); },
      o);
  if (out_path.empty() || out_path == "-") {
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fflush(stdout);
  } else {
    WriteOutputFileOrFail(out_path, json);
  }
  return 0;
}

}  // namespace ballarus
