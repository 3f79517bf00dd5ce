// trace_test.cc — `ballarus-reconstruct trace` end to end: a profile of two
// hand-made functions carrying their trace plans (main calls loop(2)), a
// trace file of one known run written by the trace runtime
// (runtime/trace_buffer.h), and damaged, cut and inconsistent trace files
// written here byte by byte (runtime/trace_format.h).  The expected block
// sequence and lines are written out by hand; the stream is derived from
// them and the plans.
// A thread's records regenerated in memory: trace_thread_test.cc.

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reconstruct/cli_test_util.h"
#include "reconstruct/trace_test_util.h"
#include "runtime/trace_buffer.h"
#include "runtime/trace_format.h"

namespace ballarus {
namespace trace_test {
namespace {

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
  size_t step = 0;
  for (const auto& [f, blocks] : kRun)
    for (uint32_t b : blocks)
      expect += "  [" + std::to_string(step++) + "] " +
                (f == 0 ? "main()" : "loop()") + " block " +
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
                               R"j([{"step":17,"confirmed":true,"function":"main()","block":1}])j"));
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
  // The steps after main's last witness (3->4, a blocker of EXIT) follow
  // from the CFG alone: marked "?".
  std::string full = RunTool(Args(runtime_trace_, "--blocks")).out;
  std::string body = r.out.substr(r.out.find('\n') + 1);
  const size_t marked = body.find("? [16] main() block 5\n? [17] main() block 1\n");
  EXPECT_EQ(marked, body.size() - 44) << body;
  EXPECT_EQ(body.find('?'), marked);
  EXPECT_NE(r.out.find("; the last 2 blocks follow from the CFG alone"),
            std::string::npos) << r.out;
  for (char& c : body) c = c == '?' ? ' ' : c;
  EXPECT_EQ(full.substr(full.find('\n') + 1).rfind(body, 0), 0u) << body;
  // A kEnter cut after its first word is dropped: truncated too.
  std::vector<uint32_t> enter_cut = {kTraceEventTag | 0u, 0};
  Result c = RunTool(Args(Hand("cut2.trace", {enter_cut})));
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("truncated, 0 blocks"), std::string::npos) << c.out;
}

// The last line of s (without its newline).
std::string LastLine(const std::string& s) {
  const size_t end = s.size() - (!s.empty() && s.back() == '\n');
  const size_t nl = s.rfind('\n', end == 0 ? 0 : end - 1);
  return s.substr(nl == std::string::npos ? 0 : nl + 1, end - (nl + 1));
}

// A thread parked in main's call at block 2 (its POSITION: main, site 2)
// when another crashed: its walk ends at that call block instead of going
// on to the branch at 3; the step stays unconfirmed (the thread could have
// been past the call).  With a FAULT whose module cannot be read: the
// same stop, the signal in the header, one line on stderr saying why.
TEST_F(TraceCommand, PositionStopsAtTheInnermostCall) {
  const std::vector<RunEvent> ev = RunEvents(*program_, false);
  const std::vector<uint32_t> words = Words(*program_, ev, 0, 1);  // kEnter
  const HandRecord chunk = {1, BALLARUS_TRACE_CHUNK, 0, words.size(), words};
  const HandRecord position = {1, BALLARUS_TRACE_POSITION, 1, words.size(),
                               {1, 0, Stamp(*program_), 2}};
  const std::string parked = TmpDir() + "/parked.trace";
  cli_test::WriteFile(parked, HandFile({chunk, position}));
  const std::string without = TmpDir() + "/parked0.trace";
  cli_test::WriteFile(without, HandFile({chunk}));
  Result r = RunTool(Args(parked, "--blocks"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LastLine(r.out), "? [1] main() block 2") << r.out;
  EXPECT_NE(r.out.find("or been inside the last one's call"),
            std::string::npos) << r.out;
  Result w = RunTool(Args(without, "--blocks"));
  EXPECT_EQ(LastLine(w.out), "? [2] main() block 3") << w.out;
  // "/nonexistent/prog", 17 bytes in 5 words.
  const std::vector<uint32_t> fault = {
      11, 1, 0, 0, 0x1010, 0, 0x10, 0, 17,
      0x6e6f6e2f, 0x73697865, 0x746e6574, 0x6f72702f, 0x67};
  const std::string crashed = TmpDir() + "/crashed.trace";
  cli_test::WriteFile(crashed,
                      HandFile({chunk, position,
                                {1, BALLARUS_TRACE_FAULT, 2, words.size(),
                                 fault}}));
  Result c = RunTool(Args(crashed, "--blocks"));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(LastLine(c.out), "? [1] main() block 2") << c.out;
  EXPECT_NE(c.out.find("killed by SIGSEGV (SEGV_MAPERR, address 0x0) at "
                       "/nonexistent/prog+0x10"),
            std::string::npos) << c.out;
  EXPECT_EQ(Lines(c.err), 1) << c.err;
  EXPECT_NE(c.err.find("thread 1: SIGSEGV at /nonexistent/prog+0x10: "),
            std::string::npos) << c.err;
  EXPECT_NE(c.err.find("its lines stop at the innermost activation's last "
                       "call"),
            std::string::npos) << c.err;
  Result j = RunTool(Args(crashed, "--json"));
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json t = nlohmann::json::parse(j.out).at("threads").at(0);
  EXPECT_EQ(t.at("fault").at("signal"), "SIGSEGV");
  EXPECT_EQ(t.at("fault").at("module"), "/nonexistent/prog");
  EXPECT_EQ(t.at("fault").at("offset"), "0x10");
  EXPECT_TRUE(t.at("stopped_where_written").get<bool>());
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

TEST_F(TraceCommand, RangeAndNumbered) {
  Result r = RunTool(Args(runtime_trace_, "--blocks --range 2:4"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1),
            "  [2] loop() block 0\n  [3] loop() block 2\n  [4] loop() block 3\n");
  Result n = RunTool(Args(runtime_trace_, "--numbered --range 13: --last 2"));
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(n.out.substr(n.out.find('\n') + 1),
            "  [15] t.c:24  main()\n  [16] t.c:25  main()\n");
  Result j = RunTool(Args(runtime_trace_, "--json --range :0"));
  EXPECT_EQ(nlohmann::json::parse(j.out)["threads"][0]["steps"],
            nlohmann::json::array());  // ENTRY has no line
  for (const char* bad : {"5:2", "x:3", "7", "1:2:3"}) {
    Result e = RunTool(Args(runtime_trace_, std::string("--range ") + bad));
    EXPECT_EQ(e.status, 2) << bad;
    EXPECT_EQ(Lines(e.err), 1) << e.err;
    EXPECT_TRUE(e.out.empty());
  }
}

// mode=trace-naive: the profile's plans carry the naive flag and the
// stream names every block; shown as it is, it prints what regeneration
// prints for the same run.
TEST_F(TraceCommand, NaiveTraceIsShownDirectly) {
  Program p = MakeProgram();
  for (Function& fn : p.tu.functions) fn.extensions[0].bytes[0] |= 1;
  std::string prof = WriteTestProfile("naive.bprof", {{p.tu, {}, {}, 1}});
  std::vector<TraceEvent> ev = {{K::kEnter, 0, 0, 0}, {K::kWitness, 2}};
  ev.push_back({K::kEnter, 1, 1, 2});
  for (size_t i = 1; i < kRun[1].second.size(); ++i)
    ev.push_back({K::kWitness, kRun[1].second[i]});
  for (uint32_t b : kRun[2].second) ev.push_back({K::kWitness, b});
  ev.push_back({K::kEnd, 0, 0, 0});
  std::vector<uint32_t> words;
  for (const TraceEvent& e : ev) EncodeTraceEvent(e, Stamp(p), &words);
  std::string path = Hand("naive.trace", {words});
  Result naive = RunTool("trace '" + path + "' --profile '" + prof + "' --blocks");
  ASSERT_EQ(naive.status, 0) << naive.err;
  Result regen = RunTool(Args(runtime_trace_, "--blocks"));
  EXPECT_EQ(naive.out.substr(naive.out.find('\n')),
            regen.out.substr(regen.out.find('\n')));
  EXPECT_NE(naive.out.find("complete, 18 blocks"), std::string::npos);
  // A block no edge leads to.
  words[words.size() - 5] = 2;  // main's 5 after 4 -> 2
  std::string bad = Hand("naive_bad.trace", {words});
  Result e = RunTool("trace '" + bad + "' --profile '" + prof + "'");
  ExpectOneLine(e, bad, "no edge from block 4 to 2 (in main, block 4)");
  // A naive plan and a witness plan in the same program.
  p.tu.functions[1].extensions[0].bytes[0] &= ~1;
  std::string mixed = WriteTestProfile("mixed.bprof", {{p.tu, {}, {}, 1}});
  ExpectOneLine(RunTool("trace '" + path + "' --profile '" + mixed + "'"),
                mixed, "mode=trace-naive and mode=trace functions mixed");
}

#if BALLARUS_TRACE_VERSION >= 2
// The runtime's ring file after a crash, written by hand: the chunk of
// events [k1, k2) after an unknown checkpoint, [k2, n) after a known one.
std::string RingFile(const Program& p, const std::vector<RunEvent>& run,
                     size_t k1, size_t k2) {
  const uint64_t before = Words(p, run, 0, k1).size();
  const std::vector<uint32_t> a = Words(p, run, k1, k2), b = Words(p, run, k2);
  return HandFile({{1, BALLARUS_TRACE_CHECKPOINT, 0, before,
                    {BALLARUS_TRACE_CHECKPOINT_UNKNOWN}},
                   {1, BALLARUS_TRACE_RING, 1, before + a.size(), a},
                   {1, BALLARUS_TRACE_CHECKPOINT, 2, before + a.size(),
                    CheckpointWords(p, run[k2].state)},
                   {1, BALLARUS_TRACE_RING, 3, before + a.size() + b.size(), b}},
                  BALLARUS_TRACE_MODE_RING);
}

// `--last N` after a wrapped ring: the last lines the thread ran, as in
// the whole trace; the blocks numbered from the known checkpoint.
TEST_F(TraceCommand, WrappedRingLastLines) {
  const std::vector<RunEvent> run = RunEvents(*program_, false);  // crashed
  const size_t k1 = 2, k2 = 5;
  ASSERT_LT(k2, run.size());
  const std::string path = TmpDir() + "/ring.trace";
  cli_test::WriteFile(path, RingFile(*program_, run, k1, k2));
  Result r = RunTool(Args(path, "--last 3"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string skipped =
      std::to_string(Words(*program_, run, 0, k2).size());
  EXPECT_EQ(Lines(r.out), 4) << r.out;
  EXPECT_NE(r.out.find(" from a checkpoint; " + skipped +
                       " earlier words not kept; the last 2 blocks follow from "
                       "the CFG alone"),
            std::string::npos)
      << r.out;
  // The cut stream stops where a missing event could matter: compare
  // with the whole cut stream's regeneration.
  std::string whole = Hand("whole_cut.trace", {RunWords(*program_, false)});
  Result w = RunTool(Args(whole, "--last 3"));
  EXPECT_EQ(r.out.substr(r.out.find('\n')), w.out.substr(w.out.find('\n')));
  Result b = RunTool(Args(path, "--blocks --range 0:0"));
  const std::vector<TraceStep> full = RunSteps();
  const TraceStep first = full[run[k2].step];
  EXPECT_EQ(b.out.substr(b.out.find('\n') + 1),
            "  [0] " + std::string(first.function == 0 ? "main()" : "loop()") +
                " block " + std::to_string(first.block) + "\n");
}

// A fork child's file alone, and with its parent's.
TEST_F(TraceCommand, ForkChildNamesItsParent) {
  const std::vector<RunEvent> run = RunEvents(*program_);
  const std::vector<uint32_t> rest = Words(*program_, run, 1);
  const std::string child = TmpDir() + "/fork.trace.4243";
  cli_test::WriteFile(
      child, HandFile({{1, BALLARUS_TRACE_CHECKPOINT, 0, 0,
                        CheckpointWords(*program_, run[1].state)},
                       {1, BALLARUS_TRACE_CHUNK, 1, rest.size(), rest},
                       {1, BALLARUS_TRACE_END, 2, rest.size(), {}}},
                      BALLARUS_TRACE_MODE_FULL, 4243, 4242));
  const std::string parent = Hand("fork.trace", {RunWords(*program_)});
  Result alone = RunTool(Args(child, "--blocks"));
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out.rfind("process 4243: " + child +
                            ", forked by process 4242\nthread 1 (tid 5000): "
                            "complete, 16 blocks from a checkpoint\n  [0] "
                            "loop() block 0\n",
                            0),
            0u)
      << alone.out;
  Result both = RunTool("trace '" + parent + "' '" + child + "' --profile '" +
                        profile_ + "' --last 1");
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(both.out,
            "process 4242: " + parent +
                "\nthread 1 (tid 5000): complete, 18 blocks\n  t.c:25  main()\n"
                "process 4243: " + child + ", forked by process 4242 (" +
                parent + ")\nthread 1 (tid 5000): complete, 16 blocks from a "
                "checkpoint\n  t.c:25  main()\n");
  Result j = RunTool(Args(child, "--json --last 1"));
  const nlohmann::json t = nlohmann::json::parse(j.out)["threads"][0];
  EXPECT_EQ(t.at("parent_pid"), 4242);
  EXPECT_EQ(t.at("from_checkpoint"), true);
}

// A fork child's first checkpoint was taken at the fork: main in its call
// at block 2 (here the call to fork), the next word main's witness of
// 3 -> 4, taken after the call returns.  The same records in a ring file
// mean the state at that witness: main about to take its edge (from the
// block the checkpoint cannot name, so its first step is 4).
TEST_F(TraceCommand, ForkChildCheckpointIsInsideTheCall) {
  const Function& main_fn = program_->tu.functions[0];
  uint32_t witness = 0;
  for (size_t e = 0; e < main_fn.edges.size(); ++e)
    if (main_fn.edges[e].src == 3 && main_fn.edges[e].dst == 4)
      witness = static_cast<uint32_t>(program_->plans[0].witness_of_edge[e]);
  std::vector<uint32_t> words;
  EncodeTraceEvent({K::kWitness, witness}, Stamp(*program_), &words);
  EncodeTraceEvent({K::kEnd, 0, 0, 0}, Stamp(*program_), &words);
  auto file = [&](const std::string& name, uint32_t mode, uint32_t kind) {
    const std::string path = TmpDir() + "/" + name;
    cli_test::WriteFile(
        path, HandFile({{1, BALLARUS_TRACE_CHECKPOINT, 0, 0,
                         CheckpointWords(*program_, {{0, 2}})},
                        {1, kind, 1, words.size(), words}},
                       mode, 4243, 4242));
    return path;
  };
  Result child = RunTool(Args(
      file("atfork.trace.4243", BALLARUS_TRACE_MODE_FULL, BALLARUS_TRACE_CHUNK),
      "--blocks"));
  ASSERT_EQ(child.status, 0) << child.err;
  EXPECT_EQ(child.out.substr(child.out.find("\n  [0]")),
            "\n  [0] main() block 3\n  [1] main() block 4\n  [2] main() block 5"
            "\n  [3] main() block 1\n");
  Result ring = RunTool(Args(
      file("atchunk.trace.4243", BALLARUS_TRACE_MODE_RING, BALLARUS_TRACE_RING),
      "--blocks"));
  ASSERT_EQ(ring.status, 0) << ring.err;
  EXPECT_EQ(ring.out.substr(ring.out.find("\n  [0]")),
            "\n  [0] main() block 4\n  [1] main() block 5\n  [2] main() block 1\n");
}
#endif  // BALLARUS_TRACE_VERSION >= 2

#ifdef BALLARUS_TRACE_METADATA
// A trace file carrying its TU's metadata reads without --profile; a
// profile of the same build changes nothing, one of another build of the
// TU (same identity, other stamp) is an error, and so is a file without
// metadata and no profile.
TEST_F(TraceCommand, MetadataRecordsReplaceTheProfile) {
  const std::vector<uint32_t> words = RunWords(*program_);
  auto file = [&](const std::string& name, bool metadata) {
    std::vector<HandRecord> records;
    if (metadata)
      records.push_back({0, BALLARUS_TRACE_METADATA, 0, 0, {},
                         EncodeMetadata(program_->tu)});
    records.push_back({1, BALLARUS_TRACE_CHUNK, 0, words.size(), words});
    const std::string path = TmpDir() + "/" + name;
    cli_test::WriteFile(path, HandFile(records));
    return path;
  };
  const std::string with = file("meta.trace", true);
  Result alone = RunTool("trace '" + with + "' --blocks");
  ASSERT_EQ(alone.status, 0) << alone.err;
  Result profiled = RunTool(Args(file("plain.trace", false), "--blocks"));
  ASSERT_EQ(profiled.status, 0) << profiled.err;
  EXPECT_EQ(alone.out, profiled.out);
  EXPECT_EQ(Lines(alone.out), 19);  // the header and kRun's 18 steps
  Result both = RunTool(Args(with, "--blocks"));
  EXPECT_EQ(both.out, profiled.out) << both.err;
  TranslationUnit rebuilt = program_->tu;
  rebuilt.functions[0].blocks[4].lines[0].line += 1;
  const std::string old_profile =
      WriteTestProfile("rebuilt.bprof", {{rebuilt, {}, {}, 1}});
  ExpectOneLine(RunTool("trace '" + with + "' --profile '" + old_profile + "'"),
                with, "TU t.c: its METADATA record is another build than the "
                      "profile " + old_profile);
  const std::string without = file("bare.trace", false);
  ExpectOneLine(RunTool("trace '" + without + "'"), without,
                "no METADATA records");
}
#endif  // BALLARUS_TRACE_METADATA

}  // namespace
}  // namespace trace_test
}  // namespace ballarus
