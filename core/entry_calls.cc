// entry_calls.cc — the entry-calls extension (see entry_calls.h) and the
// sum of a function's call blocks.
#include "core/entry_calls.h"

#include <string>
#include <vector>

#include "core/metadata_wire.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

using metadata_wire::PutU;
using metadata_wire::Reader;

std::vector<uint8_t> EncodeEntryCalls(const EntryCalls& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.edge);
  PutU(&out, info.calls.size());
  for (const PathInfo::Call& c : info.calls) {
    PutU(&out, c.function);
    PutU(&out, c.block);
  }
  return out;
}

bool DecodeEntryCalls(const std::vector<uint8_t>& bytes, EntryCalls* info,
                      std::string* error) {
  *info = EntryCalls();
  Reader r(bytes.data(), bytes.size(), 0);
  uint64_t n = 0;
  bool ok = r.U32(&info->edge, "entry edge");
  const size_t at_count = r.pos();
  ok = ok && r.Count(&n, "call count", 2);
  if (ok && n == 0) ok = r.Fail(at_count, "no calls");
  for (uint64_t i = 0; ok && i < n; ++i) {
    PathInfo::Call c;
    const size_t at = r.pos();
    ok = r.U32(&c.function, "calling function") &&
         r.U32(&c.block, "calling block");
    if (ok && !info->calls.empty() && c < info->calls.back())
      ok = r.Fail(at, "calls not ascending");
    if (ok) info->calls.push_back(c);
  }
  if (ok && r.left() != 0) ok = r.Fail(r.pos(), "trailing bytes");
  if (!ok) {
    *error = "entry calls: byte " + std::to_string(r.err_offset()) + ": " +
             r.err();
    return false;
  }
  return true;
}

bool FindEntryCalls(const Function& f, EntryCalls* info, std::string* error) {
  error->clear();
  bool found = false;
  for (const Extension& x : f.extensions) {
    if (x.tag != kEntryCallsExtensionTag) continue;
    if (found) {
      *error = "two entry-calls extensions";
      return false;
    }
    if (!DecodeEntryCalls(x.bytes, info, error)) return false;
    found = true;
  }
  return found;
}

int64_t RealEntryEdge(const Function& f) {
  constexpr uint32_t kNotReal =
      kEdgeFake | kEdgeAbnormal | kEdgeIgnored | kEdgeReentry;
  int64_t found = -1;
  for (size_t i = 0; i < f.edges.size(); ++i) {
    const Edge& e = f.edges[i];
    if (e.src != kEntryBlock || (e.flags & kNotReal)) continue;
    if (found >= 0) return -1;
    found = static_cast<int64_t>(i);
  }
  return found;
}

bool ResumedAfterCall(const Function& f, uint32_t b) {
  for (const Edge& e : f.edges)
    if (e.dst == b && (e.flags & kEdgeReentry) && !(e.flags & kEdgeFake))
      return true;
  return false;
}

Count CountOfCalls(const std::vector<PathInfo::Call>& calls,
                   const std::vector<const FlowResult*>& flows,
                   const std::vector<Function>& functions,
                   std::string* problem) {
  uint64_t sum = 0;
  for (const PathInfo::Call& c : calls) {
    const FlowResult* fl = c.function < flows.size() ? flows[c.function]
                                                     : nullptr;
    if (fl == nullptr || c.block >= fl->blocks.size() ||
        !fl->blocks[c.block]) {
      const std::string who = c.function < functions.size()
                                  ? "'" + functions[c.function].name + "'"
                                  : std::to_string(c.function);
      *problem = "the entry count comes from the calls in function " + who +
                 ", whose block " + std::to_string(c.block) +
                 " count is unknown";
      return std::nullopt;
    }
    sum = ballarus_count_add(sum, *fl->blocks[c.block]);
  }
  return sum;
}

}  // namespace ballarus
