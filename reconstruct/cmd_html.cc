// cmd_html.cc — `ballarus-reconstruct html PROFILE -o DIR [options]
// [filters]`: the self-contained HTML report (reconstruct/html_writer.h).
#include <cstdio>
#include <string>

#include "reconstruct/commands.h"
#include "reconstruct/html_writer.h"
#include "reconstruct/test_reports.h"

namespace ballarus {

int RunHtml(const ProfileInputs& in, const HtmlOptions& o,
            const FilterOptions& filter_options) {
  LoadedReport loaded;
  LoadReport(in, &loaded);
  const FileFilter filter(loaded.report, filter_options);
  const TestProvenance tests = ComputeProvenance(loaded);
  const size_t pages = WriteHtmlReport(loaded.report, filter, o, &tests);
  std::printf("%s: %zu pages in %s (open %s/index.html)\n", kProg, pages,
              Printable(o.out_dir).c_str(), Printable(o.out_dir).c_str());
  return 0;
}

}  // namespace ballarus
