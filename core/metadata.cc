// metadata.cc — the metadata blob codec: TranslationUnit <-> bytes.
//
// The plugin compiles one blob per TU into the object; the runtime copies it
// verbatim into the profile; ballarus-reconstruct decodes it.  The header is
// the fixed struct of runtime/ballarus_format.h; this file owns the body.
//
// Body grammar, versions 4 (BALLARUS_META_VERSION, written), 3 and 2
// (read).  `u` is an unsigned LEB128 varint in its shortest form (at most 10
// bytes, value < 2^64; fields documented as u32 must be < 2^32); `str` is
// `u length` then that many raw bytes (no terminator); `[x]` is `u count`
// then count x's; `d32 x (from y)` is, in version 4, `u zigzag(x - y)`
// (0, -1, 1, -2 ... as 0, 1, 2, 3 ...; x must come to a u32), in versions 2
// and 3 `u32 x`.
//
//   body      := names  u raw_size  zlib(raw)       (versions 4 and 3)
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
//                u32 file  u32 line  d32 end_line (from line)
//                u32 cfg_checksum  u32 lineno_checksum  u32 flags
//                [block] blocks           (>= 2: ENTRY, EXIT, ...)
//                [edge] edges
//                [extension] extensions
//   block     := [location] lines
//   location  := u32 file  d32 line (from the previous location's line in
//                the function, the first from the function's line)
//   edge      := d32 src (from the previous edge's src, the first from 0)
//                d32 dst (from src)  u32 flags  u counter
//   counter   := 0 for none; else version 2 and 3: index + 1; version 4:
//                zigzag(index - next) + 1, next being 1 + the index of the
//                previous edge's counter in the body (across functions),
//                0 at first
//   extension := u32 tag  str bytes   (tags: kPathExtensionTag,
//                                      kGcovReportExtensionTag,
//                                      kEntryCallsExtensionTag; others skipped)
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
// process rewrites the profiles of the TUs it ran at exit; the blobs are
// most of a profile's bytes, and regular enough for deflate to shrink them
// several times (docs/DESIGN.md, "Metadata compression").  Only the part
// after the names block is compressed, so the runtime, which never decodes
// the body, reads the names block as before.
// Deltas (version 4): lines, edge endpoints and counter indices are mostly
// close to a value just before them (the next line, the next block, the
// next counter), and their differences are small repeated varints that
// deflate codes in a few bits, where the absolute values were mostly
// distinct bytes: every object carries its blob, so this is binary size
// (docs/performance.md, "Compile time and binary size").
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
#include "core/metadata.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <zlib.h>

#include "core/metadata_wire.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace metadata_wire {

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

}  // namespace metadata_wire

using namespace metadata_wire;  // NOLINT: the codec's own shared parts

namespace {

// A names-block string: up to its first NUL (paths never hold one).
std::string CStr(const std::string& s) { return s.substr(0, s.find('\0')); }

// ---------------------------------------------------------------- encoding

// A u32 field: as is, or in version 4 (d.on) as the zigzag difference to
// `base`.
void PutFrom(std::vector<uint8_t>* raw, uint32_t v, uint32_t base,
             const DeltaState& d) {
  if (d.on)
    PutU(raw, ZigZag(static_cast<int64_t>(v) - static_cast<int64_t>(base)));
  else
    PutU(raw, v);
}

// An edge's counter_plus_1, or in version 4 its counter_code.
void PutCounter(std::vector<uint8_t>* raw, int64_t counter, DeltaState* d) {
  if (counter < 0) {
    PutU(raw, 0);
  } else if (!d->on) {
    PutU(raw, static_cast<uint64_t>(counter) + 1);
  } else {
    PutU(raw, ZigZag(counter - d->next_counter) + 1);
    d->next_counter = counter + 1;
  }
}

// One `function` of the body.
void EncodeFunction(const Function& f, DeltaState* d,
                    std::vector<uint8_t>* raw) {
  PutStr(raw, f.name);
  PutStr(raw, f.demangled);
  PutU(raw, f.file);
  PutU(raw, f.line);
  PutFrom(raw, f.end_line, f.line, *d);
  PutU(raw, f.cfg_checksum);
  PutU(raw, f.lineno_checksum);
  PutU(raw, f.flags);
  PutU(raw, f.blocks.size());
  uint32_t prev_line = f.line;
  for (const Block& b : f.blocks) {
    PutU(raw, b.lines.size());
    for (const Location& l : b.lines) {
      PutU(raw, l.file);
      PutFrom(raw, l.line, prev_line, *d);
      prev_line = l.line;
    }
  }
  PutU(raw, f.edges.size());
  uint32_t prev_src = 0;
  for (const Edge& e : f.edges) {
    PutFrom(raw, e.src, prev_src, *d);
    PutFrom(raw, e.dst, e.src, *d);
    PutU(raw, e.flags);
    PutCounter(raw, e.counter, d);
    prev_src = e.src;
  }
  PutU(raw, f.extensions.size());
  for (const Extension& x : f.extensions) {
    PutU(raw, x.tag);
    PutU(raw, x.bytes.size());
    raw->insert(raw->end(), x.bytes.begin(), x.bytes.end());
  }
}

// `raw`: everything of the body after the names block; `deltas` for
// version 4.
std::vector<uint8_t> EncodeRaw(const TranslationUnit& tu, bool deltas) {
  std::vector<uint8_t> raw;
  PutStr(&raw, tu.compiler);
  PutU(&raw, tu.flags);
  PutU(&raw, tu.n_counters);
  PutU(&raw, tu.files.size());
  for (const std::string& f : tu.files) PutStr(&raw, f);
  PutU(&raw, tu.functions.size());
  DeltaState d;
  d.on = deltas;
  for (const Function& f : tu.functions) EncodeFunction(f, &d, &raw);
  return raw;
}

// Appends u raw_size  zlib(raw) to *out.
void AppendDeflated(const std::vector<uint8_t>& raw,
                    std::vector<uint8_t>* out) {
  PutU(out, raw.size());
  const size_t at = out->size();
  uLongf n = compressBound(raw.size());
  out->resize(at + n);
  // compress2 cannot fail with a compressBound-sized buffer and a valid
  // level, except for lack of memory, which the plugin cannot survive
  // either.  Bodies > 4 GiB (uLong is 64-bit here) are not a concern.
  if (compress2(out->data() + at, &n, raw.data(), raw.size(), kMetaZlibLevel) !=
      Z_OK) {
    std::fprintf(stderr, "ballarus: zlib could not compress metadata\n");
    std::abort();
  }
  out->resize(at + n);
}

// Fills the header of the finished blob `out`.
void WriteHeader(const TranslationUnit& tu, uint32_t version, size_t names_size,
                 std::vector<uint8_t>* out) {
  uint8_t* h = out->data();
  std::memcpy(h + kOffMagic, BALLARUS_META_MAGIC, 8);
  PutLE(h + kOffVersion, version, 4);
  PutLE(h + kOffHeaderSize, BALLARUS_META_HEADER_SIZE, 4);
  PutLE(h + kOffStamp,
        ballarus_hash64(out->data() + BALLARUS_META_HEADER_SIZE,
                        out->size() - BALLARUS_META_HEADER_SIZE),
        8);
  PutLE(h + kOffSize, out->size(), 8);
  PutLE(h + kOffNCounters, tu.n_counters, 8);
  PutLE(h + kOffIdentity, TuIdentity(tu), 8);
  PutLE(h + kOffFlags, tu.flags, 4);
  PutLE(h + kOffNamesSize, names_size, 4);
}

// ---------------------------------------------------------------- decoding

// A failed decode: the problem and where it is.
DecodeResult Failure(size_t offset, const std::string& msg) {
  DecodeResult res;
  res.ok = false;
  res.offset = offset;
  res.error = "offset " + std::to_string(offset) + ": " + msg;
  return res;
}

// *res = Failure(offset, msg); false.
bool Fail(DecodeResult* res, size_t offset, const std::string& msg) {
  *res = Failure(offset, msg);
  return false;
}

// The header's fields, once checked.
struct Header {
  uint64_t version = 0;
  uint64_t flags = 0;
  uint64_t n_counters = 0;
  uint64_t stamp = 0;
  size_t body_at = 0;  // where the body after the names block starts
  ballarus_meta_names names;
};

// Checks the fixed header (magic, version, sizes, known flags) and the
// names block (four names, profile and object absolute or empty).
bool ReadHeader(const uint8_t* data, size_t size, Header* h,
                DecodeResult* res) {
  if (size < BALLARUS_META_HEADER_SIZE)
    return Fail(res, size,
                "metadata truncated: " + std::to_string(size) +
                    " bytes, the header alone needs " +
                    std::to_string(BALLARUS_META_HEADER_SIZE));
  if (std::memcmp(data + kOffMagic, BALLARUS_META_MAGIC, 8) != 0)
    return Fail(res, kOffMagic,
                "bad metadata magic (not a ballarus "
                "metadata blob)");
  h->version = GetLE(data + kOffVersion, 4);
  if (h->version < BALLARUS_META_VERSION_MIN ||
      h->version > BALLARUS_META_VERSION)
    return Fail(res, kOffVersion,
                "metadata version " + std::to_string(h->version) +
                    " unsupported (this build reads versions " +
                    std::to_string(BALLARUS_META_VERSION_MIN) + " to " +
                    std::to_string(BALLARUS_META_VERSION) + ")");
  const uint64_t header_size = GetLE(data + kOffHeaderSize, 4);
  if (header_size != BALLARUS_META_HEADER_SIZE)
    return Fail(res, kOffHeaderSize,
                "metadata header size " + std::to_string(header_size) +
                    ", expected " + std::to_string(BALLARUS_META_HEADER_SIZE));
  const uint64_t blob_size = GetLE(data + kOffSize, 8);
  if (blob_size > size)
    return Fail(res, size,
                "metadata truncated: header says " + std::to_string(blob_size) +
                    " bytes, only " + std::to_string(size) + " present");
  if (blob_size < size)
    return Fail(res, blob_size,
                std::to_string(size - blob_size) +
                    " trailing bytes after the " + std::to_string(blob_size) +
                    "-byte metadata blob");
  if (ballarus_meta_get_names(data, size, &h->names) != 0)
    return Fail(res, kOffNamesSize,
                "names block of " +
                    std::to_string(GetLE(data + kOffNamesSize, 4)) +
                    " bytes is not four NUL-terminated names "
                    "within the blob");
  for (const char* n : {h->names.profile, h->names.object})
    if (n[0] != '\0' && n[0] != '/')
      return Fail(
          res,
          BALLARUS_META_HEADER_SIZE +
              static_cast<size_t>(n - reinterpret_cast<const char*>(
                                          data + BALLARUS_META_HEADER_SIZE)),
          std::string("profile and object names must be absolute: '") + n +
              "'");
  h->flags = GetLE(data + kOffFlags, 4);
  if (h->flags & ~static_cast<uint64_t>(kKnownMetaFlags))
    return Fail(res, kOffFlags, "unknown metadata flags " + Hex(h->flags));
  h->n_counters = GetLE(data + kOffNCounters, 8);
  h->body_at = BALLARUS_META_HEADER_SIZE + GetLE(data + kOffNamesSize, 4);
  h->stamp = GetLE(data + kOffStamp, 8);
  return true;
}

// The stamp is the hash of the body as stored.
bool CheckStamp(const uint8_t* data, size_t size, const Header& h,
                DecodeResult* res) {
  const uint64_t body_hash = ballarus_hash64(data + BALLARUS_META_HEADER_SIZE,
                                             size - BALLARUS_META_HEADER_SIZE);
  if (h.stamp != body_hash)
    return Fail(res, kOffStamp,
                "stamp " + Hex(h.stamp) + " does not match the body's hash " +
                    Hex(body_hash) + " (corrupt metadata)");
  return true;
}

// Version 3: the stamp checked, then the rest of the body inflated into
// *inflated.  The stamp covers the compressed bytes, so it is checked
// before inflating: zlib only ever sees bytes that were damaged on purpose.
bool InflateBody(const uint8_t* data, size_t size, const Header& h,
                 std::vector<uint8_t>* inflated, DecodeResult* res) {
  if (!CheckStamp(data, size, h, res)) return false;
  Reader z(data, size, h.body_at);
  uint64_t raw_size = 0;
  if (!z.U(&raw_size, "inflated body size"))
    return Fail(res, z.err_offset(), z.err());
  std::string problem;
  if (!Inflate(data + z.pos(), size - z.pos(), raw_size, inflated, &problem))
    return Fail(res, h.body_at, problem);
  return true;
}

// Decodes `raw` into *out: compiler, flags and counters (equal to the
// header's), files, functions, then the entry balances across them.  The
// first error sticks in *r.
void DecodeRaw(Reader* r, const Header& h, TranslationUnit* out) {
  uint64_t flags = 0, n_files = 0, n_functions = 0;
  r->Str(&out->compiler, "compiler");
  const size_t at_flags = r->pos();
  r->U(&flags, "TU flags");
  if (!r->failed() && flags != h.flags)
    r->Fail(at_flags, "TU flags " + Hex(flags) +
                          " disagree with header flags " + Hex(h.flags));
  out->flags = static_cast<uint32_t>(flags);
  const size_t at_counters = r->pos();
  r->U(&out->n_counters, "counter count");
  if (!r->failed() && out->n_counters != h.n_counters)
    r->Fail(at_counters, "body says " + std::to_string(out->n_counters) +
                             " counters, header says " +
                             std::to_string(h.n_counters));
  if (r->Count(&n_files, "file count", 1)) {
    out->files.resize(n_files);
    for (std::string& f : out->files)
      if (!r->Str(&f, "file name")) break;
  }
  // n_counters is not bounded by the blob's size (path mode may own large
  // counter arrays), so used indices go into a set, not an n_counters array.
  std::unordered_set<uint64_t> counter_used;
  DeltaState delta;
  delta.on = h.version >= 4;
  std::vector<size_t> function_at;  // where each function starts
  if (r->Count(&n_functions, "function count", 10)) {
    out->functions.resize(n_functions);
    function_at.reserve(n_functions);
    for (Function& f : out->functions) {
      function_at.push_back(r->pos());
      if (!DecodeFunction(r, *out, &counter_used, &delta, &f)) break;
    }
  }
  if (!r->failed()) {
    // Errors name the offset where the offending function starts.
    std::string err;
    size_t bad = 0;
    if (!CheckEntryBalances(*out, &bad, &err)) r->Fail(function_at[bad], err);
  }
  if (!r->failed() && r->left() != 0)
    r->Fail(r->pos(), std::to_string(r->left()) +
                          " trailing bytes after the last function");
}

}  // namespace

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
  // The rest of the body; versions 3 and 4 store it deflated, 4 with
  // deltas.
  std::vector<uint8_t> raw = EncodeRaw(tu, version >= 4);
  // A body the decoder would refuse to inflate is written as version 2.
  if (version > 2 && raw.size() > kMaxInflatedBody) {
    version = 2;
    raw = EncodeRaw(tu, false);
  }
  if (version == 2) {
    out.insert(out.end(), raw.begin(), raw.end());
  } else {
    version = version == 3 ? 3 : BALLARUS_META_VERSION;
    AppendDeflated(raw, &out);
  }
  WriteHeader(tu, version, names_size, &out);
  return out;
}

DecodeResult DecodeMetadata(const uint8_t* data, size_t size,
                            TranslationUnit* tu) {
  *tu = TranslationUnit();
  if (data == nullptr && size != 0) return Failure(0, "no data");
  DecodeResult res;
  Header h;
  if (!ReadHeader(data, size, &h, &res)) return res;
  TranslationUnit out;
  out.profile = h.names.profile;
  out.object = h.names.object;
  out.source = h.names.source;
  out.cwd = h.names.cwd;
  // Version 3: inflate the rest of the body first.  Errors inside the
  // inflated body name the offset where the compressed body starts and the
  // byte within the inflated body.
  std::vector<uint8_t> inflated;
  const uint8_t* body = data;
  size_t body_size = size, body_pos = h.body_at;
  if (h.version >= 3) {
    if (!InflateBody(data, size, h, &inflated, &res)) return res;
    body = inflated.data();
    body_size = inflated.size();
    body_pos = 0;
  }
  Reader r(body, body_size, body_pos);
  DecodeRaw(&r, h, &out);
  if (r.failed()) {
    if (h.version == 2) return Failure(r.err_offset(), r.err());
    return Failure(h.body_at, "inflated body byte " +
                                  std::to_string(r.err_offset()) + ": " +
                                  r.err());
  }
  if (h.version == 2 && !CheckStamp(data, size, h, &res)) return res;
  const uint64_t identity = GetLE(data + kOffIdentity, 8);
  const uint64_t want_identity = TuIdentity(out);
  if (identity != want_identity)
    return Failure(kOffIdentity, "identity " + Hex(identity) +
                                     " is not the hash of the profile path (or "
                                     "of cwd and source) " +
                                     Hex(want_identity));
  *tu = std::move(out);
  res.ok = true;
  return res;
}

}  // namespace ballarus
