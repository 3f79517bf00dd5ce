// metadata.cc — the metadata blob codec: TranslationUnit <-> bytes.
//
// The plugin compiles one blob per TU into the object; the runtime copies it
// verbatim into the profile; ballarus-reconstruct decodes it.  The header is
// the fixed struct of runtime/ballarus_format.h; this file owns the body.
//
// Body grammar, versions 3 (BALLARUS_META_VERSION, written) and 2 (read).
// `u` is an unsigned LEB128 varint in its shortest form (at most 10 bytes,
// value < 2^64; fields documented as u32 must be < 2^32); `str` is
// `u length` then that many raw bytes (no terminator); `[x]` is `u count`
// then count x's.
//
//   body      := names  u raw_size  zlib(raw)       (version 3)
//              | names  raw                         (version 2)
//   zlib(raw) := the zlib stream (RFC 1950, deflate level kMetaZlibLevel,
//                default window and memory) of raw, exactly to the blob's
//                end; raw_size = |raw|, at most kMaxInflatedBody (256 MiB)
//                and at most 1032 x the stream's size (deflate's limit),
//                checked before anything is allocated
//   raw       := str compiler
//                u flags                  (== header.flags)
//                u n_counters             (== header.n_counters)
//                [str] files
//                [function] functions
//   function  := str name  str demangled
//                u32 file  u32 line  u32 end_line
//                u32 cfg_checksum  u32 lineno_checksum  u32 flags
//                [block] blocks           (>= 2: ENTRY, EXIT, ...)
//                [edge] edges
//                [extension] extensions
//   block     := [location] lines
//   location  := u32 file  u32 line
//   edge      := u32 src  u32 dst  u32 flags  u counter_plus_1  (0 = none)
//   extension := u32 tag  str bytes   (tags: kPathExtensionTag,
//                                      kGcovReportExtensionTag; others skipped)
//   names     := cstr profile  cstr object  cstr source  cstr cwd
//                (header.names_size bytes; cstr = the bytes, then a NUL,
//                none inside: the runtime reads this block without
//                decoding varints, see ballarus_meta_names in
//                runtime/ballarus_format.h)
//
// Header fields: stamp = ballarus_hash64(body), identity =
// ballarus_tu_identity(profile, cwd, source) (the profile path's hash, or
// for a TU without one the hash of cwd + '\0' + source), size = header +
// body, names_size = the names block's size.  profile and object are "" or
// absolute paths.
// flags and n_counters appear in both header and body so that a corrupted
// header field is detected rather than silently believed.
//
// Why version 3 compresses: a profile carries each TU's blob, and every
// process rewrites the profiles of the TUs it ran at exit; the blobs were
// 86 % of fmt's profile bytes, and deflate shrinks them 4.6x (docs/
// DESIGN.md, "Metadata compression").  Only the part after the names block
// is compressed, so the runtime, which never decodes the body, reads the
// names block as before.
//
// The encoder is deterministic (vector order only, no pointers or hashes;
// a fixed zlib level, and zlib's output depends only on its input, level
// and version).
// The decoder trusts nothing: every count is bounded by the bytes left before
// allocating, every index is range-checked (file indices < |files|, edge
// endpoints < |blocks|, edges grouped by source in index order, no edge out
// of EXIT or into ENTRY, counter indices < n_counters and unique across the
// TU, no counter on abnormal/fake/ignored edges, known flag bits only),
// no bytes may trail, and the stamp must match.  Errors read
// "offset N: problem" with N the byte offset within the blob.
#include "core/metadata.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <queue>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <zlib.h>

#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

constexpr uint32_t kKnownEdgeFlags = (1u << 11) - 1;
constexpr uint32_t kKnownFunctionFlags = kFunctionComdat | kFunctionArtificial;
constexpr uint32_t kKnownMetaFlags = BALLARUS_META_F_NAIVE |
                                     BALLARUS_META_F_EDGE |
                                     BALLARUS_META_F_PATH |
                                     BALLARUS_META_F_ATOMIC;
// Edges that can never hold a counter (fake edges do not exist at run time,
// abnormal edges cannot be split).  EH edges can.
constexpr uint32_t kNoCounterEdgeFlags =
    kEdgeAbnormal | kEdgeFake | kEdgeIgnored;

// Version 3's deflate level: 6 compresses fmt's metadata 4.62x for ~6 ms
// of CPU per TU at compile time, 1 only 4.09x, 9 4.65x for 1.7x the time
// of 6 (docs/DESIGN.md, "Metadata compression").  Fixed, so that objects
// stay deterministic.
constexpr int kMetaZlibLevel = 6;
// Inflating is bounded: a body declaring more than this is refused (the
// largest real one seen, fmt's format-test.cc, is 1.7 MB; 256 MiB leaves
// room for generated code while keeping what a hostile profile can make
// reconstruct allocate within what any machine that runs it has)...
constexpr uint64_t kMaxInflatedBody = uint64_t{1} << 28;
// ...and so is one declaring more than deflate could encode in the bytes
// present (its best case is 258 bytes per 2-bit code, 1032:1).
constexpr uint64_t kMaxDeflateRatio = 1032;

// ---------------------------------------------------------------- encoding

void PutU(std::vector<uint8_t>* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out->push_back(byte);
  } while (v != 0);
}

void PutStr(std::vector<uint8_t>* out, const std::string& s) {
  PutU(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

void PutLE(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLE(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}


// Header field offsets (ballarus_meta_header, little-endian, packed naturally).
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderSize = 12;
constexpr size_t kOffStamp = 16;
constexpr size_t kOffSize = 24;
constexpr size_t kOffNCounters = 32;
constexpr size_t kOffIdentity = 40;
constexpr size_t kOffFlags = 48;
constexpr size_t kOffNamesSize = 52;
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

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

// Inflates the zlib stream at data[0, size) into *out, which must come to
// exactly `raw_size` bytes.  Never allocates more than the bound below
// (deflate cannot expand by more than 1032:1, and no real body approaches
// kMaxInflatedBody), so a declared size is refused before it is believed.
bool Inflate(const uint8_t* data, size_t size, uint64_t raw_size,
             std::vector<uint8_t>* out, std::string* problem) {
  if (raw_size > kMaxInflatedBody) {
    *problem = "inflated body size " + std::to_string(raw_size) +
               " exceeds the limit of " + std::to_string(kMaxInflatedBody) +
               " bytes";
    return false;
  }
  if (raw_size / kMaxDeflateRatio > size) {
    *problem = "inflated body size " + std::to_string(raw_size) +
               " is more than deflate can encode in " + std::to_string(size) +
               " bytes";
    return false;
  }
  if (size > kMaxInflatedBody) {  // so that it fits zlib's uInt
    *problem = "compressed body of " + std::to_string(size) +
               " bytes exceeds the limit";
    return false;
  }
  out->assign(raw_size, 0);
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (inflateInit(&zs) != Z_OK) {
    *problem = "zlib could not start inflating";
    return false;
  }
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  // A non-null pointer even for an empty body, which zlib requires.
  static Bytef empty_out[1];
  zs.next_out = raw_size != 0 ? out->data() : empty_out;
  zs.avail_out = static_cast<uInt>(raw_size);
  const int rc = inflate(&zs, Z_FINISH);
  const uint64_t produced = zs.total_out;
  const size_t consumed = size - zs.avail_in;
  const std::string msg = zs.msg != nullptr ? zs.msg : "";
  inflateEnd(&zs);
  if (rc == Z_STREAM_END) {
    if (produced != raw_size) {
      *problem = "compressed body inflates to " + std::to_string(produced) +
                 " bytes, not the declared " + std::to_string(raw_size);
      return false;
    }
    if (consumed != size) {
      *problem = std::to_string(size - consumed) +
                 " trailing bytes after the compressed body";
      return false;
    }
    return true;
  }
  if (rc == Z_BUF_ERROR && consumed == size)
    *problem = "compressed body truncated";
  else if (rc == Z_BUF_ERROR)
    *problem = "compressed body does not end within the declared " +
               std::to_string(raw_size) + " bytes";
  else if (rc == Z_MEM_ERROR)
    *problem = "out of memory inflating the body";
  else
    *problem = "corrupt compressed body" + (msg.empty() ? "" : ": " + msg);
  return false;
}

bool DecodeFunction(Reader* r, const TranslationUnit& tu,
                    std::unordered_set<uint64_t>* counter_used, Function* f) {
  if (!r->Str(&f->name, "function name") ||
      !r->Str(&f->demangled, "demangled name"))
    return false;
  const std::string fn = "function " + Quote(f->name);
  size_t at = r->pos();
  if (!r->U32(&f->file, "function file")) return false;
  if (f->file >= tu.files.size())
    return r->Fail(at, fn + ": file index " + std::to_string(f->file) +
                           " out of range (" +
                           std::to_string(tu.files.size()) + " files)");
  if (!r->U32(&f->line, "function line") ||
      !r->U32(&f->end_line, "function end line") ||
      !r->U32(&f->cfg_checksum, "cfg checksum") ||
      !r->U32(&f->lineno_checksum, "lineno checksum"))
    return false;
  at = r->pos();
  if (!r->U32(&f->flags, "function flags")) return false;
  if (f->flags & ~kKnownFunctionFlags)
    return r->Fail(at, fn + ": unknown function flags " + Hex(f->flags));

  uint64_t n_blocks;
  at = r->pos();
  if (!r->Count(&n_blocks, "block count", 1)) return false;
  if (n_blocks < 2)
    return r->Fail(at, fn + ": " + std::to_string(n_blocks) +
                           " blocks, ENTRY and EXIT are required");
  f->blocks.resize(n_blocks);
  for (uint64_t b = 0; b < n_blocks; ++b) {
    uint64_t n_lines;
    if (!r->Count(&n_lines, "line count", 2)) return false;
    f->blocks[b].lines.resize(n_lines);
    for (Location& loc : f->blocks[b].lines) {
      at = r->pos();
      if (!r->U32(&loc.file, "line file")) return false;
      if (loc.file >= tu.files.size())
        return r->Fail(at, fn + ": block " + std::to_string(b) +
                               ": file index " + std::to_string(loc.file) +
                               " out of range (" +
                               std::to_string(tu.files.size()) + " files)");
      if (!r->U32(&loc.line, "line")) return false;
    }
  }

  uint64_t n_edges;
  if (!r->Count(&n_edges, "edge count", 4)) return false;
  f->edges.resize(n_edges);
  uint32_t prev_src = 0;
  for (uint64_t i = 0; i < n_edges; ++i) {
    Edge& e = f->edges[i];
    // Built only for an error message: it is the hot loop of a profile's
    // decoding.
    auto en = [&] { return fn + ": edge " + std::to_string(i); };
    at = r->pos();
    if (!r->U32(&e.src, "edge source")) return false;
    if (e.src >= n_blocks)
      return r->Fail(at, en() + " leaves block " + std::to_string(e.src) +
                             " of " + std::to_string(n_blocks));
    if (e.src == kExitBlock)
      return r->Fail(at, en() + " leaves EXIT");
    if (e.src < prev_src)
      return r->Fail(at, en() + " leaves block " + std::to_string(e.src) +
                             " after an edge of block " +
                             std::to_string(prev_src) +
                             " (edges must be grouped by source in order)");
    prev_src = e.src;
    at = r->pos();
    if (!r->U32(&e.dst, "edge target")) return false;
    if (e.dst >= n_blocks)
      return r->Fail(at, en() + " names block " + std::to_string(e.dst) +
                             " of " + std::to_string(n_blocks));
    if (e.dst == kEntryBlock) return r->Fail(at, en() + " enters ENTRY");
    at = r->pos();
    if (!r->U32(&e.flags, "edge flags")) return false;
    if (e.flags & ~kKnownEdgeFlags)
      return r->Fail(at, en() + ": unknown edge flags " + Hex(e.flags));
    if ((e.flags & kEdgeReentry) && e.src != kEntryBlock)
      return r->Fail(at, en() + ": re-entry edge does not leave ENTRY");
    at = r->pos();
    uint64_t c;
    if (!r->U(&c, "edge counter")) return false;
    if (c == 0) {
      e.counter = kNoCounter;
    } else {
      const uint64_t idx = c - 1;
      if (idx >= tu.n_counters)
        return r->Fail(at, en() + ": counter " + std::to_string(idx) +
                               " out of range (" +
                               std::to_string(tu.n_counters) + " counters)");
      if (counter_used->count(idx) != 0)
        return r->Fail(at, en() + ": counter " + std::to_string(idx) +
                               " already used by another edge");
      if (e.flags & kNoCounterEdgeFlags)
        return r->Fail(at, en() + ": abnormal/fake/ignored edge has a counter");
      counter_used->insert(idx);
      e.counter = static_cast<int64_t>(idx);
    }
  }

  uint64_t n_ext;
  if (!r->Count(&n_ext, "extension count", 2)) return false;
  f->extensions.resize(n_ext);
  for (Extension& x : f->extensions) {
    at = r->pos();
    if (!r->U32(&x.tag, "extension tag") ||
        !r->Bytes(&x.bytes, "extension bytes"))
      return false;
    if (x.tag == kGcovReportExtensionTag) {
      GcovReportInfo info;
      std::string err;
      if (!DecodeGcovReportInfo(x.bytes, &info, &err))
        return r->Fail(at, fn + ": " + err);
      for (uint32_t e : info.dropped_edges)
        if (e >= n_edges || !(f->edges[e].flags & kEdgeFake))
          return r->Fail(at, fn + ": gcov-dropped edge " + std::to_string(e) +
                                 " is not a fake edge of the function");
      continue;
    }
    if (x.tag != kPathExtensionTag) continue;
    PathInfo info;
    std::string err;
    if (!DecodePathInfo(x.bytes, &info, &err))
      return r->Fail(at, fn + ": " + err);
    for (uint32_t e : info.cut_edges)
      if (e >= n_edges)
        return r->Fail(at, fn + ": path cut edge " + std::to_string(e) +
                               " out of range");
    for (uint32_t b : info.cut_blocks)
      if (b >= n_blocks || b == kEntryBlock || b == kExitBlock)
        return r->Fail(at, fn + ": path cut block " + std::to_string(b) +
                               " is not a basic block");
    for (uint32_t e : info.precount_edges)
      if (e >= n_edges || !(f->edges[e].flags & kEdgeFake) ||
          f->edges[e].dst != kExitBlock || f->edges[e].src == kEntryBlock)
        return r->Fail(at, fn + ": path pre-count edge " + std::to_string(e) +
                               " is not a fake edge from a block to EXIT");
    for (const PathInfo::Derived& d : info.derived)
      if (d.block ? d.where >= n_blocks || d.where == kEntryBlock ||
                        d.where == kExitBlock
                  : d.where >= n_edges)
        return r->Fail(at, fn + ": derived path count " +
                               std::to_string(d.path) + " names " +
                               (d.block ? "block " : "edge ") +
                               std::to_string(d.where) + ", not one of the "
                               "function's");
    for (const PathInfo::Balanced& b : info.balanced)
      if (b.start >= n_blocks || b.start == kEntryBlock ||
          b.start == kExitBlock)
        return r->Fail(at, fn + ": balanced path " + std::to_string(b.path) +
                               " starts at block " + std::to_string(b.start) +
                               ", not one of the function's");
    if (!info.derived.empty() &&
        !(tu.flags & (BALLARUS_META_F_EDGE | BALLARUS_META_F_NAIVE)))
      return r->Fail(at, fn + ": derived path counts in a build without "
                             "edge counters");
    if (info.storage == PathInfo::kFromEdges &&
        (info.base != 0 || !info.precount_edges.empty() ||
         !info.derived.empty() || !info.balanced.empty()))
      return r->Fail(at, fn + ": a path table determined by its edge counts "
                             "has a base, pre-counts or derived counts");
    if (info.storage == PathInfo::kDense &&
        (info.base > tu.n_counters ||
         info.n_paths + 1 > tu.n_counters - info.base))
      return r->Fail(at, fn + ": path counters [" + std::to_string(info.base) +
                             ", +" + std::to_string(info.n_paths + 1) +
                             ") exceed the " + std::to_string(tu.n_counters) +
                             " counters");
  }
  return true;
}

// The functions' entry balances (PathInfo::entry_calls) name calling
// blocks of path-profiled functions of the TU, none their own, and depend
// on one another without a cycle (reconstruct solves callers first).
bool CheckEntryBalances(const TranslationUnit& tu, size_t* bad,
                        std::string* error) {
  const size_t nf = tu.functions.size();
  std::vector<std::vector<uint32_t>> callers(nf);
  std::vector<bool> has_paths(nf, false);
  std::vector<PathInfo> infos(nf);
  for (size_t i = 0; i < nf; ++i)
    for (const Extension& x : tu.functions[i].extensions)
      if (x.tag == kPathExtensionTag) {
        std::string err;
        has_paths[i] = DecodePathInfo(x.bytes, &infos[i], &err);
      }
  for (size_t i = 0; i < nf; ++i) {
    const std::string fn = "function '" + tu.functions[i].name + "'";
    for (const PathInfo::Call& c : infos[i].entry_calls) {
      if (c.function >= nf || c.function == i || !has_paths[c.function]) {
        *bad = i;
        *error = fn + ": entry balance names function " +
                 std::to_string(c.function) +
                 (c.function == i ? ", itself"
                                  : ", not another path-profiled function of "
                                    "the TU");
        return false;
      }
      const uint32_t nb =
          static_cast<uint32_t>(tu.functions[c.function].blocks.size());
      if (c.block >= nb || c.block == kEntryBlock || c.block == kExitBlock) {
        *bad = i;
        *error = fn + ": entry balance names block " +
                 std::to_string(c.block) + " of function '" +
                 tu.functions[c.function].name + "', not one of its";
        return false;
      }
      callers[i].push_back(c.function);
    }
  }
  const std::vector<uint32_t> order = CallersFirstOrder(callers);
  if (order.size() != nf) {
    std::vector<bool> placed(nf, false);
    for (uint32_t i : order) placed[i] = true;
    for (size_t i = 0; i < nf; ++i)
      if (!placed[i]) {
        *bad = i;
        *error = "function '" + tu.functions[i].name +
                 "': entry balances depend on one another in a cycle";
        return false;
      }
  }
  return true;
}

}  // namespace

std::vector<uint32_t> CallersFirstOrder(
    const std::vector<std::vector<uint32_t>>& callers) {
  // Kahn's algorithm over "i needs its callers first", the lowest index
  // first among those ready (so a TU without balances keeps its order).
  const size_t nf = callers.size();
  std::vector<uint32_t> pending(nf, 0);
  std::vector<std::vector<uint32_t>> needed_by(nf);
  for (size_t i = 0; i < nf; ++i) {
    std::vector<uint32_t> u = callers[i];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    for (uint32_t g : u) {
      if (g >= nf) continue;  // never ready
      needed_by[g].push_back(static_cast<uint32_t>(i));
    }
    pending[i] = static_cast<uint32_t>(u.size());
  }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (size_t i = 0; i < nf; ++i)
    if (pending[i] == 0) ready.push(static_cast<uint32_t>(i));
  std::vector<uint32_t> order;
  order.reserve(nf);
  while (!ready.empty()) {
    const uint32_t g = ready.top();
    ready.pop();
    order.push_back(g);
    for (uint32_t i : needed_by[g])
      if (--pending[i] == 0) ready.push(i);
  }
  return order;
}

// A names-block string: up to its first NUL (paths never hold one).
std::string CStr(const std::string& s) { return s.substr(0, s.find('\0')); }

uint64_t TuIdentity(const TranslationUnit& tu) {
  return ballarus_tu_identity(CStr(tu.profile).c_str(), CStr(tu.cwd).c_str(),
                              CStr(tu.source).c_str());
}

std::vector<uint8_t> EncodeMetadata(const TranslationUnit& tu,
                                    uint32_t version) {
  std::vector<uint8_t> out(BALLARUS_META_HEADER_SIZE, 0);
  for (const std::string* n : {&tu.profile, &tu.object, &tu.source, &tu.cwd}) {
    const std::string c = CStr(*n);
    out.insert(out.end(), c.begin(), c.end());
    out.push_back(0);
  }
  const size_t names_size = out.size() - BALLARUS_META_HEADER_SIZE;
  // The rest of the body; version 3 stores it deflated.
  std::vector<uint8_t> raw;
  PutStr(&raw, tu.compiler);
  PutU(&raw, tu.flags);
  PutU(&raw, tu.n_counters);
  PutU(&raw, tu.files.size());
  for (const std::string& f : tu.files) PutStr(&raw, f);
  PutU(&raw, tu.functions.size());
  for (const Function& f : tu.functions) {
    PutStr(&raw, f.name);
    PutStr(&raw, f.demangled);
    PutU(&raw, f.file);
    PutU(&raw, f.line);
    PutU(&raw, f.end_line);
    PutU(&raw, f.cfg_checksum);
    PutU(&raw, f.lineno_checksum);
    PutU(&raw, f.flags);
    PutU(&raw, f.blocks.size());
    for (const Block& b : f.blocks) {
      PutU(&raw, b.lines.size());
      for (const Location& l : b.lines) {
        PutU(&raw, l.file);
        PutU(&raw, l.line);
      }
    }
    PutU(&raw, f.edges.size());
    for (const Edge& e : f.edges) {
      PutU(&raw, e.src);
      PutU(&raw, e.dst);
      PutU(&raw, e.flags);
      PutU(&raw, e.counter < 0 ? 0 : static_cast<uint64_t>(e.counter) + 1);
    }
    PutU(&raw, f.extensions.size());
    for (const Extension& x : f.extensions) {
      PutU(&raw, x.tag);
      PutU(&raw, x.bytes.size());
      raw.insert(raw.end(), x.bytes.begin(), x.bytes.end());
    }
  }
  // A body the decoder would refuse to inflate is written uncompressed.
  if (version == 2 || raw.size() > kMaxInflatedBody) {
    version = 2;
    out.insert(out.end(), raw.begin(), raw.end());
  } else {
    version = BALLARUS_META_VERSION;
    PutU(&out, raw.size());
    const size_t at = out.size();
    uLongf n = compressBound(raw.size());
    out.resize(at + n);
    // compress2 cannot fail with a compressBound-sized buffer and a valid
    // level, except for lack of memory, which the plugin cannot survive
    // either.  Bodies > 4 GiB (uLong is 64-bit here) are not a concern.
    if (compress2(out.data() + at, &n, raw.data(), raw.size(),
                  kMetaZlibLevel) != Z_OK) {
      std::fprintf(stderr, "ballarus: zlib could not compress metadata\n");
      std::abort();
    }
    out.resize(at + n);
  }
  uint8_t* h = out.data();
  std::memcpy(h + kOffMagic, BALLARUS_META_MAGIC, 8);
  PutLE(h + kOffVersion, version, 4);
  PutLE(h + kOffHeaderSize, BALLARUS_META_HEADER_SIZE, 4);
  PutLE(h + kOffStamp,
        ballarus_hash64(out.data() + BALLARUS_META_HEADER_SIZE,
                        out.size() - BALLARUS_META_HEADER_SIZE),
        8);
  PutLE(h + kOffSize, out.size(), 8);
  PutLE(h + kOffNCounters, tu.n_counters, 8);
  PutLE(h + kOffIdentity, TuIdentity(tu), 8);
  PutLE(h + kOffFlags, tu.flags, 4);
  PutLE(h + kOffNamesSize, names_size, 4);
  return out;
}

std::vector<uint8_t> EncodePathInfo(const PathInfo& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.storage);
  PutU(&out, info.base);
  PutU(&out, info.n_paths);
  PutU(&out, info.flags);
  PutU(&out, info.cut_edges.size());
  for (uint32_t e : info.cut_edges) PutU(&out, e);
  PutU(&out, info.cut_blocks.size());
  for (uint32_t b : info.cut_blocks) PutU(&out, b);
  if (info.flags & kPathFlagPrecountsKept) {
    PutU(&out, info.precount_edges.size());
    for (uint32_t e : info.precount_edges) PutU(&out, e);
  }
  if (info.flags & kPathFlagDerivedCounts) {
    PutU(&out, info.derived.size());
    for (const PathInfo::Derived& d : info.derived) {
      PutU(&out, d.path);
      PutU(&out, uint64_t{d.where} * 2 + (d.block ? 1 : 0));
    }
  }
  if (info.flags & kPathFlagBalancedStarts) {
    PutU(&out, info.balanced.size());
    for (const PathInfo::Balanced& b : info.balanced) {
      PutU(&out, b.path);
      PutU(&out, b.start);
    }
  }
  if (info.flags & kPathFlagEntryBalanced) {
    PutU(&out, info.entry_path);
    PutU(&out, info.entry_calls.size());
    for (const PathInfo::Call& c : info.entry_calls) {
      PutU(&out, c.function);
      PutU(&out, c.block);
    }
  }
  return out;
}

bool DecodePathInfo(const std::vector<uint8_t>& bytes, PathInfo* info,
                    std::string* error) {
  *info = PathInfo();
  Reader r(bytes.data(), bytes.size(), 0);
  uint64_t n = 0;
  // Errors name the offset where the offending field starts (not 0, nor
  // the end of the field; metadata_test checks them).
  bool ok = r.U32(&info->storage, "path storage");
  if (ok && info->storage != PathInfo::kDense &&
      info->storage != PathInfo::kHashed &&
      info->storage != PathInfo::kFromEdges)
    ok = r.Fail(0, "unknown path storage " + std::to_string(info->storage));
  ok = ok && r.U(&info->base, "path base");
  const size_t at_paths = r.pos();
  ok = ok && r.U(&info->n_paths, "path count");
  if (ok && info->n_paths >= (1ull << 63))
    ok = r.Fail(at_paths, "path count " + std::to_string(info->n_paths) +
                              " exceeds 2^63 - 1");
  const size_t at_flags = r.pos();
  ok = ok && r.U32(&info->flags, "path flags");
  if (ok && (info->flags & ~kPathFlagsKnown))
    ok = r.Fail(at_flags, "unknown path flags");
  if (ok && (info->flags & kPathFlagPrecountsKept) &&
      !(info->flags & kPathFlagEarlyTermination))
    ok = r.Fail(at_flags, "pre-counts kept without early termination");
  if (ok) ok = r.Count(&n, "cut edge count", 1);
  for (uint64_t i = 0; ok && i < n; ++i) {
    uint32_t e;
    const size_t at = r.pos();
    ok = r.U32(&e, "cut edge");
    if (ok && !info->cut_edges.empty() && e <= info->cut_edges.back())
      ok = r.Fail(at, "cut edges not ascending");
    if (ok) info->cut_edges.push_back(e);
  }
  if (ok) ok = r.Count(&n, "cut block count", 1);
  for (uint64_t i = 0; ok && i < n; ++i) {
    uint32_t b;
    const size_t at = r.pos();
    ok = r.U32(&b, "cut block");
    if (ok && !info->cut_blocks.empty() && b <= info->cut_blocks.back())
      ok = r.Fail(at, "cut blocks not ascending");
    if (ok) info->cut_blocks.push_back(b);
  }
  if (ok && (info->flags & kPathFlagPrecountsKept)) {
    ok = r.Count(&n, "pre-count edge count", 1);
    for (uint64_t i = 0; ok && i < n; ++i) {
      uint32_t e;
      const size_t at = r.pos();
      ok = r.U32(&e, "pre-count edge");
      if (ok && !info->precount_edges.empty() &&
          e <= info->precount_edges.back())
        ok = r.Fail(at, "pre-count edges not ascending");
      if (ok) info->precount_edges.push_back(e);
    }
  }
  if (ok && (info->flags & kPathFlagDerivedCounts)) {
    ok = r.Count(&n, "derived count number", 2);
    for (uint64_t i = 0; ok && i < n; ++i) {
      PathInfo::Derived d;
      const size_t at = r.pos();
      uint64_t where = 0;
      ok = r.U(&d.path, "derived path") && r.U(&where, "derived place");
      if (ok && d.path >= info->n_paths)
        ok = r.Fail(at, "derived path " + std::to_string(d.path) +
                            " out of range");
      if (ok && !info->derived.empty() && d.path <= info->derived.back().path)
        ok = r.Fail(at, "derived paths not ascending");
      if (ok && where / 2 > UINT32_MAX)
        ok = r.Fail(at, "derived place out of range");
      d.where = static_cast<uint32_t>(where / 2);
      d.block = (where & 1) != 0;
      if (ok) info->derived.push_back(d);
    }
  }
  if (ok && (info->flags & kPathFlagBalancedStarts) &&
      !(info->flags & kPathFlagPrecountsKept))
    ok = r.Fail(at_flags, "balanced starts without kept pre-counts");
  if (ok && (info->flags & kPathFlagBalancedStarts)) {
    ok = r.Count(&n, "balanced path number", 2);
    std::vector<uint32_t> starts;
    for (uint64_t i = 0; ok && i < n; ++i) {
      PathInfo::Balanced b;
      const size_t at = r.pos();
      ok = r.U(&b.path, "balanced path") && r.U32(&b.start, "balanced start");
      if (ok && b.path >= info->n_paths)
        ok = r.Fail(at, "balanced path " + std::to_string(b.path) +
                            " out of range");
      if (ok && !info->balanced.empty() && b.path <= info->balanced.back().path)
        ok = r.Fail(at, "balanced paths not ascending");
      if (ok && std::find(starts.begin(), starts.end(), b.start) != starts.end())
        ok = r.Fail(at, "two balanced paths from block " +
                            std::to_string(b.start));
      if (ok) {
        starts.push_back(b.start);
        info->balanced.push_back(b);
      }
    }
  }
  if (ok && (info->flags & kPathFlagEntryBalanced) &&
      !(info->flags & kPathFlagPrecountsKept))
    ok = r.Fail(at_flags, "entry balance without kept pre-counts");
  if (ok && (info->flags & kPathFlagEntryBalanced)) {
    const size_t at = r.pos();
    ok = r.U(&info->entry_path, "entry-balanced path");
    if (ok && info->entry_path >= info->n_paths)
      ok = r.Fail(at, "entry-balanced path " +
                          std::to_string(info->entry_path) + " out of range");
    if (ok) ok = r.Count(&n, "entry-balanced call number", 2);
    if (ok && n == 0) ok = r.Fail(at, "entry balance without calls");
    for (uint64_t i = 0; ok && i < n; ++i) {
      PathInfo::Call c;
      const size_t at_call = r.pos();
      ok = r.U32(&c.function, "calling function") &&
           r.U32(&c.block, "calling block");
      if (ok && !info->entry_calls.empty() && !(info->entry_calls.back() < c))
        ok = r.Fail(at_call, "entry-balanced calls not ascending");
      if (ok) info->entry_calls.push_back(c);
    }
  }
  if (ok && r.left() != 0) ok = r.Fail(r.pos(), "trailing bytes");
  if (!ok) {
    *error = "path info: byte " + std::to_string(r.err_offset()) + ": " +
             r.err();
    return false;
  }
  return true;
}

std::vector<uint8_t> EncodeGcovReportInfo(const GcovReportInfo& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.start_column);
  PutU(&out, info.end_column);
  PutU(&out, info.dropped_edges.size());
  for (uint32_t e : info.dropped_edges) PutU(&out, e);
  return out;
}

bool DecodeGcovReportInfo(const std::vector<uint8_t>& bytes, GcovReportInfo* info,
                    std::string* error) {
  *info = GcovReportInfo();
  Reader r(bytes.data(), bytes.size(), 0);
  uint64_t n = 0;
  bool ok = r.U32(&info->start_column, "start column") &&
            r.U32(&info->end_column, "end column") &&
            r.Count(&n, "dropped edge count", 1);
  for (uint64_t i = 0; ok && i < n; ++i) {
    uint32_t e;
    const size_t at = r.pos();
    ok = r.U32(&e, "dropped edge");
    if (ok && !info->dropped_edges.empty() && e <= info->dropped_edges.back())
      ok = r.Fail(at, "dropped edges not ascending");
    if (ok) info->dropped_edges.push_back(e);
  }
  if (ok && r.left() != 0) ok = r.Fail(r.pos(), "trailing bytes");
  if (!ok) {
    *error = "gcov report info: byte " + std::to_string(r.err_offset()) + ": " +
             r.err();
    return false;
  }
  return true;
}

GcovReportInfo GcovReportInfoOf(const Function& f) {
  GcovReportInfo info;
  std::string err;
  for (const Extension& x : f.extensions)
    if (x.tag == kGcovReportExtensionTag && DecodeGcovReportInfo(x.bytes, &info, &err)) {
      info.recorded = true;
      return info;
    }
  return GcovReportInfo();
}

DecodeResult DecodeMetadata(const uint8_t* data, size_t size,
                            TranslationUnit* tu) {
  DecodeResult res;
  auto fail = [&](size_t offset, const std::string& msg) {
    res.ok = false;
    res.offset = offset;
    res.error = "offset " + std::to_string(offset) + ": " + msg;
    return res;
  };
  *tu = TranslationUnit();
  if (data == nullptr && size != 0) return fail(0, "no data");
  if (size < BALLARUS_META_HEADER_SIZE)
    return fail(size, "metadata truncated: " + std::to_string(size) +
                          " bytes, the header alone needs " +
                          std::to_string(BALLARUS_META_HEADER_SIZE));
  if (std::memcmp(data + kOffMagic, BALLARUS_META_MAGIC, 8) != 0)
    return fail(kOffMagic, "bad metadata magic (not a ballarus metadata blob)");
  const uint64_t version = GetLE(data + kOffVersion, 4);
  if (version < BALLARUS_META_VERSION_MIN || version > BALLARUS_META_VERSION)
    return fail(kOffVersion,
                "metadata version " + std::to_string(version) +
                    " unsupported (this build reads versions " +
                    std::to_string(BALLARUS_META_VERSION_MIN) + " to " +
                    std::to_string(BALLARUS_META_VERSION) + ")");
  const uint64_t header_size = GetLE(data + kOffHeaderSize, 4);
  if (header_size != BALLARUS_META_HEADER_SIZE)
    return fail(kOffHeaderSize, "metadata header size " +
                                    std::to_string(header_size) +
                                    ", expected " +
                                    std::to_string(BALLARUS_META_HEADER_SIZE));
  const uint64_t blob_size = GetLE(data + kOffSize, 8);
  if (blob_size > size)
    return fail(size, "metadata truncated: header says " +
                          std::to_string(blob_size) + " bytes, only " +
                          std::to_string(size) + " present");
  if (blob_size < size)
    return fail(blob_size, std::to_string(size - blob_size) +
                               " trailing bytes after the " +
                               std::to_string(blob_size) +
                               "-byte metadata blob");
  ballarus_meta_names names;
  if (ballarus_meta_get_names(data, size, &names) != 0)
    return fail(kOffNamesSize,
                "names block of " + std::to_string(GetLE(data + kOffNamesSize, 4)) +
                    " bytes is not four NUL-terminated names within the blob");
  for (const char* n : {names.profile, names.object})
    if (n[0] != '\0' && n[0] != '/')
      return fail(BALLARUS_META_HEADER_SIZE +
                      static_cast<size_t>(n - reinterpret_cast<const char*>(
                                                  data + BALLARUS_META_HEADER_SIZE)),
                  std::string("profile and object names must be absolute: '") +
                      n + "'");
  const uint64_t header_flags = GetLE(data + kOffFlags, 4);
  if (header_flags & ~static_cast<uint64_t>(kKnownMetaFlags))
    return fail(kOffFlags, "unknown metadata flags " + Hex(header_flags));
  const uint64_t header_counters = GetLE(data + kOffNCounters, 8);

  TranslationUnit out;
  out.profile = names.profile;
  out.object = names.object;
  out.source = names.source;
  out.cwd = names.cwd;
  const size_t body_at =
      BALLARUS_META_HEADER_SIZE + GetLE(data + kOffNamesSize, 4);
  const uint64_t stamp = GetLE(data + kOffStamp, 8);
  // Version 3: inflate the rest of the body first.  The stamp covers the
  // compressed bytes, so it is checked before inflating: zlib only ever
  // sees bytes that were damaged on purpose.  Errors inside the inflated
  // body name the offset where the compressed body starts and the byte
  // within the inflated body.
  std::vector<uint8_t> inflated;
  const uint8_t* body = data;
  size_t body_size = size, body_pos = body_at;
  if (version == 3) {
    const uint64_t body_hash = ballarus_hash64(
        data + BALLARUS_META_HEADER_SIZE, size - BALLARUS_META_HEADER_SIZE);
    if (stamp != body_hash)
      return fail(kOffStamp, "stamp " + Hex(stamp) +
                                 " does not match the body's hash " +
                                 Hex(body_hash) + " (corrupt metadata)");
    Reader z(data, size, body_at);
    uint64_t raw_size = 0;
    if (!z.U(&raw_size, "inflated body size"))
      return fail(z.err_offset(), z.err());
    std::string problem;
    if (!Inflate(data + z.pos(), size - z.pos(), raw_size, &inflated,
                 &problem))
      return fail(body_at, problem);
    body = inflated.data();
    body_size = inflated.size();
    body_pos = 0;
  }
  Reader r(body, body_size, body_pos);
  uint64_t flags = 0, n_files = 0, n_functions = 0;
  size_t at_flags = 0, at_counters = 0;
  r.Str(&out.compiler, "compiler");
  at_flags = r.pos();
  r.U(&flags, "TU flags");
  if (!r.failed() && flags != header_flags)
    r.Fail(at_flags, "TU flags " + Hex(flags) + " disagree with header flags " +
                         Hex(header_flags));
  out.flags = static_cast<uint32_t>(flags);
  at_counters = r.pos();
  r.U(&out.n_counters, "counter count");
  if (!r.failed() && out.n_counters != header_counters)
    r.Fail(at_counters, "body says " + std::to_string(out.n_counters) +
                            " counters, header says " +
                            std::to_string(header_counters));
  if (r.Count(&n_files, "file count", 1)) {
    out.files.resize(n_files);
    for (std::string& f : out.files)
      if (!r.Str(&f, "file name")) break;
  }
  // n_counters is not bounded by the blob's size (path mode may own large
  // counter arrays), so used indices go into a set, not an n_counters array.
  std::unordered_set<uint64_t> counter_used;
  std::vector<size_t> function_at;  // where each function starts
  if (r.Count(&n_functions, "function count", 10)) {
    out.functions.resize(n_functions);
    function_at.reserve(n_functions);
    for (Function& f : out.functions) {
      function_at.push_back(r.pos());
      if (!DecodeFunction(&r, out, &counter_used, &f)) break;
    }
  }
  if (!r.failed()) {
    // Errors name the offset where the offending function starts.
    std::string err;
    size_t bad = 0;
    if (!CheckEntryBalances(out, &bad, &err)) r.Fail(function_at[bad], err);
  }
  if (!r.failed() && r.left() != 0)
    r.Fail(r.pos(), std::to_string(r.left()) +
                        " trailing bytes after the last function");
  if (r.failed()) {
    if (version == 2) return fail(r.err_offset(), r.err());
    return fail(body_at, "inflated body byte " +
                             std::to_string(r.err_offset()) + ": " + r.err());
  }

  if (version == 2) {
    const uint64_t body_hash =
        ballarus_hash64(data + BALLARUS_META_HEADER_SIZE,
                        size - BALLARUS_META_HEADER_SIZE);
    if (stamp != body_hash)
      return fail(kOffStamp, "stamp " + Hex(stamp) +
                                 " does not match the body's hash " +
                                 Hex(body_hash) + " (corrupt metadata)");
  }
  const uint64_t identity = GetLE(data + kOffIdentity, 8);
  const uint64_t want_identity = TuIdentity(out);
  if (identity != want_identity)
    return fail(kOffIdentity, "identity " + Hex(identity) +
                                  " is not the hash of the profile path (or "
                                  "of cwd and source) " +
                                  Hex(want_identity));
  *tu = std::move(out);
  res.ok = true;
  return res;
}

}  // namespace ballarus
