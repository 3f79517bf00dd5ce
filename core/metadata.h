// metadata.h — encoding of a TranslationUnit (core/model.h) into the
// metadata blob the plugin compiles into each object, and its decoding.
//
// Blob = ballarus_meta_header (runtime/ballarus_format.h) + body.  The body
// is a sequence of LEB128 unsigned varints and length-prefixed strings; see
// metadata.cc for the exact grammar.  Encoding is deterministic: the same
// TranslationUnit always gives the same bytes (no pointers, no hash order).
// The header's stamp is ballarus_hash64 of the body; its identity is
// ballarus_hash64 of cwd + '\0' + source.
//
// Decoding never trusts its input: every length and index is range-checked,
// and a malformed blob yields an error naming the byte offset and the problem.
#ifndef BALLARUS_CORE_METADATA_H_
#define BALLARUS_CORE_METADATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"

namespace ballarus {

// The header's identity of a TU: ballarus_hash64 of cwd + '\0' + source.
uint64_t TuIdentity(const std::string& cwd, const std::string& source);

// Serialises `tu` into a complete blob (header + body).
std::vector<uint8_t> EncodeMetadata(const TranslationUnit& tu);

// Result of decoding: on failure `ok` is false and `error` reads like
// "offset 123: edge 4 of function 'foo' names block 17 of 9".
struct DecodeResult {
  bool ok = false;
  std::string error;
  uint64_t offset = 0;  // byte offset of the problem within the blob
};

// Parses a complete blob.  Validates the header (magic, version, sizes,
// stamp) and the body (indices in range, counters < n_counters, etc).
DecodeResult DecodeMetadata(const uint8_t* data, size_t size,
                            TranslationUnit* tu);

}  // namespace ballarus

#endif  // BALLARUS_CORE_METADATA_H_
