// combined_json.cc — JSON of a combined profile; see combined_json.h.
// Each function is one compact line, so a profile of a large program
// streams (no document of the whole program is built).
#include "reconstruct/combined_json.h"

#include <cmath>
#include <string>

#include "nlohmann/json.hpp"
#include "reconstruct/json_writer.h"

namespace ballarus {
namespace {

using Json = nlohmann::ordered_json;

Json Fraction(const mpq_class& q) {
  return Json{{"exact", q.get_str()}, {"value", q.get_d()}};
}

// The statistics' members, added to `j`.
void AddStats(const CombinedStats& s, Json* j) {
  const mpq_class variance = s.Variance();
  (*j)["n"] = s.n();
  (*j)["mean"] = Fraction(s.Mean());
  (*j)["variance"] = Fraction(variance);
  (*j)["stddev"] = std::sqrt(variance.get_d());
  (*j)["min"] = s.min();
  (*j)["max"] = s.max();
  (*j)["histogram"] = s.histogram();
}

Json Stats(const CombinedStats& s) {
  Json j = Json::object();
  AddStats(s, &j);
  return j;
}

Json BinBounds(unsigned bins) {
  Json b = Json::array();
  b.push_back({0, 0});
  for (unsigned k = 1; k < bins; ++k) {
    const uint64_t hi = k + 1 < bins ? BinLowerBound(k + 1, bins) - 1
                                     : ~static_cast<uint64_t>(0);
    b.push_back({BinLowerBound(k, bins), hi});
  }
  return b;
}

Json FunctionJson(const CombinedProfile& c, size_t t, size_t i) {
  const CombinedTu& ct = c.tus()[t];
  const ballarus::Function& fn = ct.tu.functions[i];
  const CombinedFunction& f = ct.functions[i];
  Json j{{"tu", t},
         {"name", ValidUtf8(fn.name)},
         {"demangled", ValidUtf8(fn.demangled)},
         {"file", ValidUtf8(fn.file < ct.tu.files.size() ? ct.tu.files[fn.file]
                                                         : "")},
         {"line", fn.line},
         {"touched", f.touched()},
         {"entry", Stats(f.touched() ? f.entry : c.zero())}};
  Json blocks = Json::array(), edges = Json::array(), lines = Json::array(),
       paths = Json::array();
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    if (f.blocks[b].max() == 0) continue;
    Json x{{"block", b}};
    AddStats(f.blocks[b], &x);
    blocks.push_back(std::move(x));
  }
  for (size_t e = 0; e < f.edges.size(); ++e) {
    if (f.edges[e].max() == 0) continue;
    Json x{{"edge", e}, {"src", fn.edges[e].src}, {"dst", fn.edges[e].dst}};
    AddStats(f.edges[e], &x);
    edges.push_back(std::move(x));
  }
  for (const auto& [key, s] : f.lines) {
    Json x{{"file", ValidUtf8(key.first < ct.tu.files.size()
                                  ? ct.tu.files[key.first]
                                  : "")},
           {"line", key.second}};
    AddStats(s, &x);
    lines.push_back(std::move(x));
  }
  for (const auto& [number, s] : f.paths) {
    Json x{{"number", number}};
    AddStats(s, &x);
    paths.push_back(std::move(x));
  }
  j["blocks"] = std::move(blocks);
  j["edges"] = std::move(edges);
  j["lines"] = std::move(lines);
  j["paths"] = std::move(paths);
  return j;
}

void Put(std::FILE* out, const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), out);
}

}  // namespace

void WriteCombinedJson(const CombinedProfile& c, std::FILE* out) {
  Json head{{"format", "ballarus-combined"},
            {"version", kCombinedVersion},
            {"n", c.n()},
            {"bins", c.bins()},
            {"bin_bounds", BinBounds(c.bins())}};
  Json labels = Json::array();
  for (const std::string& l : c.labels()) labels.push_back(ValidUtf8(l));
  head["observations"] = std::move(labels);
  Json tus = Json::array();
  for (const CombinedTu& t : c.tus())
    tus.push_back({{"source", ValidUtf8(t.tu.source)},
                   {"cwd", ValidUtf8(t.tu.cwd)},
                   {"stamp", t.stamp},
                   {"runs", t.runs}});
  head["tus"] = std::move(tus);
  std::string text = head.dump();
  text.pop_back();  // the closing brace: "functions" follows
  Put(out, text + ",\"functions\":[\n");
  bool first = true;
  for (size_t t = 0; t < c.tus().size(); ++t) {
    for (size_t i = 0; i < c.tus()[t].functions.size(); ++i) {
      Put(out, (first ? "" : ",\n") + FunctionJson(c, t, i).dump());
      first = false;
    }
  }
  Put(out, "\n]}\n");
}

}  // namespace ballarus
