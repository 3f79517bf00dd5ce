// profile_pair.cc — the sides of `diff` and `overlap`, loaded and paired
// (reconstruct/profile_pair.h).
#include "reconstruct/profile_pair.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "reconstruct/profile_inputs.h"

namespace ballarus {
namespace {

using report::FunctionReport;

// "the profile has no named runs" or "its tests: a, b, c" (at most 10).
std::string TestsItHas(const ProfileRecords& all) {
  const std::vector<std::string> names = TestNames(all);
  if (names.empty()) return "the profile has no named runs (BALLARUS_TEST)";
  std::string list;
  for (size_t i = 0; i < names.size() && i < 10; ++i)
    list += (i ? ", " : "") + Printable(names[i]);
  if (names.size() > 10) list += fmt::format(", ... ({} tests)", names.size());
  return "its tests: " + list;
}

// Test `spec.test` of the inputs: the whole profile merged, then the
// test's counts read as a profile of their own.  ReadNamedRun decodes
// them once and LoadProfileFrom again (the loader's grouping and line
// counts start from a raw profile): decoding costs a test's TUs twice.
void LoadTest(const SideSpec& spec, Side* out) {
  const std::string label = InputsLabel(spec.inputs.args);
  out->all = std::make_unique<ProfileRecords>();
  MergeProfileFiles(ExpandProfileInputs(spec.inputs.args), spec.inputs.skip_bad,
                    &out->all->raw, &out->loaded.files);
  ProfileRecords named;
  std::string err;
  if (!ReadNamedRun(*out->all, spec.test, &named, &err))
    Fail(label, "test '" + spec.test + "': " + err + "; " + TestsItHas(*out->all));
  ballarus_profile raw = named.raw;
  named.raw = ballarus_profile{};
  named.tus.clear();
  const std::string shown = label + ", test " + spec.test;
  const bool ok = LoadProfileFrom(&raw, shown, &out->loaded.profile, &err);
  ballarus_profile_free(&raw);
  if (!ok) Fail(shown, err);
  out->loaded.report = report::BuildReport(out->loaded.profile);
}

}  // namespace

void LoadSide(const SideSpec& spec, const FilterOptions& filter, Side* out) {
  out->test = spec.test;
  if (spec.test.empty())
    LoadReport(spec.inputs, &out->loaded);
  else
    LoadTest(spec, out);
  out->filter = std::make_unique<FileFilter>(out->r(), filter);
}

bool SameCfg(const FunctionReport& a, const FunctionReport& b) {
  if (a.checksum != b.checksum || a.blocks.size() != b.blocks.size() ||
      a.edges.size() != b.edges.size())
    return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].src != b.edges[i].src || a.edges[i].dst != b.edges[i].dst ||
        a.edges[i].kind != b.edges[i].kind)
      return false;
  return true;
}

namespace {

// The copies of one function in A and B paired: copies with an identical
// CFG first, then the rest in order; the unpaired of B last.
std::vector<FunctionPair> PairCopies(const std::vector<const FunctionReport*>& fa,
                                     std::vector<const FunctionReport*> fb) {
  std::vector<FunctionPair> here;
  for (const FunctionReport* a : fa) {
    FunctionPair p;
    p.a = a;
    for (auto it = fb.begin(); it != fb.end(); ++it)
      if (SameCfg(*a, **it)) {
        p.b = *it;
        p.same_cfg = true;
        fb.erase(it);
        break;
      }
    here.push_back(p);
  }
  for (FunctionPair& p : here)
    if (!p.b && !fb.empty()) {
      p.b = fb.front();
      fb.erase(fb.begin());
    }
  for (const FunctionReport* b : fb) here.push_back(FunctionPair{nullptr, b, false});
  return here;
}

}  // namespace

std::vector<FunctionPair> PairFunctions(const Side& A, const Side& B) {
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::vector<const FunctionReport*>> in_a, in_b;
  for (const FunctionReport& f : A.r().functions)
    if (A.filter->KeepFunction(f))
      in_a[{f.name, A.r().file_name(f.file)}].push_back(&f);
  for (const FunctionReport& f : B.r().functions)
    if (B.filter->KeepFunction(f))
      in_b[{f.name, B.r().file_name(f.file)}].push_back(&f);
  std::vector<FunctionPair> pairs;
  for (const auto& [key, fa] : in_a) {
    const std::vector<FunctionPair> here = PairCopies(fa, in_b[key]);
    pairs.insert(pairs.end(), here.begin(), here.end());
  }
  for (const auto& [key, fb] : in_b)
    if (!in_a.count(key))
      for (const FunctionReport* b : fb) pairs.push_back(FunctionPair{nullptr, b, false});
  return pairs;
}

}  // namespace ballarus
