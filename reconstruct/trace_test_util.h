// trace_test_util.h — what the tests of `ballarus-reconstruct trace` and
// of a thread's regeneration share (trace_test.cc, trace_thread_test.cc): a
// profile of two hand-made functions carrying their trace plans (main calls
// loop(2)), the run by hand (its steps, events and words, derived from the
// plans), trace files written here byte by byte (runtime/trace_format.h)
// and checkpoints of a state.
#ifndef BALLARUS_RECONSTRUCT_TRACE_TEST_UTIL_H_
#define BALLARUS_RECONSTRUCT_TRACE_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/test_profiles.h"
#include "core/trace_ids.h"
#include "core/trace_plan.h"
#include "core/trace_regen.h"
#include "reconstruct/cli_test_util.h"
#include "runtime/trace_format.h"

namespace ballarus {
namespace trace_test {

using cli_test::Lines;
using cli_test::Result;
using cli_test::RunTool;
using cli_test::TmpDir;
using K = TraceEventKind;

// main (lines 20+b): 2 {calls loop} 3 {if} 4 {then} 5 {return}.
inline Function Main() {
  return TestFunction("main", 20, 6,
                      {{0, 2, 0}, {2, 3, 0}, {3, 4, kEdgeTrue},
                       {3, 5, kEdgeFalse}, {4, 5, 0}, {5, 1, 0}},
                      -1);
}

struct Program {
  TranslationUnit tu;
  std::vector<TracePlan> plans;  // by function id: main 0, loop 1
};

inline Program MakeProgram() {
  Program p;
  p.tu.source = "t.c";
  p.tu.cwd = TmpDir();
  p.tu.compiler = "gcc 12.2.0";
  p.tu.files = {"t.c"};
  p.tu.functions = {Main(), TestLoop("loop", 10)};
  std::vector<std::vector<bool>> calls = {{false, false, true}, {}};
  for (size_t f = 0; f < 2; ++f) {
    Function& fn = p.tu.functions[f];
    p.plans.push_back(PlanTrace(fn, {}, calls[f]));
    fn.extensions.push_back(
        {kTracePlanExtensionTag, EncodeTracePlanExtension(p.plans.back())});
  }
  return p;
}

// The run by hand: main enters, calls loop(2) (i=0 even, i=1 odd), takes
// the then-branch, returns.
const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> kRun = {
    {0, {0, 2}},
    {1, {0, 2, 3, 4, 6, 3, 4, 5, 6, 3, 7, 1}},
    {0, {3, 4, 5, 1}}};

// One event of the run, the thread's state just before it (live frames
// by function id = index in the TU, outer ones at their call block), and
// the index in kRun (flattened) of the first step it determines.
struct RunEvent {
  TraceEvent ev;
  std::vector<TraceFrame> state;
  size_t step = 0;
};

// The witnesses of the edges a function's blocks take, in order; the
// target of blocks[i] -> blocks[i+1] is step base + i + 1.
inline void Witnesses(const Function& fn, const TracePlan& plan,
                      const std::vector<uint32_t>& blocks, size_t base,
                      const std::vector<TraceFrame>& state,
                      std::vector<RunEvent>* out) {
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    for (size_t e = 0; e < fn.edges.size(); ++e)
      if (fn.edges[e].src == blocks[i] && fn.edges[e].dst == blocks[i + 1] &&
          plan.witness_of_edge[e] != kNoWitness)
        out->push_back(
            {{K::kWitness, static_cast<uint32_t>(plan.witness_of_edge[e])},
             state,
             base + i + 1});
}

// kRun's events: main's steps 0-1, loop's 2-13, main's 14-17.
inline std::vector<RunEvent> RunEvents(const Program& p, bool with_end = true) {
  const Function& main_fn = p.tu.functions[0];
  const Function& loop_fn = p.tu.functions[1];
  std::vector<RunEvent> ev = {{{K::kEnter, 0, 0, 0}, {}, 0}};
  Witnesses(main_fn, p.plans[0], kRun[0].second, 0, {{0, 0}}, &ev);
  ev.push_back({{K::kEnter, 1, 1, 2}, {{0, 2}}, 2});
  Witnesses(loop_fn, p.plans[1], kRun[1].second, 2, {{0, 2}, {1, 0}}, &ev);
  std::vector<uint32_t> tail = {2, 3, 4, 5, 1};  // main from the call block
  Witnesses(main_fn, p.plans[0], tail, 13, {{0, 2}}, &ev);
  if (with_end) ev.push_back({{K::kEnd, 0, 0, 0}, {}, 18});
  return ev;
}

inline uint32_t Stamp(const Program& p) {
  return static_cast<uint32_t>(TuIdentity(p.tu));
}

inline std::vector<uint32_t> Words(const Program& p,
                                   const std::vector<RunEvent>& ev,
                                   size_t from = 0, size_t to = SIZE_MAX) {
  std::vector<uint32_t> words;
  for (size_t i = from; i < ev.size() && i < to; ++i)
    EncodeTraceEvent(ev[i].ev, Stamp(p), &words);
  return words;
}

inline std::vector<uint32_t> RunWords(const Program& p, bool with_end = true) {
  return Words(p, RunEvents(p, with_end));
}

// A record of a hand-written trace file.
struct HandRecord {
  uint32_t thread = 1;
  uint32_t kind = BALLARUS_TRACE_CHUNK;
  uint32_t seq = 0;
  uint64_t total = 0;
  std::vector<uint32_t> words;
  std::vector<uint8_t> bytes;  // METADATA: the payload as it is
};

// A trace file written here (trace_format.h).
inline std::string HandFile(const std::vector<HandRecord>& records,
                            uint32_t mode = BALLARUS_TRACE_MODE_FULL,
                            uint32_t pid = 4242, uint32_t parent_pid = 0) {
  std::string out;
  auto put = [&out](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  ballarus_trace_file_header h{};
  std::memcpy(h.magic, BALLARUS_TRACE_MAGIC, 8);
  h.version = BALLARUS_TRACE_VERSION;
  h.header_size = sizeof h;
  h.mode = mode;
  h.pid = pid;
  h.parent_pid = parent_pid;
  h.generation = parent_pid != 0;
  put(&h, sizeof h);
  for (const HandRecord& rec : records) {
    std::string payload(rec.bytes.begin(), rec.bytes.end());
    uint32_t prev = 0;
    for (uint32_t w : rec.words) {
      uint32_t d = w - prev;
      uint32_t z = (d << 1) ^ static_cast<uint32_t>(-(d >> 31));
      prev = w;
      do {
        payload.push_back(static_cast<char>((z & 0x7f) | (z > 0x7f ? 0x80 : 0)));
        z >>= 7;
      } while (z != 0);
    }
    ballarus_trace_record_header r{};
    r.magic = BALLARUS_TRACE_RECORD_MAGIC;
    r.kind = rec.kind;
    r.thread = rec.thread;
    r.tid = rec.thread != 0 ? 4999 + rec.thread : 0;  // METADATA: 0
    r.seq = rec.seq;
    r.count = static_cast<uint32_t>(rec.words.size() + rec.bytes.size());
    r.bytes = static_cast<uint32_t>(payload.size());
    r.total = rec.total;
    put(&r, sizeof r);
    out += payload;
    uint32_t fnv = 2166136261u;
    for (unsigned char c : payload) fnv = (fnv ^ c) * 16777619u;
    put(&fnv, 4);
  }
  return out;
}

// One CHUNK record per thread.
inline std::string HandTrace(
    const std::vector<std::vector<uint32_t>>& threads) {
  std::vector<HandRecord> records;
  for (size_t t = 0; t < threads.size(); ++t)
    records.push_back({static_cast<uint32_t>(t + 1), BALLARUS_TRACE_CHUNK, 0,
                       threads[t].size(), threads[t]});
  return HandFile(records);
}

// kRun flattened: the reference steps.
inline std::vector<TraceStep> RunSteps() {
  std::vector<TraceStep> steps;
  for (const auto& [f, blocks] : kRun)
    for (uint32_t b : blocks) steps.push_back({f, b});
  return steps;
}

inline std::vector<uint32_t> CheckpointWords(
    const Program& p, const std::vector<TraceFrame>& state) {
  std::vector<uint32_t> w{static_cast<uint32_t>(state.size())};
  for (const TraceFrame& f : state)  // function id = index in the TU here
    w.insert(w.end(), {f.function, Stamp(p), f.site});
  return w;
}

}  // namespace trace_test
}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_TEST_UTIL_H_
