// metadata_wire.h — what the metadata codec's files share (core/
// metadata*.cc; includers of the codec use core/metadata.h): the known flag
// bits and limits, varint writing, the header's field offsets, the
// bounds-checked Reader, and the decoding steps one file calls in another.
#ifndef BALLARUS_CORE_METADATA_WIRE_H_
#define BALLARUS_CORE_METADATA_WIRE_H_

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/model.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace metadata_wire {

inline constexpr uint32_t kKnownEdgeFlags = (1u << 11) - 1;
inline constexpr uint32_t kKnownFunctionFlags = kFunctionComdat | kFunctionArtificial;
inline constexpr uint32_t kKnownMetaFlags = BALLARUS_META_F_NAIVE |
                                     BALLARUS_META_F_EDGE |
                                     BALLARUS_META_F_PATH |
                                     BALLARUS_META_F_ATOMIC;
// Edges that can never hold a counter (fake edges do not exist at run time,
// abnormal edges cannot be split).  EH edges can.
inline constexpr uint32_t kNoCounterEdgeFlags =
    kEdgeAbnormal | kEdgeFake | kEdgeIgnored;

// Versions 3 and 4's deflate level: close to 9's ratio for much less compile time
// (docs/DESIGN.md, "Metadata compression").  Fixed, so that objects stay
// deterministic.
inline constexpr int kMetaZlibLevel = 6;
// Inflating is bounded: a body declaring more than this is refused (real
// bodies are a few MB at most; 256 MiB leaves room for generated code while
// keeping what a hostile profile can make reconstruct allocate within what
// any machine that runs it has)...
inline constexpr uint64_t kMaxInflatedBody = uint64_t{1} << 28;
// ...and so is one declaring more than deflate could encode in the bytes
// present (its best case is 258 bytes per 2-bit code, 1032:1).
inline constexpr uint64_t kMaxDeflateRatio = 1032;

// ---------------------------------------------------------------- encoding

inline void PutU(std::vector<uint8_t>* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out->push_back(byte);
  } while (v != 0);
}

// Version 4 stores some fields as signed differences to a value the
// decoder already has (metadata.cc, "Deltas"): zigzag maps 0, -1, 1, -2 ...
// to 0, 1, 2, 3 ...
inline uint64_t ZigZag(int64_t d) {
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}
inline int64_t UnZigZag(uint64_t z) {
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

// The delta coding's running state while encoding or decoding one body:
// `on` for version 4; the counter index that follows the last edge counter
// seen, in body order across the TU.
struct DeltaState {
  bool on = false;
  int64_t next_counter = 0;
};

inline void PutStr(std::vector<uint8_t>* out, const std::string& s) {
  PutU(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

inline void PutLE(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline uint64_t GetLE(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}


// Header field offsets (ballarus_meta_header, little-endian, packed naturally).
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffVersion = 8;
inline constexpr size_t kOffHeaderSize = 12;
inline constexpr size_t kOffStamp = 16;
inline constexpr size_t kOffSize = 24;
inline constexpr size_t kOffNCounters = 32;
inline constexpr size_t kOffIdentity = 40;
inline constexpr size_t kOffFlags = 48;
inline constexpr size_t kOffNamesSize = 52;
static_assert(sizeof(ballarus_meta_header) == BALLARUS_META_HEADER_SIZE,
              "header layout");

// ---------------------------------------------------------------- decoding

// A bounds-checked cursor over the blob; the first error sticks.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, size_t pos)
      : data_(data), size_(size), pos_(pos) {}

  bool failed() const { return failed_; }
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  // Records the first error at `offset`.
  bool Fail(size_t offset, std::string msg) {
    if (!failed_) {
      failed_ = true;
      err_offset_ = offset;
      err_ = std::move(msg);
    }
    return false;
  }
  size_t err_offset() const { return err_offset_; }
  const std::string& err() const { return err_; }

  bool U(uint64_t* v, const char* what) {
    if (failed_) return false;
    const size_t start = pos_;
    uint64_t result = 0;
    for (int shift = 0;; shift += 7) {
      if (pos_ >= size_)
        return Fail(start, std::string(what) + ": varint runs past the end");
      const uint8_t byte = data_[pos_++];
      if (shift == 63 && (byte & 0x7e) != 0)
        return Fail(start, std::string(what) + ": varint exceeds 64 bits");
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        if (byte == 0 && shift != 0)
          return Fail(start, std::string(what) + ": varint not minimal");
        break;
      }
      if (shift == 63)
        return Fail(start, std::string(what) + ": varint exceeds 64 bits");
    }
    *v = result;
    return true;
  }

  // A u32 coded, in version 4 (d->on), as the zigzag difference to `base`.
  bool U32From(uint32_t* v, const char* what, uint32_t base,
               const DeltaState& d) {
    if (!d.on) return U32(v, what);
    const size_t start = pos_;
    uint64_t z;
    if (!U(&z, what)) return false;
    // (In 128 bits: base + the difference cannot overflow.)
    const __int128 x = static_cast<__int128>(base) + UnZigZag(z);
    if (x < 0 || x > UINT32_MAX)
      return Fail(start, std::string(what) + ": " + std::to_string(base) +
                             " + " + std::to_string(UnZigZag(z)) +
                             " is not a u32");
    *v = static_cast<uint32_t>(x);
    return true;
  }

  bool U32(uint32_t* v, const char* what) {
    const size_t start = pos_;
    uint64_t w;
    if (!U(&w, what)) return false;
    if (w > UINT32_MAX)
      return Fail(start, std::string(what) + " " + std::to_string(w) +
                             " exceeds 32 bits");
    *v = static_cast<uint32_t>(w);
    return true;
  }

  // A count of items each needing at least `min_bytes` bytes.
  bool Count(uint64_t* n, const char* what, uint64_t min_bytes) {
    const size_t start = pos_;
    if (!U(n, what)) return false;
    if (*n > left() / min_bytes)
      return Fail(start, std::string(what) + " " + std::to_string(*n) +
                             " exceeds the " + std::to_string(left()) +
                             " bytes left");
    return true;
  }

  bool Str(std::string* s, const char* what) {
    const size_t start = pos_;
    uint64_t n;
    if (!U(&n, what)) return false;
    if (n > left())
      return Fail(start, std::string(what) + ": length " + std::to_string(n) +
                             " exceeds the " + std::to_string(left()) +
                             " bytes left");
    s->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }

  bool Bytes(std::vector<uint8_t>* b, const char* what) {
    std::string s;
    if (!Str(&s, what)) return false;
    b->assign(s.begin(), s.end());
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
  bool failed_ = false;
  size_t err_offset_ = 0;
  std::string err_;
};

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

inline std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

// [u32 x] strictly ascending, appended to *out.
inline bool DecodeAscending(Reader* r, const char* count_what,
                            const char* what, const char* not_ascending,
                            std::vector<uint32_t>* out) {
  uint64_t n = 0;
  bool ok = r->Count(&n, count_what, 1);
  for (uint64_t i = 0; ok && i < n; ++i) {
    uint32_t x;
    const size_t at = r->pos();
    ok = r->U32(&x, what);
    if (ok && !out->empty() && x <= out->back())
      ok = r->Fail(at, not_ascending);
    if (ok) out->push_back(x);
  }
  return ok;
}

// Inflates the zlib stream at data[0, size) into *out, which must come to
// exactly `raw_size` bytes (metadata.cc).
bool Inflate(const uint8_t* data, size_t size, uint64_t raw_size,
             std::vector<uint8_t>* out, std::string* problem);

// Decodes one function of the body into *f, checking it against the TU
// decoded so far and the counters other functions use; *delta carries the
// version 4 coding's state (metadata_function.cc).
bool DecodeFunction(Reader* r, const TranslationUnit& tu,
                    std::unordered_set<uint64_t>* counter_used,
                    DeltaState* delta, Function* f);

// Checks the functions' entry balances (PathInfo::entry_calls); on failure
// *bad is the offending function (metadata_path_info.cc).
bool CheckEntryBalances(const TranslationUnit& tu, size_t* bad,
                        std::string* error);

}  // namespace metadata_wire
}  // namespace ballarus

#endif  // BALLARUS_CORE_METADATA_WIRE_H_
