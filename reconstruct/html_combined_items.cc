// html_combined_items.cc — functions, branches, path lines and source text
// of the combined-profile HTML report (see html_combined_items.h).
#include "reconstruct/html_combined_items.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmpxx.h>

#include "core/metadata.h"
#include "core/path_dag.h"
#include "reconstruct/report_model.h"

namespace ballarus {

namespace {

bool IsBranchEdge(const Edge& e) {
  return (e.flags & (kEdgeFake | kEdgeIgnored | kEdgeReentry)) == 0;
}

}  // namespace

std::string SourcePath(const TranslationUnit& tu, uint32_t file) {
  if (file >= tu.files.size()) return "";
  const std::string& name = tu.files[file];
  if (name.empty() || name[0] == '/' || tu.cwd.empty()) return name;
  return tu.cwd + "/" + name;
}

std::string ListedFunction::file() const { return SourcePath(tu->tu, fn->file); }

std::vector<ListedFunction> ListFunctions(const CombinedProfile& c) {
  std::vector<ListedFunction> out;
  std::map<std::string, std::set<const CombinedTu*>> tus_of_name;
  size_t pages = 0;
  for (const CombinedTu& tu : c.tus())
    for (size_t i = 0; i < tu.tu.functions.size(); ++i) {
      ListedFunction f;
      f.tu = &tu;
      f.fn = &tu.tu.functions[i];
      f.stats = &tu.functions[i];
      f.entry = f.stats->entry.n() == c.n() ? &f.stats->entry : &c.zero();
      if (f.stats->touched()) f.page = pages++;
      tus_of_name[f.fn->name].insert(&tu);
      out.push_back(f);
    }
  for (ListedFunction& f : out)
    f.same_name_elsewhere = tus_of_name[f.fn->name].size() > 1;
  return out;
}

std::vector<size_t> BranchEdges(const Function& fn) {
  std::vector<size_t> outs(fn.blocks.size(), 0);
  for (const Edge& e : fn.edges)
    if (IsBranchEdge(e) && e.src < outs.size()) ++outs[e.src];
  std::vector<size_t> branches;
  for (size_t k = 0; k < fn.edges.size(); ++k)
    if (IsBranchEdge(fn.edges[k]) && outs[fn.edges[k].src] >= 2)
      branches.push_back(k);
  return branches;
}

std::string BranchLabel(const Function& fn, size_t e) {
  const Edge& edge = fn.edges[e];
  const std::vector<Location>& lines = fn.blocks[edge.src].lines;
  return fmt::format(
      "{}block {} {} → block {}",
      lines.empty() ? "" : fmt::format("line {}: ", lines.back().line),
      edge.src, report::EdgeKindName(report::KindOfEdge(edge.flags)),
      edge.dst);
}

struct PathLines::Decoder {
  bool ok = false;
  PathDag dag;
  PathNumbering numbering;
};

PathLines::PathLines() = default;
PathLines::~PathLines() = default;

std::string PathLines::Text(const Function& fn, const TranslationUnit& tu,
                            uint64_t number) {
  std::unique_ptr<Decoder>& d = decoders_[&fn];
  if (!d) {
    d = std::make_unique<Decoder>();
    std::string error;
    for (const Extension& x : fn.extensions) {
      PathInfo info;
      if (x.tag != kPathExtensionTag || !DecodePathInfo(x.bytes, &info, &error))
        continue;
      d->ok = BuildPathDag(fn, PathCuts{info.cut_edges, info.cut_blocks},
                           &d->dag, &error);
      if (d->ok) d->numbering = NumberPaths(d->dag);
      break;
    }
  }
  std::vector<uint32_t> edges;
  if (!d->ok || !DecodePath(d->dag, d->numbering,
                            mpz_class(std::to_string(number)), &edges))
    return "";
  std::string text;
  Location last{UINT32_MAX, 0};
  for (uint32_t b : PathBlocks(d->dag, edges))
    for (const Location& l : fn.blocks[b].lines) {
      if (l == last) continue;
      last = l;
      text += text.empty() ? "" : " ";
      if (l.file != fn.file && l.file < tu.files.size())
        text += tu.files[l.file] + ":";
      text += std::to_string(l.line);
    }
  return text;
}

const std::string* SourceFiles::Line(const std::string& path, uint32_t line) {
  std::unique_ptr<std::vector<std::string>>& lines = files_[path];
  if (!lines) {
    lines = std::make_unique<std::vector<std::string>>();
    std::ifstream in(path, std::ios::binary);
    std::string l;
    while (in && std::getline(in, l)) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines->push_back(l);
    }
  }
  if (line == 0 || line > lines->size()) return nullptr;
  return &(*lines)[line - 1];
}

}  // namespace ballarus
