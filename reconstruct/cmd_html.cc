// cmd_html.cc — `ballarus-reconstruct html PROFILE -o DIR [options]
// [filters]`: the self-contained HTML report (reconstruct/html_writer.h),
// or, for a combined profile (core/combined_profile.h, written by
// `combine`), the report of its statistics (reconstruct/html_combined.h).
#include <cstdio>
#include <string>

#include "core/combined_profile.h"
#include "reconstruct/commands.h"
#include "reconstruct/html_combined.h"
#include "reconstruct/html_writer.h"
#include "reconstruct/provenance.h"

namespace ballarus {

namespace {

bool AnyFilter(const FilterOptions& f) {
  return !f.include.empty() || !f.exclude.empty() || !f.functions.empty() ||
         !f.exclude_functions.empty() || f.all_files;
}

// The report of the combined profile `path`, one of the inputs.
int RunCombinedHtml(const std::string& path, const ProfileInputs& in,
                    const HtmlOptions& o, const FilterOptions& filter_options,
                    const VariationOptions& variation) {
  if (in.args.size() != 1)
    Fail(path, "a combined profile is reported alone (combine the other "
               "inputs into it first: ballarus-reconstruct combine)");
  if (AnyFilter(filter_options))
    Fail(path, "the file and function filters do not apply to a combined "
               "profile");
  CombinedProfile c;
  std::string error;
  if (!ReadCombinedProfile(path, &c, &error)) Fail("", error);
  CombinedHtmlOptions co;
  co.out_dir = o.out_dir;
  co.title = o.title;
  co.profile = path;
  co.paths_per_function = o.paths_per_function;
  co.variation = variation;
  const size_t pages = WriteCombinedHtmlReport(c, co);
  std::printf("%s: %zu pages in %s (open %s/index.html)\n", kProg, pages,
              Printable(o.out_dir).c_str(), Printable(o.out_dir).c_str());
  return 0;
}

}  // namespace

int RunHtml(const ProfileInputs& in, const HtmlOptions& o,
            const FilterOptions& filter_options,
            const VariationOptions& variation) {
  for (const std::string& arg : in.args)
    if (FileLooksCombined(arg))
      return RunCombinedHtml(arg, in, o, filter_options, variation);
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
