// combined_profile_io.cc — the file form of a combined profile (docs/
// DESIGN.md, "Combined profile format"): a 48-byte header, then a body of
// LEB128 varints, covered as a whole by a check in the header.
//
//   header: magic "BLRSCOMB", uint32 version, uint32 bins, uint64 n,
//           uint64 body_size, uint64 body_check (ballarus_hash64 of the
//           body), uint64 header_check (ballarus_hash64 of the 40 bytes
//           before it); little-endian.
//   body:   n labels (length, bytes), sorted;
//           TU count; per TU by increasing stamp: stamp, runs, metadata
//           size, the metadata blob, then its touched functions: count,
//           and each as (index gap, entry stats, blocks, edges, lines,
//           paths).  blocks/edges/paths: count, then (index gap, stats) for
//           each non-zero one; lines: count, then (file, line, stats).
//           Stats are CombinedStats::SerializeBody (n and bins are the
//           header's).  A gap is the index minus (previous index + 1).
#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>

#include "core/combined_profile.h"
#include "core/metadata.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

constexpr size_t kHeaderSize = 48;

uint64_t Load64(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
uint32_t Load32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void Store(std::string* out, const void* p, size_t n) {
  out->append(static_cast<const char*>(p), n);
}

// Non-zero statistics of `v` with their index gaps.
void PutDense(const std::vector<CombinedStats>& v, std::string* out) {
  uint64_t k = 0;
  for (const CombinedStats& s : v) k += s.max() != 0;
  PutVarint(k, out);
  uint64_t next = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].max() == 0) continue;
    PutVarint(i - next, out);
    next = i + 1;
    v[i].SerializeBody(out);
  }
}

void PutFunction(const CombinedFunction& f, std::string* out) {
  f.entry.SerializeBody(out);
  PutDense(f.blocks, out);
  PutDense(f.edges, out);
  PutVarint(f.lines.size(), out);
  for (const auto& [key, s] : f.lines) {
    PutVarint(key.first, out);
    PutVarint(key.second, out);
    s.SerializeBody(out);
  }
  PutVarint(f.paths.size(), out);
  uint64_t next = 0;
  for (const auto& [number, s] : f.paths) {
    PutVarint(number - next, out);
    next = number + 1;
    s.SerializeBody(out);
  }
}

void PutTu(const CombinedTu& t, std::string* out) {
  PutVarint(t.stamp, out);
  PutVarint(t.runs, out);
  PutVarint(t.metadata.size(), out);
  out->append(reinterpret_cast<const char*>(t.metadata.data()),
              t.metadata.size());
  uint64_t k = 0;
  for (const CombinedFunction& f : t.functions) k += f.touched();
  PutVarint(k, out);
  uint64_t next = 0;
  for (size_t i = 0; i < t.functions.size(); ++i) {
    if (!t.functions[i].touched()) continue;
    PutVarint(i - next, out);
    next = i + 1;
    PutFunction(t.functions[i], out);
  }
}

}  // namespace

std::string CombinedProfile::Serialize() {
  Finalize();
  std::string body;
  for (const std::string& l : labels_) {
    PutVarint(l.size(), &body);
    body += l;
  }
  PutVarint(tus_.size(), &body);
  for (const CombinedTu& t : tus_) PutTu(t, &body);
  std::string out(kCombinedMagic, 8);
  const uint32_t version = kCombinedVersion, bins = bins_;
  const uint64_t size = body.size(),
                 check = ballarus_hash64(body.data(), body.size());
  Store(&out, &version, 4);
  Store(&out, &bins, 4);
  Store(&out, &n_, 8);
  Store(&out, &size, 8);
  Store(&out, &check, 8);
  const uint64_t header_check = ballarus_hash64(out.data(), out.size());
  Store(&out, &header_check, 8);
  return out + body;
}

// Reads a body: every problem is "offset N: ..." with N a file offset.
class CombinedParser {
 public:
  CombinedParser(const std::string& body, CombinedProfile* out)
      : body_(body), out_(out) {}

  bool Run(std::string* error) {
    if (!Labels() || !Tus()) {
      *error = "offset " + std::to_string(kHeaderSize + at_) + ": " + err_;
      return false;
    }
    if (pos_ != body_.size()) {
      *error = "offset " + std::to_string(kHeaderSize + pos_) +
               ": trailing bytes after the last record";
      return false;
    }
    out_->Finalize();  // zero(); everything stored already has n() == n
    return true;
  }

 private:
  // A count of items each taking at least `min_bytes`, bounded by the
  // bytes left (so no huge count is ever allocated or looped over).
  bool Count(const char* what, uint64_t min_bytes, uint64_t* k) {
    if (!Get(what, k)) return false;
    if (*k > (body_.size() - pos_) / min_bytes)
      return Fail(std::string(what) + " " + std::to_string(*k) +
                  " exceeds what the remaining " +
                  std::to_string(body_.size() - pos_) + " bytes can hold");
    return true;
  }
  bool Get(const char* what, uint64_t* v) {
    at_ = pos_;
    if (GetU64(body_, &pos_, v, what, &err_)) return true;
    err_ = err_.substr(err_.find(": ") + 2);  // "truncated record: " etc.
    return false;
  }
  bool Fail(const std::string& problem) {
    err_ = problem;
    return false;
  }
  bool Stats(const std::string& what, CombinedStats* s) {
    at_ = pos_;
    if (CombinedStats::ParseBody(body_, &pos_, out_->n_, out_->bins_, s,
                                 &err_))
      return true;
    return Fail(what + ": " + err_);
  }
  bool NonZero(const std::string& what, CombinedStats* s) {
    if (!Stats(what, s)) return false;
    return s->max() != 0 || Fail(what + ": all-zero statistics stored");
  }
  // Next index of a gap-coded list: `next` + gap, below `limit`.
  bool Index(const char* what, uint64_t limit, uint64_t* next,
             uint64_t* index) {
    uint64_t gap;
    if (!Get(what, &gap)) return false;
    if (gap >= limit || *next > limit - 1 - gap)
      return Fail(std::string(what) + " out of range");
    *index = *next + gap;
    *next = *index + 1;
    return true;
  }

  bool Labels() {
    if (out_->n_ > body_.size())
      return Fail(std::to_string(out_->n_) + " observations, but the body "
                  "has " + std::to_string(body_.size()) + " bytes");
    for (uint64_t i = 0; i < out_->n_; ++i) {
      uint64_t size;
      if (!Get("label size", &size)) return false;
      if (size > body_.size() - pos_) return Fail("label cut short");
      out_->labels_.push_back(body_.substr(pos_, size));
      pos_ += size;
      if (i > 0 && out_->labels_[i] < out_->labels_[i - 1])
        return Fail("labels not sorted");
    }
    return true;
  }

  bool Tus() {
    uint64_t k, prev = 0;
    if (!Count("TU count", 4 + BALLARUS_META_HEADER_SIZE, &k)) return false;
    for (uint64_t i = 0; i < k; ++i) {
      CombinedTu t;
      if (!Get("stamp", &t.stamp)) return false;
      if (i > 0 && t.stamp <= prev) return Fail("TU stamps not increasing");
      prev = t.stamp;
      if (!Get("runs", &t.runs) || !Metadata(&t) || !Functions(&t))
        return false;
      out_->tus_.push_back(std::move(t));
    }
    return true;
  }

  bool Metadata(CombinedTu* t) {
    uint64_t size;
    if (!Get("metadata size", &size)) return false;
    if (size > body_.size() - pos_ || size < BALLARUS_META_HEADER_SIZE)
      return Fail("metadata size " + std::to_string(size) + " out of range");
    const uint8_t* blob = reinterpret_cast<const uint8_t*>(body_.data()) + pos_;
    t->metadata.assign(blob, blob + size);
    if (Load64(body_, pos_ + 16) != t->stamp)
      return Fail("metadata of another stamp");
    DecodeResult r = DecodeMetadata(blob, size, &t->tu);
    if (!r.ok) return Fail("metadata: " + r.error);
    pos_ += size;
    t->functions.assign(t->tu.functions.size(),
                        CombinedFunction{out_->zero_, {}, {}, {}, {}});
    return true;
  }

  bool Functions(CombinedTu* t) {
    uint64_t k, next = 0, index;
    if (!Count("function count", 4, &k)) return false;
    if (k > t->functions.size()) return Fail("function count out of range");
    for (uint64_t i = 0; i < k; ++i) {
      if (!Index("function index", t->functions.size(), &next, &index) ||
          !Function(t->tu.functions[index], &t->functions[index]))
        return false;
    }
    return true;
  }

  bool Dense(const char* what, size_t size, std::vector<CombinedStats>* v) {
    CombinedStats zeros(out_->bins_);
    zeros.AddZeros(out_->n_);
    v->assign(size, zeros);
    uint64_t k, next = 0, index;
    if (!Count(what, 2, &k)) return false;
    for (uint64_t i = 0; i < k; ++i) {
      if (!Index(what, size, &next, &index) ||
          !NonZero(std::string(what) + " " + std::to_string(index),
                   &(*v)[index]))
        return false;
    }
    return true;
  }

  bool Function(const ballarus::Function& fn, CombinedFunction* f) {
    const std::string name = "function '" + fn.name + "'";
    if (!Stats("entry", &f->entry) ||
        !Dense("block", fn.blocks.size(), &f->blocks) ||
        !Dense("edge", fn.edges.size(), &f->edges) || !Lines(f) || !Paths(f))
      return Fail(name + ": " + err_);
    return true;
  }

  bool Lines(CombinedFunction* f) {
    uint64_t k, file, line;
    if (!Count("line count", 4, &k)) return false;
    for (uint64_t i = 0; i < k; ++i) {
      if (!Get("line file", &file) || !Get("line", &line)) return false;
      if (file > UINT32_MAX || line > UINT32_MAX)
        return Fail("line out of range");
      std::pair<uint32_t, uint32_t> key(file, line);
      if (!f->lines.empty() && !(f->lines.rbegin()->first < key))
        return Fail("lines not increasing");
      CombinedStats s(out_->bins_);
      if (!NonZero("line " + std::to_string(line), &s)) return false;
      f->lines.emplace(key, std::move(s));
    }
    return true;
  }

  bool Paths(CombinedFunction* f) {
    uint64_t k, next = 0, number;
    if (!Count("path count", 3, &k)) return false;
    for (uint64_t i = 0; i < k; ++i) {
      if (!Index("path number", UINT64_MAX, &next, &number)) return false;
      CombinedStats s(out_->bins_);
      if (!NonZero("path " + std::to_string(number), &s)) return false;
      f->paths.emplace(number, std::move(s));
    }
    return true;
  }

  const std::string& body_;
  CombinedProfile* out_;
  size_t pos_ = 0, at_ = 0;
  std::string err_;
};

bool CombinedProfile::Parse(const std::string& bytes, CombinedProfile* out,
                            std::string* error) {
  if (bytes.size() < kHeaderSize) {
    *error = "truncated: " + std::to_string(bytes.size()) +
             " bytes, a combined profile's header has 48";
    return false;
  }
  if (!LooksCombined(bytes)) {
    *error = "not a combined profile (no BLRSCOMB magic)";
    return false;
  }
  if (ballarus_hash64(bytes.data(), 40) != Load64(bytes, 40)) {
    *error = "offset 0: damaged header (check mismatch)";
    return false;
  }
  const uint32_t version = Load32(bytes, 8), bins = Load32(bytes, 12);
  if (version != kCombinedVersion) {
    *error = "unsupported combined profile version " +
             std::to_string(version) + " (expected 1)";
    return false;
  }
  if (bins < kMinBins || bins > kMaxBins) {
    *error = "offset 12: " + std::to_string(bins) + " bins (2 to 65 allowed)";
    return false;
  }
  const uint64_t size = Load64(bytes, 24);
  if (size != bytes.size() - kHeaderSize) {
    *error = (size > bytes.size() - kHeaderSize ? "truncated: " : "") +
             std::string("the header declares a body of ") +
             std::to_string(size) + " bytes, the file has " +
             std::to_string(bytes.size() - kHeaderSize);
    return false;
  }
  const std::string body = bytes.substr(kHeaderSize);
  if (ballarus_hash64(body.data(), body.size()) != Load64(bytes, 32)) {
    *error = "damaged: the whole-file check does not match the contents";
    return false;
  }
  *out = CombinedProfile(bins);
  out->n_ = Load64(bytes, 16);
  return CombinedParser(body, out).Run(error);
}

bool LooksCombined(const std::string& bytes) {
  return bytes.size() >= 8 && bytes.compare(0, 8, kCombinedMagic, 8) == 0;
}

bool FileLooksCombined(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  if (!in.read(magic, 8)) return false;
  return LooksCombined(std::string(magic, 8));
}

bool ReadCombinedProfile(const std::string& path, CombinedProfile* out,
                         std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(std::max<std::streamoff>(size, 0)));
  } catch (const std::exception&) {  // length_error, bad_alloc
    *error = path + ": " + std::to_string(size) + " bytes: too large to read";
    return false;
  }
  if (size < 0 || !in.read(bytes.data(), size)) {
    *error = path + ": read error";
    return false;
  }
  if (!CombinedProfile::Parse(bytes, out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

}  // namespace ballarus
