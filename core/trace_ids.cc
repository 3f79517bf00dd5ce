// trace_ids.cc — see trace_ids.h.
#include "core/trace_ids.h"

namespace ballarus {
namespace {

// Words an event takes, its first word included.
size_t EventWords(uint32_t first) {
  if (first < kTraceEventTag) return 1;
  if (first == kTraceEventEnd) return BALLARUS_TRACE_END_WORDS;
  if (first == kTraceEventLand) return BALLARUS_TRACE_LAND_WORDS;
  return BALLARUS_TRACE_ENTER_WORDS;
}

void PutWord(uint32_t w, std::vector<uint8_t>* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(w >> (8 * i)));
}

// Reads a count-prefixed ascending list of indices below `limit`.
bool GetWord(const std::vector<uint8_t>& b, size_t* pos, uint32_t* w) {
  if (b.size() - *pos < 4) return false;
  *w = 0;
  for (int i = 0; i < 4; ++i) *w |= uint32_t{b[*pos + i]} << (8 * i);
  *pos += 4;
  return true;
}

bool GetList(const std::vector<uint8_t>& b, size_t* pos, uint32_t limit,
             std::vector<uint32_t>* out) {
  auto word = [&](uint32_t* w) { return GetWord(b, pos, w); };
  uint32_t n = 0;
  if (!word(&n) || n > (b.size() - *pos) / 4) return false;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t v = 0;
    if (!word(&v) || v >= limit || (!out->empty() && v <= out->back()))
      return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

void EncodeTraceEvent(const TraceEvent& e, uint32_t tu_stamp,
                      std::vector<uint32_t>* out) {
  switch (e.kind) {
    case TraceEventKind::kWitness:
      out->push_back(e.id);
      return;
    case TraceEventKind::kEnter:
      out->insert(out->end(), {kTraceEventTag | e.id, tu_stamp, e.depth, e.site});
      return;
    case TraceEventKind::kLand:
      out->insert(out->end(), {kTraceEventLand, e.id, e.depth, e.site, e.live});
      return;
    case TraceEventKind::kEnd:
      out->insert(out->end(), {kTraceEventEnd, e.depth, e.site});
      return;
  }
}

DecodedTrace DecodeTraceWords(const std::vector<uint32_t>& words,
                              const TraceFunctionResolver& resolve) {
  DecodedTrace d;
  for (size_t i = 0; i < words.size(); i += EventWords(words[i])) {
    const uint32_t w = words[i];
    if (words.size() - i < EventWords(w)) {
      d.cut = true;
      break;
    }
    TraceEvent e;
    if (w < kTraceEventTag) {
      e.id = w;
    } else if (w == kTraceEventEnd) {
      e.kind = TraceEventKind::kEnd;
      e.depth = words[i + 1], e.site = words[i + 2];
    } else if (w == kTraceEventLand) {
      e.kind = TraceEventKind::kLand;
      e.id = words[i + 1], e.depth = words[i + 2], e.site = words[i + 3];
      e.live = words[i + 4];
    } else {
      e.kind = TraceEventKind::kEnter;
      const uint32_t index = w & ~kTraceEventTag, stamp = words[i + 1];
      const int64_t id = resolve(stamp, index);
      if (id < 0) {
        d.error = "event " + std::to_string(d.events.size()) +
                  ": kEnter of function " + std::to_string(index) +
                  " of a TU with stamp " + std::to_string(stamp) +
                  " that no profile lists";
        break;
      }
      e.id = static_cast<uint32_t>(id);
      e.depth = words[i + 2], e.site = words[i + 3];
    }
    d.events.push_back(e);
  }
  return d;
}

std::vector<uint8_t> EncodeTracePlanExtension(const TracePlan& plan,
                                              bool naive) {
  std::vector<uint8_t> out;
  uint32_t flags = naive ? kTracePlanNaive : 0u;
  if (!plan.witness_blocks.empty()) flags |= kTracePlanBlockWitnesses;
  if (plan.calls == CallDecision::kSite) flags |= kTracePlanSites;
  PutWord(flags, &out);
  std::vector<uint32_t> calls;
  for (size_t b = 0; b < plan.call_block.size(); ++b)
    if (plan.call_block[b]) calls.push_back(static_cast<uint32_t>(b));
  PutWord(static_cast<uint32_t>(calls.size()), &out);
  for (uint32_t b : calls) PutWord(b, &out);
  PutWord(static_cast<uint32_t>(plan.witness_edges.size()), &out);
  for (size_t e : plan.witness_edges) PutWord(static_cast<uint32_t>(e), &out);
  PutWord(static_cast<uint32_t>(plan.unwitnessable.size()), &out);
  for (size_t e : plan.unwitnessable) PutWord(static_cast<uint32_t>(e), &out);
  if (flags & kTracePlanBlockWitnesses) {
    PutWord(static_cast<uint32_t>(plan.witness_blocks.size()), &out);
    for (uint32_t b : plan.witness_blocks) PutWord(b, &out);
  }
  return out;
}

bool DecodeTracePlanExtension(const Function& fn,
                              const std::vector<uint8_t>& bytes,
                              TracePlan* plan, std::string* error) {
  size_t pos = 0;
  uint32_t flags = 0;
  std::vector<uint32_t> calls, witnesses, unwitnessable, blocks;
  const uint32_t n_edges = static_cast<uint32_t>(fn.edges.size());
  const uint32_t n_blocks = static_cast<uint32_t>(fn.blocks.size());
  const uint32_t known =
      kTracePlanNaive | kTracePlanBlockWitnesses | kTracePlanSites;
  if (!GetWord(bytes, &pos, &flags) || (flags & ~known) != 0 ||
      !GetList(bytes, &pos, n_blocks, &calls) ||
      !GetList(bytes, &pos, n_edges, &witnesses) ||
      !GetList(bytes, &pos, n_edges, &unwitnessable) ||
      ((flags & kTracePlanBlockWitnesses) &&
       (!GetList(bytes, &pos, n_blocks, &blocks) || blocks.empty())) ||
      pos != bytes.size()) {
    *error = "bad trace plan of function " + fn.name;
    return false;
  }
  if (flags & kTracePlanNaive) {
    *error = "function " + fn.name +
             ": mode=trace-naive traces are not regenerated";
    return false;
  }
  *plan = TracePlan{};
  plan->call_block.assign(fn.blocks.size(), false);
  for (uint32_t b : calls) plan->call_block[b] = true;
  plan->witness_of_edge.assign(fn.edges.size(), kNoWitness);
  for (size_t id = 0; id < witnesses.size(); ++id) {
    plan->witness_of_edge[witnesses[id]] = static_cast<int64_t>(id);
    plan->witness_edges.push_back(witnesses[id]);
  }
  plan->unwitnessable.assign(unwitnessable.begin(), unwitnessable.end());
  plan->witness_blocks = blocks;
  if (flags & kTracePlanSites) plan->calls = CallDecision::kSite;
  return true;
}

const Extension* FindTracePlanExtension(const Function& fn) {
  for (const Extension& x : fn.extensions)
    if (x.tag == kTracePlanExtensionTag) return &x;
  return nullptr;
}

}  // namespace ballarus
