// trace_test.cc — `ballarus-reconstruct trace` end to end: a profile of two
// hand-made functions carrying their trace plans (main calls loop(2)), a
// trace file of one known run written by the trace runtime
// (runtime/trace_buffer.h), and damaged, cut and inconsistent trace files
// written here byte by byte (runtime/trace_format.h).  The expected block
// sequence and lines are written out by hand; the stream is derived from
// them and the plans.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/test_profiles.h"
#include "core/trace_ids.h"
#include "core/trace_plan.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reconstruct/cli_test_util.h"
#include "runtime/trace_buffer.h"
#include "runtime/trace_format.h"

namespace ballarus {
namespace {

using cli_test::Lines;
using cli_test::Result;
using cli_test::RunTool;
using cli_test::TmpDir;
using K = TraceEventKind;

// main (lines 20+b): 2 {calls loop} 3 {if} 4 {then} 5 {return}.
Function Main() {
  return TestFunction("main", 20, 6,
                      {{0, 2, 0}, {2, 3, 0}, {3, 4, kEdgeTrue},
                       {3, 5, kEdgeFalse}, {4, 5, 0}, {5, 1, 0}},
                      -1);
}

struct Program {
  TranslationUnit tu;
  std::vector<TracePlan> plans;  // by function id: main 0, loop 1
};

Program MakeProgram() {
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

// The witnesses of the edges a function's blocks take, in order.
void Witnesses(const Function& fn, const TracePlan& plan,
               const std::vector<uint32_t>& blocks,
               std::vector<TraceEvent>* out) {
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    for (size_t e = 0; e < fn.edges.size(); ++e)
      if (fn.edges[e].src == blocks[i] && fn.edges[e].dst == blocks[i + 1] &&
          plan.witness_of_edge[e] != kNoWitness)
        out->push_back({K::kWitness,
                        static_cast<uint32_t>(plan.witness_of_edge[e])});
}

std::vector<uint32_t> RunWords(const Program& p, bool with_end = true) {
  const Function& main_fn = p.tu.functions[0];
  const Function& loop_fn = p.tu.functions[1];
  std::vector<TraceEvent> ev = {{K::kEnter, 0, 0, 0}};
  Witnesses(main_fn, p.plans[0], kRun[0].second, &ev);
  ev.push_back({K::kEnter, 1, 1, 2});
  Witnesses(loop_fn, p.plans[1], kRun[1].second, &ev);
  std::vector<uint32_t> tail = {2, 3, 4, 5, 1};  // main from the call block
  Witnesses(main_fn, p.plans[0], tail, &ev);
  if (with_end) ev.push_back({K::kEnd, 0, 0, 0});
  const uint32_t stamp = static_cast<uint32_t>(TuIdentity(p.tu));
  std::vector<uint32_t> words;
  for (const TraceEvent& e : ev) EncodeTraceEvent(e, stamp, &words);
  return words;
}

// A trace file written here (trace_format.h), one CHUNK record per thread.
std::string HandTrace(const std::vector<std::vector<uint32_t>>& threads) {
  std::string out;
  auto put = [&out](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  ballarus_trace_file_header h{};
  std::memcpy(h.magic, BALLARUS_TRACE_MAGIC, 8);
  h.version = BALLARUS_TRACE_VERSION;
  h.header_size = sizeof h;
  h.mode = BALLARUS_TRACE_MODE_FULL;
  h.pid = 4242;
  put(&h, sizeof h);
  for (size_t t = 0; t < threads.size(); ++t) {
    std::string payload;
    uint32_t prev = 0;
    for (uint32_t w : threads[t]) {
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
    r.kind = BALLARUS_TRACE_CHUNK;
    r.thread = static_cast<uint32_t>(t + 1);
    r.tid = 5000 + static_cast<uint32_t>(t);
    r.count = static_cast<uint32_t>(threads[t].size());
    r.bytes = static_cast<uint32_t>(payload.size());
    r.total = threads[t].size();
    put(&r, sizeof r);
    out += payload;
    uint32_t fnv = 2166136261u;
    for (unsigned char c : payload) fnv = (fnv ^ c) * 16777619u;
    put(&fnv, 4);
  }
  return out;
}

class TraceCommand : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = new Program(MakeProgram());
    profile_ = WriteTestProfile("trace.bprof", {{program_->tu, {}, {}, 1}});
    // The runtime's own file (once per process: the runtime starts once).
    runtime_trace_ = TmpDir() + "/runtime.trace";
    char err[256];
    ASSERT_EQ(ballarus_trace_start(runtime_trace_.c_str(), "full", err,
                                   sizeof err),
              0)
        << err;
    for (uint32_t w : RunWords(*program_)) ballarus_trace_witness(w);
    ballarus_trace_finish();
  }
  std::string Args(const std::string& trace, const std::string& more = "") {
    return "trace '" + trace + "' --profile '" + profile_ + "' " + more;
  }
  std::string Hand(const std::string& name,
                   const std::vector<std::vector<uint32_t>>& threads) {
    std::string path = TmpDir() + "/" + name;
    cli_test::WriteFile(path, HandTrace(threads));
    return path;
  }
  static Program* program_;
  static std::string profile_, runtime_trace_;
};
Program* TraceCommand::program_ = nullptr;
std::string TraceCommand::profile_, TraceCommand::runtime_trace_;

TEST_F(TraceCommand, BlocksOfTheRuntimeTrace) {
  Result r = RunTool(Args(runtime_trace_, "--blocks"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = "thread 1 (tid ";
  EXPECT_EQ(r.out.rfind(want, 0), 0u) << r.out;
  std::string body = r.out.substr(r.out.find('\n') + 1);
  std::string expect;
  for (const auto& [f, blocks] : kRun)
    for (uint32_t b : blocks)
      expect += std::string("  ") + (f == 0 ? "main()" : "loop()") + " block " +
                std::to_string(b) + "\n";
  EXPECT_EQ(body, expect);
  EXPECT_NE(r.out.find("complete, 18 blocks"), std::string::npos) << r.out;
}

TEST_F(TraceCommand, LinesLastAndFunction) {
  // Lines: block b of main on 20+b, of loop on 10+b; ENTRY/EXIT have none.
  // Names shown demangled (TestFunction's "main()").
  Result r = RunTool(Args(runtime_trace_, "--lines"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> want = {"t.c:22  main()"};
  for (uint32_t b : {2, 3, 4, 6, 3, 4, 5, 6, 3, 7})
    want.push_back("t.c:" + std::to_string(10 + b) + "  loop()");
  for (uint32_t b : {23, 24, 25}) want.push_back("t.c:" + std::to_string(b) + "  main()");
  std::string expect;
  for (const std::string& l : want) expect += "  " + l + "\n";
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1), expect);
  Result last = RunTool(Args(runtime_trace_, "--last 4"));
  EXPECT_EQ(last.out.substr(last.out.find('\n') + 1),
            "  t.c:17  loop()\n  t.c:23  main()\n  t.c:24  main()\n  t.c:25  main()\n");
  Result fn = RunTool(Args(runtime_trace_, "--function '^loop$' --last 2"));
  EXPECT_EQ(fn.out.substr(fn.out.find('\n') + 1),
            "  t.c:13  loop()\n  t.c:17  loop()\n");
}

TEST_F(TraceCommand, JsonAndThreads) {
  std::vector<uint32_t> words = RunWords(*program_);
  std::string path = Hand("two.trace", {words, words});
  Result r = RunTool(Args(path, "--json --blocks --last 1 --thread 2"));
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("threads").size(), 1u);
  const nlohmann::json& t = j["threads"][0];
  EXPECT_EQ(t.at("thread"), 2);
  EXPECT_EQ(t.at("tid"), 5001);
  EXPECT_EQ(t.at("status"), "complete");
  EXPECT_EQ(t.at("blocks"), 18);
  EXPECT_EQ(t.at("steps"), nlohmann::json::parse(
                               R"j([{"function":"main()","block":1}])j"));
  Result both = RunTool(Args(path, "--blocks"));
  EXPECT_EQ(Lines(both.out), 2 * 19) << both.out;
  Result none = RunTool(Args(path, "--thread 3"));
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err, "ballarus-reconstruct: " + path + ": no thread 3\n");
}

TEST_F(TraceCommand, CutStreamIsTruncatedPrefix) {
  std::vector<uint32_t> words = RunWords(*program_, false);
  Result r = RunTool(Args(Hand("cut.trace", {words}), "--blocks"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": truncated, "), std::string::npos) << r.out;
  // Without kEnd main stops where a missing event could matter: at most
  // the full 18 steps, and what is shown is a prefix of them.
  std::string full = RunTool(Args(runtime_trace_, "--blocks")).out;
  std::string body = r.out.substr(r.out.find('\n') + 1);
  EXPECT_EQ(full.substr(full.find('\n') + 1).rfind(body, 0), 0u) << body;
  // A kEnter cut after its first word is dropped: truncated too.
  std::vector<uint32_t> enter_cut = {kTraceEventTag | 0u, 0};
  Result c = RunTool(Args(Hand("cut2.trace", {enter_cut})));
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("truncated, 0 blocks"), std::string::npos) << c.out;
}

TEST_F(TraceCommand, LineOfConsecutiveBlocksShownOnce) {
  // main's then-block 4 on the if's line 23: 23 once, then 25.
  Program p = MakeProgram();
  p.tu.functions[0].blocks[4].lines = {{0, 23}};
  std::string prof = WriteTestProfile("sameline.bprof", {{p.tu, {}, {}, 1}});
  Result r = RunTool("trace '" + runtime_trace_ + "' --profile '" + prof +
                     "' --last 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1),
            "  t.c:17  loop()\n  t.c:23  main()\n  t.c:25  main()\n");
}

void ExpectOneLine(const Result& r, const std::string& path,
                   const std::string& what) {
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ballarus-reconstruct: " + path + ": ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(TraceCommand, InconsistentStreamsNameTheEvent) {
  std::vector<uint32_t> words = RunWords(*program_);
  // loop's first witness (word 8, event 2: after two 4-word kEnters; main
  // writes none before its call) replaced by an id no plan has.
  std::vector<uint32_t> bad_id = words;
  bad_id[8] = 999;
  std::string p1 = Hand("badid.trace", {bad_id});
  ExpectOneLine(RunTool(Args(p1)), p1,
                "thread 1: event 2: witness id out of range (in loop, "
                "block 3)\n");
  std::vector<uint32_t> unknown = {kTraceEventTag | 7u, 1234, 0, 0};
  std::string p2 = Hand("unknown.trace", {unknown});
  ExpectOneLine(RunTool(Args(p2)), p2,
                "thread 1: event 0: kEnter of function 7 of a TU with stamp "
                "1234 that no profile lists\n");
}

TEST_F(TraceCommand, DamagedFilesAreOneLine) {
  std::string good = HandTrace({RunWords(*program_)});
  for (size_t cut : {size_t{0}, size_t{10}, sizeof(ballarus_trace_file_header) + 20,
                     good.size() - 1}) {
    std::string path = TmpDir() + "/cut" + std::to_string(cut) + ".trace";
    cli_test::WriteFile(path, good.substr(0, cut));
    ExpectOneLine(RunTool(Args(path)), path, "");
  }
  std::string flipped = good;
  flipped[good.size() - 8] ^= 0x40;  // a payload byte: checksum mismatch
  std::string path = TmpDir() + "/flipped.trace";
  cli_test::WriteFile(path, flipped);
  ExpectOneLine(RunTool(Args(path)), path, "");
  std::string missing = TmpDir() + "/missing.trace";
  ExpectOneLine(RunTool(Args(missing)), missing, "cannot read");
  // A bad plan in the profile names the profile.
  Program p = MakeProgram();
  p.tu.functions[1].extensions[0].bytes.pop_back();
  std::string prof = WriteTestProfile("badplan.bprof", {{p.tu, {}, {}, 1}});
  Result r = RunTool("trace '" + runtime_trace_ + "' --profile '" + prof + "'");
  ExpectOneLine(r, prof, "bad trace plan of function loop");
}

}  // namespace
}  // namespace ballarus
