// gcda_export_test.cc — BuildGcdaFiles on hand-made profiles: which
// counts go into each function record, per-object COMDAT copies, the
// summary over several profiles, where the files go, and the functions it
// must leave out rather than write a wrong count.  (Against gcc itself:
// tests/pgo_test.cc.)
#include "reconstruct/gcda_export.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/gcda.h"
#include "core/gcov_arcs.h"
#include "core/metadata.h"
#include "core/model.h"
#include "core/profile_reader.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace {

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

void AddGcov(Function* f, uint32_t ident, std::vector<uint32_t> edges,
             uint32_t flags = 0) {
  GcovFunctionInfo g;
  g.ident = ident;
  g.flags = flags;
  g.counter_edges = std::move(edges);
  f->extensions.push_back({kGcovExtensionTag, EncodeGcovFunctionInfo(g)});
}

// x.c: `loop` (ENTRY->2, 2->3, 3->3, 3->4, 4->EXIT; naive counters on
// every edge) and `part`, a diamond with one counter only (its other
// edges cannot be derived).  `comdat`: a COMDAT function, its own copy.
TranslationUnit Tu(const std::string& source, bool with_unit = true) {
  TranslationUnit tu;
  tu.source = source;
  tu.cwd = "/build";
  tu.compiler = "gcc 12.2.0";
  tu.flags = BALLARUS_META_F_NAIVE;
  tu.files = {source};
  Function loop;
  loop.name = "loop";
  loop.cfg_checksum = 0x1111;
  loop.lineno_checksum = 0x2222;
  loop.blocks.resize(5);
  loop.edges = {{0, 2, kEdgeFallthru, 0},
                {2, 3, kEdgeFallthru, 1},
                {3, 3, kEdgeTrue, 2},
                {3, 4, kEdgeFalse, 3},
                {4, 1, kEdgeFallthru, 4}};
  AddGcov(&loop, 100, {0, 2});
  Function part;
  part.name = "part";
  part.cfg_checksum = 0x3333;
  part.lineno_checksum = 0x4444;
  part.blocks.resize(6);
  part.edges = {{0, 2, kEdgeFallthru, 5},
                {2, 3, kEdgeTrue, kNoCounter},
                {2, 4, kEdgeFalse, kNoCounter},
                {3, 5, kEdgeFallthru, kNoCounter},
                {4, 5, kEdgeFallthru, kNoCounter},
                {5, 1, kEdgeFallthru, 6}};
  AddGcov(&part, 200, {1, 2});
  Function comdat;
  comdat.name = "_Z6comdatv";
  comdat.flags = kFunctionComdat;
  comdat.cfg_checksum = 0x5555;
  comdat.lineno_checksum = 0x6666;
  comdat.blocks.resize(3);
  comdat.edges = {{0, 2, kEdgeFallthru, 7}, {2, 1, kEdgeFallthru, 8}};
  AddGcov(&comdat, 300, {0});
  tu.functions = {loop, part, comdat};
  tu.n_counters = 9;
  if (with_unit) {
    GcovUnitInfo u;
    u.version = GcovVersionWord(12, 2, '*');
    u.aux_name = source.substr(0, source.size() - 2);
    u.da_file_name = "/build/" + u.aux_name + ".gcda";
    tu.functions[0].extensions.push_back(
        {kGcovUnitExtensionTag, EncodeGcovUnitInfo(u)});
  }
  return tu;
}

struct Rec {
  TranslationUnit tu;
  std::vector<uint64_t> counters;
  uint64_t runs = 1;
};

// Writes a profile of `recs` and loads it.
void Load(const std::string& name, const std::vector<Rec>& recs,
          ProfileRecords* out) {
  std::vector<std::vector<uint8_t>> metas;
  std::vector<std::vector<uint64_t>> ctrs;
  std::vector<ballarus_profile_record> rs;
  for (const Rec& r : recs) {
    metas.push_back(EncodeMetadata(r.tu));
    ctrs.push_back(r.counters);
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    ballarus_profile_record x{};
    ballarus_meta_header h;
    std::memcpy(&h, metas[i].data(), sizeof h);
    x.stamp = h.stamp;
    x.identity = h.identity;
    x.runs = recs[i].runs;
    x.metadata = metas[i].data();
    x.meta_size = metas[i].size();
    x.counters = ctrs[i].data();
    x.n_counters = ctrs[i].size();
    rs.push_back(x);
  }
  std::sort(rs.begin(), rs.end(),
            [](const auto& a, const auto& b) { return a.stamp < b.stamp; });
  ballarus_profile p{};
  p.runs = 1;
  for (const Rec& r : recs) p.runs = std::max(p.runs, r.runs);
  p.n_records = static_cast<uint32_t>(rs.size());
  p.records = rs.data();
  const std::string path = TmpDir() + "/" + name;
  char err[256];
  ASSERT_EQ(ballarus_profile_write_file(path.c_str(), &p, err, sizeof err), 0)
      << err;
  std::string e;
  ASSERT_TRUE(ReadProfile(path, out, &e)) << e;
}

// loop: 4 calls, 10 iterations; part: entered 6 times.
const std::vector<uint64_t> kX = {4, 4, 10, 4, 4, 6, 6, 3, 3};
// Another object with the same COMDAT function, its copy not linked.
const std::vector<uint64_t> kY = {1, 1, 0, 1, 1, 0, 0, 0, 0};

TEST(GcdaExport, RecordsSummaryAndNotes) {
  ProfileRecords p;
  Load("one.profile", {{Tu("x.c"), kX}, {Tu("y.c"), kY}}, &p);
  GcdaExport out;
  std::string err;
  ASSERT_TRUE(BuildGcdaFiles({{"one.profile", &p}}, GcdaExportOptions(), &out,
                             &err))
      << err;
  ASSERT_EQ(out.outputs.size(), 2u);
  const GcdaOutput& x = out.outputs[0];
  EXPECT_EQ(x.path, "/build/x.gcda");
  EXPECT_EQ(x.source, "x.c");
  EXPECT_EQ(GcovVersionString(x.file.version), "B22*");
  EXPECT_EQ(x.file.runs, 1u);
  EXPECT_EQ(x.file.sum_max, 10u);  // the largest gcov counter of the profile
  // `part` is left out: gcov counts 2->3 and 2->4, which ballarus cannot
  // derive here.
  ASSERT_EQ(x.file.functions.size(), 2u);
  EXPECT_EQ(x.file.functions[0].ident, 100u);
  EXPECT_EQ(x.file.functions[0].lineno_checksum, 0x2222u);
  EXPECT_EQ(x.file.functions[0].cfg_checksum, 0x1111u);
  EXPECT_EQ(x.file.functions[0].arcs, (std::vector<uint64_t>{4, 10}));
  EXPECT_EQ(x.file.functions[1].ident, 300u);
  EXPECT_EQ(x.file.functions[1].arcs, (std::vector<uint64_t>{3}));
  EXPECT_EQ(x.file.checksum, GcovObjectChecksum(x.file.functions));
  // The COMDAT copy of y.o keeps its own (zero) counts: not the sum.
  const GcdaOutput& y = out.outputs[1];
  EXPECT_EQ(y.path, "/build/y.gcda");
  ASSERT_EQ(y.file.functions.size(), 2u);
  EXPECT_EQ(y.file.functions[1].arcs, (std::vector<uint64_t>{0}));
  EXPECT_EQ(y.file.sum_max, 10u);  // one profile, one maximum
  ASSERT_EQ(out.notes.size(), 2u);
  EXPECT_EQ(out.notes[0],
            "x.c: function 'part': the count of edge 2->3, which gcov "
            "counts, cannot be determined; left out of /build/x.gcda (GCC "
            "will report its profile missing)");
}

TEST(GcdaExport, SeveralProfilesAddUp) {
  ProfileRecords a, b;
  Load("a.profile", {{Tu("x.c"), kX}}, &a);
  Load("b.profile", {{Tu("x.c"), {1, 1, 20, 1, 1, 0, 0, 7, 7}, 2}}, &b);
  GcdaExport out;
  std::string err;
  GcdaExportOptions o;
  o.where = GcdaExportOptions::kDir;
  o.dir = "/pgo";
  ASSERT_TRUE(BuildGcdaFiles({{"a.profile", &a}, {"b.profile", &b}}, o, &out,
                             &err))
      << err;
  ASSERT_EQ(out.outputs.size(), 1u);
  const GcdaFile& f = out.outputs[0].file;
  EXPECT_EQ(out.outputs[0].path, "/pgo/#build#x.gcda");
  EXPECT_EQ(f.runs, 3u);
  EXPECT_EQ(f.sum_max, 10u + 20u);  // each profile's own maximum, summed
  EXPECT_EQ(f.functions[0].arcs, (std::vector<uint64_t>{5, 30}));
  EXPECT_EQ(f.functions[1].arcs, (std::vector<uint64_t>{10}));
  // b.profile merged two runs: said once.
  bool noted = false;
  for (const std::string& n : out.notes)
    noted |= n.find("2 runs merged") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(GcdaExport, RefusesWhatItCannotWrite) {
  ProfileRecords p, p2, q;
  Load("nogcov.profile", {{Tu("x.c", false), kX}}, &p);
  GcdaExport out;
  std::string err;
  EXPECT_FALSE(
      BuildGcdaFiles({{"nogcov.profile", &p}}, GcdaExportOptions(), &out, &err));
  EXPECT_NE(err.find("x.c: no gcov data in its metadata"), std::string::npos)
      << err;
  // Two builds of x.c (another checksum, so another stamp) in one run.
  TranslationUnit other = Tu("x.c");
  other.functions[0].cfg_checksum = 0x9999;
  Load("two.profile", {{Tu("x.c"), kX}}, &p2);
  Load("two-b.profile", {{other, kX}}, &q);
  EXPECT_FALSE(BuildGcdaFiles({{"two.profile", &p2}, {"two-b.profile", &q}},
                              GcdaExportOptions(), &out, &err));
  EXPECT_NE(err.find("/build/x.gcda: two different builds of x.c"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace ballarus
