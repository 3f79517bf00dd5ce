// provenance.cc — see provenance.h.
#include "reconstruct/provenance.h"

#include <stdexcept>

#include "reconstruct/commands.h"
#include "reconstruct/named_runs.h"

namespace ballarus {
namespace {

// A test's report lists the whole report's files and functions, in order
// (provenance.h); anything else is a bug here, not bad input.
void CheckAligned(const report::Report& whole, const report::Report& part,
                  const std::string& test) {
  bool same = whole.files == part.files &&
              whole.functions.size() == part.functions.size();
  for (size_t i = 0; same && i < whole.functions.size(); ++i)
    same = whole.functions[i].name == part.functions[i].name &&
           whole.functions[i].file == part.functions[i].file;
  if (!same)
    throw std::logic_error("test '" + test +
                           "': its report lists other functions");
}

void AddTest(const report::Report& r, uint32_t t, TestProvenance* out) {
  for (size_t f = 0; f < r.by_file.size(); ++f)
    for (const report::FileLine& l : r.by_file[f].lines)
      if (l.count && *l.count > 0) out->lines[f][l.line].push_back(t);
  for (size_t i = 0; i < r.functions.size(); ++i) {
    const report::FunctionReport& fr = r.functions[i];
    if (fr.execution_count && *fr.execution_count > 0)
      out->functions[i].push_back(t);
    if (fr.paths)
      for (const report::PathReport& p : fr.paths->executed)
        out->paths[i][p.number].push_back(t);
  }
}

}  // namespace

void LoadTestReport(const LoadedReport& whole, const std::string& test,
                    LoadedReport* out) {
  std::string err;
  const LoadedProfile& p = whole.profile;
  if (!LoadPartOf(p.records.raw, test, p.path, &out->profile, &err))
    Fail(p.path, err);
  out->files = whole.files;
  out->report = report::BuildReport(out->profile);
  CheckAligned(whole.report, out->report, test);
}

TestProvenance ComputeProvenance(const LoadedReport& whole) {
  TestProvenance out;
  if (!whole.profile.test.empty()) return out;
  out.tests = TestNames(whole.profile.records);
  if (out.tests.empty()) return out;
  out.lines.resize(whole.report.files.size());
  out.functions.resize(whole.report.functions.size());
  out.paths.resize(whole.report.functions.size());
  for (uint32_t t = 0; t < out.tests.size(); ++t) {
    LoadedReport part;
    LoadTestReport(whole, out.tests[t], &part);
    out.runs.push_back(part.profile.runs());
    AddTest(part.report, t, &out);
  }
  return out;
}

}  // namespace ballarus
