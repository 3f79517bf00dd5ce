// gcov_arcs.cc — GCC 12's choice of counted edges (profile.cc), and the
// codec of the gcov metadata extensions; see gcov_arcs.h.
#include "core/gcov_arcs.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "core/disjoint_sets.h"

namespace ballarus {
namespace {

// ------------------------------------------------------------ byte codec
// Unsigned LEB128 and length-prefixed strings, as core/metadata.cc.

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

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  bool U(uint64_t* v, const char* what) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return Fail(std::string("truncated ") + what);
      const uint8_t byte = b_[pos_++];
      if (shift == 63 && byte > 1) return Fail(std::string(what) + " overflows");
      r |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        *v = r;
        return true;
      }
    }
    return Fail(std::string(what) + " is not a varint");
  }
  bool U32(uint32_t* v, const char* what) {
    uint64_t x = 0;
    if (!U(&x, what)) return false;
    if (x > 0xffffffffu) return Fail(std::string(what) + " exceeds 32 bits");
    *v = static_cast<uint32_t>(x);
    return true;
  }
  bool Str(std::string* s, const char* what) {
    uint64_t n = 0;
    if (!U(&n, what)) return false;
    if (n > b_.size() - pos_) return Fail(std::string("truncated ") + what);
    s->assign(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  // A count of items each at least `min_bytes` long.
  bool Count(uint64_t* n, const char* what, uint64_t min_bytes) {
    if (!U(n, what)) return false;
    if (*n > (b_.size() - pos_) / min_bytes)
      return Fail(std::string(what) + " exceeds the bytes left");
    return true;
  }
  bool End() {
    if (pos_ != b_.size()) return Fail("trailing bytes");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& e) {
    error_ = "gcov info: byte " + std::to_string(pos_) + ": " + e;
    return false;
  }
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

std::vector<uint32_t> GcovCounterEdges(const Function& fn,
                                       const std::vector<GcovEdgeKey>& keys,
                                       std::vector<uint32_t>* dropped) {
  const size_t ne = fn.edges.size();
  const size_t nb = fn.blocks.size();
  // create_edge_list + qsort (el->index_to_edge, ..., compare_freqs): a
  // total order (no two edges share both endpoints), so any sort agrees.
  std::vector<uint32_t> order(ne);
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t i) {
    return i < keys.size() ? keys[i] : GcovEdgeKey{};
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const GcovEdgeKey ka = key(a), kb = key(b);
    return std::make_tuple(ka.weight, ka.src, ka.dst, b) >
           std::make_tuple(kb.weight, kb.src, kb.dst, a);
  });

  auto in_range = [&](const Edge& e) { return e.src < nb && e.dst < nb; };
  // "Mark edges we've replaced by fake edges above as ignored."
  std::vector<bool> ignore(ne, false), on_tree(ne, false);
  for (size_t i = 0; i < ne; ++i) {
    const Edge& e = fn.edges[i];
    if (!in_range(e) || ((e.flags & kEdgeAbnormal) && e.src != kEntryBlock &&
                         e.dst != kExitBlock))
      ignore[i] = true;
  }

  // find_spanning_tree.
  DisjointSets groups(nb > 2 ? nb : 2);
  groups.Union(kExitBlock, kEntryBlock);
  for (uint32_t i : order) {  // abnormal, fake and EXIT-bound edges first
    const Edge& e = fn.edges[i];
    if (ignore[i]) continue;
    if (!((e.flags & (kEdgeAbnormal | kEdgeFake)) || e.dst == kExitBlock))
      continue;
    if (groups.Union(e.src, e.dst)) on_tree[i] = true;
  }
  for (uint32_t i : order) {  // then the rest, heaviest first
    if (ignore[i] || on_tree[i]) continue;
    const Edge& e = fn.edges[i];
    if (groups.Union(e.src, e.dst)) on_tree[i] = true;
  }

  // "Fake edges that are not on the tree will not be instrumented, so mark
  // them ignored."  Everything else off the tree gets a counter.
  std::vector<uint32_t> counted;
  if (dropped) dropped->clear();
  for (size_t i = 0; i < ne; ++i) {
    if (ignore[i] || on_tree[i]) continue;
    if (!(fn.edges[i].flags & kEdgeFake))
      counted.push_back(static_cast<uint32_t>(i));
    else if (dropped)
      dropped->push_back(static_cast<uint32_t>(i));
  }
  return counted;
}

std::vector<uint8_t> EncodeGcovFunctionInfo(const GcovFunctionInfo& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.ident);
  PutU(&out, info.flags);
  PutU(&out, info.counter_edges.size());
  for (uint32_t e : info.counter_edges) PutU(&out, e);
  return out;
}

std::vector<uint8_t> EncodeGcovUnitInfo(const GcovUnitInfo& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.version);
  PutStr(&out, info.da_file_name);
  PutStr(&out, info.aux_name);
  PutU(&out, info.has_profile_dir ? 1 : 0);
  PutStr(&out, info.profile_dir);
  PutStr(&out, info.prefix_path);
  PutU(&out, info.not_instrumented.size());
  for (const GcovUnitInfo::Missing& m : info.not_instrumented) {
    PutStr(&out, m.name);
    PutU(&out, m.ident);
    PutStr(&out, m.why);
  }
  return out;
}

bool DecodeGcovFunctionInfo(const std::vector<uint8_t>& bytes,
                            const Function& fn, GcovFunctionInfo* info,
                            std::string* error) {
  Reader r(bytes);
  uint64_t n = 0;
  *info = GcovFunctionInfo();
  if (!r.U32(&info->ident, "ident") || !r.U32(&info->flags, "flags") ||
      !r.Count(&n, "counter edge count", 1)) {
    *error = r.error();
    return false;
  }
  info->counter_edges.resize(n);
  for (uint32_t& e : info->counter_edges)
    if (!r.U32(&e, "counter edge")) {
      *error = r.error();
      return false;
    }
  if (!r.End()) {
    *error = r.error();
    return false;
  }
  if (info->flags & ~static_cast<uint32_t>(kGcovFunctionExternInline |
                                           kGcovFunctionThunk)) {
    *error = "gcov info: unknown flags " + std::to_string(info->flags);
    return false;
  }
  for (size_t k = 0; k < info->counter_edges.size(); ++k) {
    const uint32_t e = info->counter_edges[k];
    if (e >= fn.edges.size()) {
      *error = "gcov info: counter edge " + std::to_string(e) + " of " +
               std::to_string(fn.edges.size());
      return false;
    }
    if (k > 0 && e <= info->counter_edges[k - 1]) {
      *error = "gcov info: counter edges not ascending";
      return false;
    }
    if (fn.edges[e].flags & (kEdgeFake | kEdgeAbnormal)) {
      *error = "gcov info: counter on fake or abnormal edge " +
               std::to_string(e);
      return false;
    }
  }
  return true;
}

bool DecodeGcovUnitInfo(const std::vector<uint8_t>& bytes, GcovUnitInfo* info,
                        std::string* error) {
  Reader r(bytes);
  *info = GcovUnitInfo();
  uint64_t has_dir = 0, n = 0;
  bool ok = r.U32(&info->version, "version") &&
            r.Str(&info->da_file_name, "da_file_name") &&
            r.Str(&info->aux_name, "aux_name") &&
            r.U(&has_dir, "has_profile_dir") &&
            r.Str(&info->profile_dir, "profile_dir") &&
            r.Str(&info->prefix_path, "prefix_path") &&
            r.Count(&n, "not-instrumented count", 3);
  if (ok && has_dir > 1) {
    *error = "gcov info: has_profile_dir is " + std::to_string(has_dir);
    return false;
  }
  info->has_profile_dir = has_dir != 0;
  if (ok) {
    info->not_instrumented.resize(n);
    for (GcovUnitInfo::Missing& m : info->not_instrumented)
      if (!(ok = r.Str(&m.name, "name") && r.U32(&m.ident, "ident") &&
                 r.Str(&m.why, "why")))
        break;
  }
  if (!ok || !r.End()) {
    *error = r.error();
    return false;
  }
  if (info->da_file_name.empty()) {
    *error = "gcov info: empty da_file_name";
    return false;
  }
  return true;
}

bool IsProfileUseOnly(const Function& fn) {
  for (const Extension& x : fn.extensions) {
    if (x.tag != kGcovExtensionTag) continue;
    GcovFunctionInfo info;
    std::string err;
    return DecodeGcovFunctionInfo(x.bytes, fn, &info, &err) &&
           (info.flags & kGcovFunctionExternInline);
  }
  return false;
}

const Extension* FindExtension(const Function& fn, uint32_t tag,
                               std::string* error) {
  const Extension* found = nullptr;
  for (const Extension& x : fn.extensions) {
    if (x.tag != tag) continue;
    if (found) {
      *error = "two extensions with tag " + std::to_string(tag);
      return nullptr;
    }
    found = &x;
  }
  error->clear();
  return found;
}

}  // namespace ballarus
