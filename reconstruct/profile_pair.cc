// profile_pair.cc — the sides of `diff` and `overlap`, loaded and paired
// (reconstruct/profile_pair.h).
#include "reconstruct/profile_pair.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "reconstruct/profile_inputs.h"

namespace ballarus {

using report::FunctionReport;

void LoadSide(const SideSpec& spec, const FilterOptions& filter, Side* out) {
  out->test = spec.test;
  ProfileInputs in = spec.inputs;
  in.test = spec.test;
  LoadReport(in, &out->loaded);
  out->filter = std::make_unique<FileFilter>(out->r(), filter);
}

std::string SideLabel(const Side& s) {
  const std::string profile = Printable(s.r().profile);
  return s.test.empty() ? profile : profile + ", test " + Printable(s.test);
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
