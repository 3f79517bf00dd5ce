// trace_ids.cc — see trace_ids.h.
#include "core/trace_ids.h"

namespace ballarus {
namespace {

constexpr uint32_t kKindBits = 2;
constexpr uint32_t kKindMask = (1u << kKindBits) - 1;

uint32_t Head(uint32_t field, TraceEventKind kind) {
  return (field << kKindBits) | static_cast<uint32_t>(kind);
}

// Words an event of `kind` takes.
size_t EventWords(TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::kWitness: return 1;
    case TraceEventKind::kEnter: return 3;
    case TraceEventKind::kLand: return 4;
    case TraceEventKind::kEnd: return 2;
  }
  return 1;
}

void PutWord(uint32_t w, std::vector<uint8_t>* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(w >> (8 * i)));
}

// Reads a count-prefixed ascending list of indices below `limit`.
bool GetList(const std::vector<uint8_t>& b, size_t* pos, uint32_t limit,
             std::vector<uint32_t>* out) {
  auto word = [&](uint32_t* w) {
    if (b.size() - *pos < 4) return false;
    *w = 0;
    for (int i = 0; i < 4; ++i) *w |= uint32_t{b[*pos + i]} << (8 * i);
    *pos += 4;
    return true;
  };
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

void EncodeTraceEvent(const TraceEvent& e, std::vector<uint32_t>* out) {
  switch (e.kind) {
    case TraceEventKind::kWitness:
      out->push_back(Head(e.id, e.kind));
      return;
    case TraceEventKind::kEnter:
      out->insert(out->end(), {Head(e.id, e.kind), e.depth, e.site});
      return;
    case TraceEventKind::kLand:
      out->insert(out->end(), {Head(e.id, e.kind), e.depth, e.site, e.live});
      return;
    case TraceEventKind::kEnd:
      out->insert(out->end(), {Head(e.depth, e.kind), e.site});
      return;
  }
}

DecodedTrace DecodeTraceWords(const std::vector<uint32_t>& words) {
  DecodedTrace d;
  size_t i = 0;
  while (i < words.size()) {
    TraceEvent e;
    e.kind = static_cast<TraceEventKind>(words[i] & kKindMask);
    if (words.size() - i < EventWords(e.kind)) {
      d.cut = true;
      break;
    }
    uint32_t field = words[i] >> kKindBits;
    switch (e.kind) {
      case TraceEventKind::kWitness: e.id = field; break;
      case TraceEventKind::kEnter:
        e.id = field, e.depth = words[i + 1], e.site = words[i + 2];
        break;
      case TraceEventKind::kLand:
        e.id = field, e.depth = words[i + 1], e.site = words[i + 2];
        e.live = words[i + 3];
        break;
      case TraceEventKind::kEnd:
        e.depth = field, e.site = words[i + 1];
        break;
    }
    i += EventWords(e.kind);
    d.events.push_back(e);
  }
  return d;
}

std::vector<uint8_t> EncodeTracePlanExtension(const TracePlan& plan) {
  std::vector<uint8_t> out;
  std::vector<uint32_t> calls;
  for (size_t b = 0; b < plan.call_block.size(); ++b)
    if (plan.call_block[b]) calls.push_back(static_cast<uint32_t>(b));
  PutWord(static_cast<uint32_t>(calls.size()), &out);
  for (uint32_t b : calls) PutWord(b, &out);
  PutWord(static_cast<uint32_t>(plan.witness_edges.size()), &out);
  for (size_t e : plan.witness_edges) PutWord(static_cast<uint32_t>(e), &out);
  return out;
}

bool DecodeTracePlanExtension(const Function& fn,
                              const std::vector<uint8_t>& bytes,
                              TracePlan* plan, std::string* error) {
  size_t pos = 0;
  std::vector<uint32_t> calls, witnesses;
  if (!GetList(bytes, &pos, static_cast<uint32_t>(fn.blocks.size()), &calls) ||
      !GetList(bytes, &pos, static_cast<uint32_t>(fn.edges.size()),
               &witnesses) ||
      pos != bytes.size()) {
    *error = "bad trace plan of function " + fn.name;
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
  return true;
}

const Extension* FindTracePlanExtension(const Function& fn) {
  for (const Extension& x : fn.extensions)
    if (x.tag == kTracePlanExtensionTag) return &x;
  return nullptr;
}

}  // namespace ballarus
