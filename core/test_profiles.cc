// test_profiles.cc — see test_profiles.h.
#include "core/test_profiles.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/path_profile.h"
#include "gtest/gtest.h"
#include "runtime/profile_io.h"

namespace ballarus {

std::string WriteTestProfile(const std::string& name,
                             std::vector<TestRecord> records, uint64_t runs) {
  std::vector<std::vector<uint8_t>> blobs;
  blobs.reserve(records.size());
  std::vector<ballarus_profile_record> rs;
  for (TestRecord& r : records) {
    r.tu.n_counters = r.counters.size();
    blobs.push_back(EncodeMetadata(r.tu));
    std::vector<uint8_t>& meta = blobs.back();
    ballarus_meta_header h;
    std::memcpy(&h, meta.data(), sizeof h);
    ballarus_profile_record x{};
    x.stamp = h.stamp;
    x.identity = h.identity;
    x.runs = r.runs;
    x.metadata = meta.data();
    x.meta_size = meta.size();
    x.counters = r.counters.data();
    x.n_counters = r.counters.size();
    x.sparse = r.sparse.data();
    x.n_sparse = r.sparse.size();
    rs.push_back(x);
  }
  std::sort(rs.begin(), rs.end(),
            [](const auto& a, const auto& b) { return a.stamp < b.stamp; });
  ballarus_profile p{};
  p.runs = runs;
  p.n_records = static_cast<uint32_t>(rs.size());
  p.records = rs.data();
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  char err[256];
  if (ballarus_profile_write_file(path.c_str(), &p, err, sizeof err) != 0) {
    ADD_FAILURE() << path << ": " << err;
    return "";
  }
  return path;
}

Function TestFunction(const std::string& name, uint32_t line,
                      uint32_t n_blocks, const std::vector<TestEdge>& edges,
                      int64_t first_counter) {
  Function f;
  f.name = name;
  f.demangled = name + "()";
  f.line = line;
  f.end_line = line + n_blocks;
  f.cfg_checksum = 1000 + n_blocks;
  f.blocks.resize(n_blocks);
  for (uint32_t b = 2; b < n_blocks; ++b) f.blocks[b].lines = {{0, line + b}};
  int64_t next = first_counter;
  for (const TestEdge& e : edges) {
    const bool countable =
        first_counter >= 0 &&
        !(e.flags & (kEdgeFake | kEdgeAbnormal | kEdgeIgnored));
    f.edges.push_back({e.src, e.dst, e.flags, countable ? next++ : kNoCounter});
  }
  return f;
}

Function TestLoop(const std::string& name, uint32_t line) {
  return TestFunction(name, line, 8,
                      {{0, 2, kEdgeFallthru},
                       {2, 3, kEdgeFallthru},
                       {3, 4, kEdgeTrue},
                       {3, 7, kEdgeFalse},
                       {4, 5, kEdgeTrue},
                       {4, 6, kEdgeFalse},
                       {5, 6, kEdgeFallthru},
                       {6, 3, kEdgeFallthru},
                       {7, 1, kEdgeFallthru}},
                      -1);
}

const std::vector<TestPath>& TestLoopRuns() {
  static const std::vector<TestPath> kRuns = {
      {-1, {0, 1, 2, 5, 7}, 2},  // first iteration (i = 0, even)
      {3, {2, 4, 6, 7}, 4},      // odd i
      {3, {2, 5, 7}, 2},         // even i after the first
      {3, {3, 8}, 2},            // i == n: return
      {-1, {0, 1, 3, 8}, 1},     // n == 0
  };
  return kRuns;
}

const std::vector<uint64_t>& TestLoopEdgeCounts() {
  static const std::vector<uint64_t> kEdges = {3, 3, 8, 3, 4, 4, 4, 8, 3};
  return kEdges;
}

const std::vector<uint64_t>& TestLoopBlockCounts() {
  static const std::vector<uint64_t> kBlocks = {3, 3, 3, 11, 8, 4, 8, 3};
  return kBlocks;
}

PathInfo AttachTestPathInfo(Function* f, uint32_t storage, uint64_t base,
                            uint32_t flags) {
  PathInfo info;
  info.storage = storage;
  info.base = base;
  info.flags = flags;
  info.cut_edges = FindBackEdges(*f);
  PathDag dag;
  std::string err;
  EXPECT_TRUE(BuildPathDag(*f, PathCuts{info.cut_edges, {}}, &dag, &err))
      << err;
  info.n_paths = NumberPaths(dag).total().get_ui();
  f->extensions.push_back({kPathExtensionTag, EncodePathInfo(info)});
  return info;
}

uint64_t TestPathNumber(const Function& f, const PathInfo& info,
                        int64_t restart_block,
                        const std::vector<uint32_t>& cfg_edges) {
  PathDag dag;
  std::string err;
  EXPECT_TRUE(BuildPathDag(f, PathCuts{info.cut_edges, info.cut_blocks},
                           &dag, &err))
      << err;
  std::vector<uint32_t> d;
  if (restart_block >= 0) d.push_back(uint32_t(dag.start_edge[restart_block]));
  for (uint32_t e : cfg_edges) d.push_back(uint32_t(dag.dag_edge_of_cfg[e]));
  const PathNumbering num = NumberPaths(dag);
  std::vector<uint32_t> back;
  const mpz_class id = EncodePath(num, d);
  EXPECT_TRUE(DecodePath(dag, num, id, &back) && back == d)
      << "no path of " << f.name << " takes those edges";
  return id.get_ui();
}

}  // namespace ballarus
