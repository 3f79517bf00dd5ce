// metadata_path_info.cc — the path-profiling extension of a function
// (PathInfo, its grammar in metadata.h) and the checks of the functions'
// entry balances across a TU.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "core/entry_calls.h"
#include "core/metadata.h"
#include "core/metadata_wire.h"
#include "core/model.h"

namespace ballarus {

using metadata_wire::DecodeAscending;
using metadata_wire::PutU;
using metadata_wire::Reader;

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

namespace {

// u storage  u base  u n_paths  u flags, each checked; *at_flags is where
// the flags start (errors about flag combinations name it).
bool DecodePathHead(Reader* r, PathInfo* info, size_t* at_flags) {
  bool ok = r->U32(&info->storage, "path storage");
  if (ok && info->storage != PathInfo::kDense &&
      info->storage != PathInfo::kHashed &&
      info->storage != PathInfo::kFromEdges)
    ok = r->Fail(0, "unknown path storage " + std::to_string(info->storage));
  ok = ok && r->U(&info->base, "path base");
  const size_t at_paths = r->pos();
  ok = ok && r->U(&info->n_paths, "path count");
  if (ok && info->n_paths >= (1ull << 63))
    ok = r->Fail(at_paths, "path count " + std::to_string(info->n_paths) +
                               " exceeds 2^63 - 1");
  *at_flags = r->pos();
  ok = ok && r->U32(&info->flags, "path flags");
  if (ok && (info->flags & ~kPathFlagsKnown))
    ok = r->Fail(*at_flags, "unknown path flags");
  if (ok && (info->flags & kPathFlagPrecountsKept) &&
      !(info->flags & kPathFlagEarlyTermination))
    ok = r->Fail(*at_flags, "pre-counts kept without early termination");
  return ok;
}

// [u path  u where] derived, ascending by path.
bool DecodeDerived(Reader* r, PathInfo* info) {
  uint64_t n = 0;
  bool ok = r->Count(&n, "derived count number", 2);
  for (uint64_t i = 0; ok && i < n; ++i) {
    PathInfo::Derived d;
    const size_t at = r->pos();
    uint64_t where = 0;
    ok = r->U(&d.path, "derived path") && r->U(&where, "derived place");
    if (ok && d.path >= info->n_paths)
      ok = r->Fail(at,
                   "derived path " + std::to_string(d.path) + " out of range");
    if (ok && !info->derived.empty() && d.path <= info->derived.back().path)
      ok = r->Fail(at, "derived paths not ascending");
    if (ok && where / 2 > UINT32_MAX)
      ok = r->Fail(at, "derived place out of range");
    d.where = static_cast<uint32_t>(where / 2);
    d.block = (where & 1) != 0;
    if (ok) info->derived.push_back(d);
  }
  return ok;
}

// [u path  u32 start] balanced, ascending by path, one per start.
bool DecodeBalanced(Reader* r, PathInfo* info) {
  uint64_t n = 0;
  bool ok = r->Count(&n, "balanced path number", 2);
  std::vector<uint32_t> starts;
  for (uint64_t i = 0; ok && i < n; ++i) {
    PathInfo::Balanced b;
    const size_t at = r->pos();
    ok = r->U(&b.path, "balanced path") && r->U32(&b.start, "balanced start");
    if (ok && b.path >= info->n_paths)
      ok = r->Fail(at,
                   "balanced path " + std::to_string(b.path) + " out of range");
    if (ok && !info->balanced.empty() && b.path <= info->balanced.back().path)
      ok = r->Fail(at, "balanced paths not ascending");
    if (ok && std::find(starts.begin(), starts.end(), b.start) != starts.end())
      ok = r->Fail(at,
                   "two balanced paths from block " + std::to_string(b.start));
    if (ok) {
      starts.push_back(b.start);
      info->balanced.push_back(b);
    }
  }
  return ok;
}

// u entry_path  [u32 function  u32 block] entry_calls, at least one call,
// ascending.
bool DecodeEntryBalance(Reader* r, PathInfo* info) {
  uint64_t n = 0;
  const size_t at = r->pos();
  bool ok = r->U(&info->entry_path, "entry-balanced path");
  if (ok && info->entry_path >= info->n_paths)
    ok = r->Fail(at, "entry-balanced path " + std::to_string(info->entry_path) +
                         " out of range");
  if (ok) ok = r->Count(&n, "entry-balanced call number", 2);
  if (ok && n == 0) ok = r->Fail(at, "entry balance without calls");
  for (uint64_t i = 0; ok && i < n; ++i) {
    PathInfo::Call c;
    const size_t at_call = r->pos();
    ok = r->U32(&c.function, "calling function") &&
         r->U32(&c.block, "calling block");
    if (ok && !info->entry_calls.empty() && !(info->entry_calls.back() < c))
      ok = r->Fail(at_call, "entry-balanced calls not ascending");
    if (ok) info->entry_calls.push_back(c);
  }
  return ok;
}

}  // namespace

bool DecodePathInfo(const std::vector<uint8_t>& bytes, PathInfo* info,
                    std::string* error) {
  *info = PathInfo();
  Reader r(bytes.data(), bytes.size(), 0);
  // Errors name the offset where the offending field starts (not 0, nor
  // the end of the field; metadata_test checks them).
  size_t at_flags = 0;
  bool ok = DecodePathHead(&r, info, &at_flags);
  ok = ok && DecodeAscending(&r, "cut edge count", "cut edge",
                             "cut edges not ascending", &info->cut_edges);
  ok = ok && DecodeAscending(&r, "cut block count", "cut block",
                             "cut blocks not ascending", &info->cut_blocks);
  const uint32_t flags = info->flags;
  if (ok && (flags & kPathFlagPrecountsKept))
    ok =
        DecodeAscending(&r, "pre-count edge count", "pre-count edge",
                        "pre-count edges not ascending", &info->precount_edges);
  if (ok && (flags & kPathFlagDerivedCounts)) ok = DecodeDerived(&r, info);
  if (ok && (flags & kPathFlagBalancedStarts) &&
      !(flags & kPathFlagPrecountsKept))
    ok = r.Fail(at_flags, "balanced starts without kept pre-counts");
  if (ok && (flags & kPathFlagBalancedStarts)) ok = DecodeBalanced(&r, info);
  if (ok && (flags & kPathFlagEntryBalanced) &&
      !(flags & kPathFlagPrecountsKept))
    ok = r.Fail(at_flags, "entry balance without kept pre-counts");
  if (ok && (flags & kPathFlagEntryBalanced)) ok = DecodeEntryBalance(&r, info);
  if (ok && r.left() != 0) ok = r.Fail(r.pos(), "trailing bytes");
  if (!ok) {
    *error =
        "path info: byte " + std::to_string(r.err_offset()) + ": " + r.err();
    return false;
  }
  return true;
}

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

namespace metadata_wire {

namespace {

// Function i's calls `calls` (`what`: "entry balance" or "entry calls")
// name blocks of other functions of the TU, path-profiled ones where
// `need_paths` (has_paths[g]); appended to *callers.
bool CheckCalls(const TranslationUnit& tu, size_t i,
                const std::vector<PathInfo::Call>& calls, const char* what,
                const std::vector<bool>* need_paths,
                std::vector<uint32_t>* callers, std::string* error) {
  const size_t nf = tu.functions.size();
  const std::string fn = "function '" + tu.functions[i].name + "'";
  for (const PathInfo::Call& c : calls) {
    if (c.function >= nf || c.function == i ||
        (need_paths && !(*need_paths)[c.function])) {
      *error = fn + ": " + what + " names function " +
               std::to_string(c.function) +
               (c.function == i ? ", itself"
                : need_paths    ? ", not another path-profiled function of "
                                  "the TU"
                                : ", not another function of the TU");
      return false;
    }
    const uint32_t nb =
        static_cast<uint32_t>(tu.functions[c.function].blocks.size());
    if (c.block >= nb || c.block == kEntryBlock || c.block == kExitBlock) {
      *error = fn + ": " + what + " names block " + std::to_string(c.block) +
               " of function '" + tu.functions[c.function].name +
               "', not one of its";
      return false;
    }
    if (!need_paths && ResumedAfterCall(tu.functions[c.function], c.block)) {
      *error = fn + ": " + what + " names block " + std::to_string(c.block) +
               " of function '" + tu.functions[c.function].name +
               "', which re-entries resume";
      return false;
    }
    callers->push_back(c.function);
  }
  return true;
}

}  // namespace

// The functions' entry balances (PathInfo::entry_calls) and entry calls
// (core/entry_calls.h) name calling blocks of other functions of the TU
// (path-profiled ones for a balance), and depend on one another without a
// cycle (reconstruct solves callers first).
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
    EntryCalls ec;
    std::string err;
    if (!CheckCalls(tu, i, infos[i].entry_calls, "entry balance", &has_paths,
                    &callers[i], error) ||
        (FindEntryCalls(tu.functions[i], &ec, &err) &&
         !CheckCalls(tu, i, ec.calls, "entry calls", nullptr, &callers[i],
                     error))) {
      *bad = i;
      return false;
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

}  // namespace metadata_wire
}  // namespace ballarus
