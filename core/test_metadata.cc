// test_metadata.cc — the sample TUs and checks of test_metadata.h.
#include "core/test_metadata.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace metadata_testing {

// A TU with two functions: a diamond with counters on every countable edge,
// and a function with an EH edge, a fake edge, an ignored abnormal edge and
// an extension record.
TranslationUnit SampleTu() {
  TranslationUnit tu;
  tu.source = "src/a.c";
  tu.cwd = "/home/u/proj";
  tu.profile = "/home/u/proj/obj/a.bprof";
  tu.object = "/home/u/proj/obj/a.o";
  tu.compiler = "gcc 12.2.0";
  tu.flags = BALLARUS_META_F_NAIVE | BALLARUS_META_F_ATOMIC;
  tu.files = {"src/a.c", "src/a.h"};
  tu.n_counters = 7;

  Function d;
  d.name = "_Z7diamondi";
  d.demangled = "diamond(int)";
  d.file = 0;
  d.line = 3;
  d.end_line = 9;
  d.cfg_checksum = 0xdeadbeef;
  d.lineno_checksum = 12345;
  d.flags = 0;
  d.blocks.resize(6);
  d.blocks[2].lines = {{0, 3}, {0, 4}};
  d.blocks[3].lines = {{0, 5}};
  d.blocks[4].lines = {{1, 200}};
  d.blocks[5].lines = {{0, 8}, {0, 9}};
  d.edges = {{0, 2, kEdgeFallthru, 0},
             {2, 3, kEdgeTrue, 1},
             {2, 4, kEdgeFalse, 2},
             {3, 5, kEdgeFallthru, 3},
             {4, 5, kEdgeFallthru, 4},
             {5, 1, kEdgeFallthru, 5}};

  Function g;
  g.name = "_Z1gv";
  g.demangled = "g()";
  g.file = 1;
  g.line = 20;
  g.end_line = 30;
  g.cfg_checksum = 1;
  g.lineno_checksum = 2;
  g.flags = kFunctionComdat;
  g.blocks.resize(5);
  g.blocks[2].lines = {{1, 21}};
  g.blocks[3].lines = {{1, 22}};
  g.blocks[4].lines = {};
  g.edges = {{0, 2, kEdgeFallthru, 6},
             {0, 4, kEdgeFake, kNoCounter},
             {2, 3, kEdgeFallthru, kNoCounter},
             {2, 4, kEdgeEh | kEdgeAbnormal, kNoCounter},
             {2, 1, kEdgeFake, kNoCounter},
             {3, 1, kEdgeFallthru, kNoCounter},
             {3, 4, kEdgeAbnormal | kEdgeIgnored, kNoCounter},
             {4, 1, kEdgeFallthru, kNoCounter}};
  g.extensions = {{7, {1, 2, 3, 0, 255}}, {9, {}}};
  tu.functions = {d, g};
  return tu;
}

bool SameTu(const TranslationUnit& a, const TranslationUnit& b) {
  if (a.source != b.source || a.cwd != b.cwd || a.profile != b.profile ||
      a.object != b.object || a.compiler != b.compiler ||
      a.flags != b.flags || a.n_counters != b.n_counters ||
      a.files != b.files || a.functions.size() != b.functions.size())
    return false;
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const Function& f = a.functions[i];
    const Function& g = b.functions[i];
    if (f.name != g.name || f.demangled != g.demangled || f.file != g.file ||
        f.line != g.line || f.end_line != g.end_line ||
        f.cfg_checksum != g.cfg_checksum ||
        f.lineno_checksum != g.lineno_checksum || f.flags != g.flags ||
        f.blocks.size() != g.blocks.size() ||
        f.edges.size() != g.edges.size() ||
        f.extensions.size() != g.extensions.size())
      return false;
    for (size_t k = 0; k < f.blocks.size(); ++k)
      if (!(f.blocks[k].lines == g.blocks[k].lines)) return false;
    for (size_t k = 0; k < f.edges.size(); ++k)
      if (f.edges[k].src != g.edges[k].src ||
          f.edges[k].dst != g.edges[k].dst ||
          f.edges[k].flags != g.edges[k].flags ||
          f.edges[k].counter != g.edges[k].counter)
        return false;
    for (size_t k = 0; k < f.extensions.size(); ++k)
      if (f.extensions[k].tag != g.extensions[k].tag ||
          f.extensions[k].bytes != g.extensions[k].bytes)
        return false;
  }
  return true;
}

uint64_t Le64(const std::vector<uint8_t>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}

// Structural errors in bodies whose stamp is right (the encoder does not
// validate, so it can produce them).
// Versions 2 and 3 find the same problem at the same byte of the body after
// the names block: version 2 names its blob offset, version 3 the offset
// of the compressed body and the byte within the inflated one.  Version 4
// (deltas: other bytes) finds the same problem; its error is returned.
std::string DecodeError(const TranslationUnit& tu) {
  const std::vector<uint8_t> v2 = EncodeMetadata(tu, 2);
  TranslationUnit back;
  DecodeResult r2 = DecodeMetadata(v2.data(), v2.size(), &back);
  EXPECT_FALSE(r2.ok);
  EXPECT_GE(r2.offset, 56u);
  EXPECT_LT(r2.offset, v2.size());
  const std::vector<uint8_t> v3 = EncodeMetadata(tu, 3);
  DecodeResult r3 = DecodeMetadata(v3.data(), v3.size(), &back);
  EXPECT_FALSE(r3.ok);
  uint32_t names_size;
  std::memcpy(&names_size, v3.data() + 52, 4);
  EXPECT_EQ(r3.offset, 56u + names_size);
  const std::string at = "offset " + std::to_string(56 + names_size) +
                         ": inflated body byte ";
  const std::string problem = r2.error.substr(r2.error.find(": ") + 2);
  EXPECT_EQ(r3.error, at + std::to_string(r2.offset - 56 - names_size) +
                          ": " + problem);
  const std::vector<uint8_t> v4 = EncodeMetadata(tu);
  DecodeResult r = DecodeMetadata(v4.data(), v4.size(), &back);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.offset, 56u + names_size);
  EXPECT_EQ(r.error.rfind(at, 0), 0u) << r.error;
  EXPECT_EQ(r.error.substr(r.error.find(": ", at.size()) + 2), problem);
  return r.error;
}

PathInfo SamplePathInfo() {
  PathInfo p;
  p.storage = PathInfo::kDense;
  p.base = 6;
  p.n_paths = 6;
  p.flags = kPathFlagEarlyTermination;
  p.cut_edges = {1, 4};
  p.cut_blocks = {3};
  return p;
}

bool SamePathInfo(const PathInfo& a, const PathInfo& b) {
  return a.storage == b.storage && a.base == b.base &&
         a.n_paths == b.n_paths && a.flags == b.flags &&
         a.cut_edges == b.cut_edges && a.cut_blocks == b.cut_blocks &&
         a.precount_edges == b.precount_edges && a.derived == b.derived &&
         a.balanced == b.balanced && a.entry_path == b.entry_path &&
         a.entry_calls == b.entry_calls;
}

// Hand-made bytes: each value an unsigned LEB128 varint.
std::vector<uint8_t> Varints(const std::vector<uint64_t>& values) {
  std::vector<uint8_t> out;
  for (uint64_t v : values) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      out.push_back(v ? byte | 0x80 : byte);
    } while (v);
  }
  return out;
}

// Decodes bytes that must be rejected; returns the error.
std::string PathInfoError(const std::vector<uint8_t>& bytes) {
  PathInfo info;
  std::string err;
  EXPECT_FALSE(DecodePathInfo(bytes, &info, &err));
  EXPECT_EQ(err.rfind("path info: byte ", 0), 0u) << err;
  return err;
}


// A TU whose diamond carries a dense path table right after its 6 edge
// counters: 6 paths, counters 7..13 (6 + the out-of-range counter).
TranslationUnit PathTu(const PathInfo& info) {
  TranslationUnit tu = SampleTu();
  tu.flags |= BALLARUS_META_F_PATH;
  tu.n_counters = 14;
  tu.functions[0].extensions = {{kPathExtensionTag, EncodePathInfo(info)}};
  return tu;
}

PathInfo DiamondPaths(uint64_t base, uint64_t n_paths) {
  PathInfo p;
  p.base = base;
  p.n_paths = n_paths;
  return p;
}

}  // namespace metadata_testing
}  // namespace ballarus
