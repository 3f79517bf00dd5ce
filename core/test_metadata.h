// test_metadata.h — sample TUs and checks shared by the metadata codec's
// tests (metadata*_test.cc).  Test-only (//core:test_metadata).
#ifndef BALLARUS_CORE_TEST_METADATA_H_
#define BALLARUS_CORE_TEST_METADATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"

namespace ballarus {
namespace metadata_testing {

// A TU with two functions: a diamond with counters on every countable edge,
// and a function with an EH edge, a fake edge, an ignored abnormal edge and
// an extension record.
TranslationUnit SampleTu();

// Field by field equality of two TUs.
bool SameTu(const TranslationUnit& a, const TranslationUnit& b);

// The little-endian 64-bit word at b[off].
uint64_t Le64(const std::vector<uint8_t>& b, size_t off);

// The error of a TU whose body the decoder rejects, checked to be the same
// problem at the same byte in versions 2 and 3.
std::string DecodeError(const TranslationUnit& tu);

// A dense PathInfo with early termination and cuts.
PathInfo SamplePathInfo();
// Field by field equality of two PathInfos.
bool SamePathInfo(const PathInfo& a, const PathInfo& b);

// Hand-made bytes: each value an unsigned LEB128 varint.
std::vector<uint8_t> Varints(const std::vector<uint64_t>& values);

// Decodes bytes that must be rejected; returns the error.
std::string PathInfoError(const std::vector<uint8_t>& bytes);

// A TU whose diamond carries a dense path table right after its 6 edge
// counters: 6 paths, counters 7..13 (6 + the out-of-range counter).
TranslationUnit PathTu(const PathInfo& info);

// A dense PathInfo of the diamond, no cuts.
PathInfo DiamondPaths(uint64_t base, uint64_t n_paths);

}  // namespace metadata_testing
}  // namespace ballarus

#endif  // BALLARUS_CORE_TEST_METADATA_H_
