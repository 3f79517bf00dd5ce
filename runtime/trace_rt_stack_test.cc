// trace_rt_stack_test.cc — end-to-end tests of the trace runtime's
// checkpoints, POSITION and FAULT records: trace_prog runs a simulated
// program (trace_events.h's hooks) in rings, on fatal signals, in threads,
// across fork and exec, and every checkpoint is compared with the stack
// the stream itself tells (trace_rt_test_util.h).

#include <elf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "runtime/trace_rt_test_util.h"

namespace trace_rt_test {
namespace {

TEST(TraceRt, RingCheckpointsTellTheStack) {
  // 30000 random steps (~66000 words, ~16 chunks) traced in full, then in
  // rings that wrap: every kept chunk's checkpoint is the stack at its
  // first word.
  for (const char* seed : {"1", "2"}) {
    std::vector<uint32_t> s =
        FullStream("hooks_full", {"hooks", "30000", seed});
    ASSERT_GT(s.size(), 50000u);
    for (uint32_t ring : {1u, 5000u, 20000u}) {
      std::string dir = FreshDir("hooks_ring");
      ASSERT_EQ(RunProg(dir, "ring:" + std::to_string(ring),
                        {"hooks", "30000", seed}),
                0);
      Trace t = ReadTrace(dir + "/trace");
      ASSERT_EQ(t.error, "") << ring;
      Consistency c = CheckStream(t, s);
      EXPECT_EQ(c.error, "") << ring << " seed " << seed;
      EXPECT_GE(t.witnesses[1].size(), ring);
      EXPECT_LE(t.witnesses[1].size(), ring + 2 * 4095);
      EXPECT_EQ(c.known, static_cast<int>(t.checkpoints[1].size()));
      EXPECT_GE(c.known, 2) << ring;
    }
  }
}

TEST(TraceRt, RingOnSegvTellsTheStack) {
  int full_status = 0, ring_status = 0;
  std::vector<uint32_t> s =
      FullStream("hooks_segv_full", {"hooks_segv", "20000", "3"}, &full_status);
  ASSERT_TRUE(WIFSIGNALED(full_status));
  EXPECT_EQ(WTERMSIG(full_status), SIGSEGV);
  std::string dir = FreshDir("hooks_segv_ring");
  ring_status = RunProg(dir, "ring:6000", {"hooks_segv", "20000", "3"});
  EXPECT_EQ(ring_status, full_status);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  Consistency c = CheckStream(t, s);
  EXPECT_EQ(c.error, "");
  EXPECT_GE(c.known, 2);
  EXPECT_TRUE(c.position);
  EXPECT_GE(t.witnesses[1].size(), 6000u);
}

// A FAULT record's fields.
struct Fault {
  uint32_t signo = 0;
  int32_t code = 0;
  uint64_t addr = 0, pc = 0, offset = 0;
  std::string path;
};

Fault ReadFault(const std::vector<uint32_t>& w) {
  Fault f;
  if (w.size() < BALLARUS_TRACE_FAULT_WORDS) return f;
  auto u64 = [&w](size_t i) { return w[i] | uint64_t{w[i + 1]} << 32; };
  f.signo = w[0];
  f.code = static_cast<int32_t>(w[1]);
  f.addr = u64(2), f.pc = u64(4), f.offset = u64(6);
  f.path.assign(reinterpret_cast<const char*>(w.data() + 9), w[8]);
  return f;
}

// Whether byte `offset` of the ELF file at `path` is in an executable
// PT_LOAD segment.
bool InExecutableSegment(const std::string& path, uint64_t offset) {
  const std::string elf = ReadBytes(path);
  Elf64_Ehdr eh;
  if (elf.size() < sizeof eh) return false;
  memcpy(&eh, elf.data(), sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (eh.e_phoff + (i + 1) * sizeof ph > elf.size()) return false;
    memcpy(&ph, elf.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
        offset >= ph.p_offset && offset < ph.p_offset + ph.p_filesz)
      return true;
  }
  return false;
}

TEST(TraceRt, FaultRecordNamesTheSignalAndTheInstruction) {
  // A null dereference in trace_prog's main: SIGSEGV, SEGV_MAPERR at 0,
  // the instruction in trace_prog's code; the thread's POSITION is the
  // stack the stream tells at its end (CheckStream).  abort(): SIGABRT
  // sent by the thread to itself (SI_TKILL), in another module (libc).
  std::string dir = FreshDir("fault_segv");
  RunProg(dir, "ring:6000", {"hooks_segv", "20000", "3"});
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.faults.size(), 1u);
  ASSERT_EQ(t.faults.count(1), 1u);
  const auto& [h, w] = t.faults[1];
  EXPECT_EQ(h.seq, t.positions[1].first.seq + 1);
  EXPECT_EQ(h.total, t.positions[1].first.total);
  Fault f = ReadFault(w);
  EXPECT_EQ(f.signo, static_cast<uint32_t>(SIGSEGV));
  EXPECT_EQ(f.code, SEGV_MAPERR);
  EXPECT_EQ(f.addr, 0u);
  char prog[PATH_MAX];
  ASSERT_NE(realpath(Runfile("trace_prog").c_str(), prog), nullptr);
  EXPECT_EQ(f.path, prog);
  EXPECT_NE(f.pc, 0u);
  EXPECT_TRUE(InExecutableSegment(f.path, f.offset)) << f.offset;

  dir = FreshDir("fault_abort");
  RunProg(dir, "ring:100", {"abort", "50"});
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.faults.count(1), 1u);
  f = ReadFault(t.faults[1].second);
  EXPECT_EQ(f.signo, static_cast<uint32_t>(SIGABRT));
  EXPECT_EQ(f.code, SI_TKILL);
  EXPECT_NE(f.path.find("libc"), std::string::npos) << f.path;
  EXPECT_TRUE(InExecutableSegment(f.path, f.offset)) << f.offset;
  // An exit writes positions, no fault.
  dir = FreshDir("fault_none");
  ASSERT_EQ(RunProg(dir, "ring:100", {"hooks", "3000", "1"}), 0);
  t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  EXPECT_TRUE(t.faults.empty());
  EXPECT_EQ(t.positions.count(1), 1u);
}

TEST(TraceRt, ThreadsRingCheckpointsTellEachStack) {
  // Four threads simulating programs from seeds 1..4, in full then in a
  // ring: each ring thread's words end one full stream, and its
  // checkpoints are that stream's stack.
  std::string dir = FreshDir("hooks_threads_full");
  ASSERT_EQ(RunProg(dir, "full", {"hooks_threads", "20000", "4"}), 0);
  Trace full = ReadTrace(dir + "/trace");
  ASSERT_EQ(full.error, "");
  ASSERT_EQ(full.witnesses.size(), 4u);
  for (const auto& [serial, s] : full.witnesses) {
    EXPECT_EQ(CheckStream(full, s, serial).error, "") << serial;
    EXPECT_EQ(s[s.size() - BALLARUS_TRACE_END_WORDS], BALLARUS_TRACE_EVENT_END);
  }
  dir = FreshDir("hooks_threads_ring");
  ASSERT_EQ(RunProg(dir, "ring:5000", {"hooks_threads", "20000", "4"}), 0);
  Trace ring = ReadTrace(dir + "/trace");
  ASSERT_EQ(ring.error, "");
  ASSERT_EQ(ring.witnesses.size(), 4u);
  std::set<uint32_t> matched;
  for (const auto& [serial, w] : ring.witnesses) {
    for (const auto& [fserial, s] : full.witnesses) {
      if (w.size() > s.size() ||
          !std::equal(w.begin(), w.end(), s.end() - w.size()))
        continue;
      matched.insert(fserial);
      Consistency c = CheckStream(ring, s, serial);
      EXPECT_EQ(c.error, "") << serial;
      EXPECT_GE(c.known, 2) << serial;
    }
  }
  EXPECT_EQ(matched.size(), 4u);
}

TEST(TraceRt, DeepStacksAreUnknownBeyondTheCap) {
  // 20000 nested calls: the checkpoints of chunks that start deeper than
  // 16384 activations say unknown, the others (on the way down and back
  // up) give every frame.
  std::vector<uint32_t> s = FullStream("deep_full", {"deep", "20000"});
  for (const char* spec : {"ring:200000", "ring:3000"}) {
    std::string dir = FreshDir("deep_ring");
    ASSERT_EQ(RunProg(dir, spec, {"deep", "20000"}), 0);
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    Consistency c = CheckStream(t, s);
    EXPECT_EQ(c.error, "") << spec;
    EXPECT_GE(c.known, 1) << spec;
    if (std::string(spec) == "ring:200000") {
      EXPECT_GE(c.unknown, 2);
    }
  }
}

TEST(TraceRt, ActivationsBeforeTheStartAreUnknown) {
  // Two activations live when tracing starts, a third traced: chunks that
  // start while any of the first two is live have unknown checkpoints;
  // once they returned, the new activation (fn 4, stamp 40, called from
  // block 9 at depth 0) is known.
  std::string dir = FreshDir("prestart");
  ASSERT_EQ(RunProg(dir, "ring:100000", {"prestart", "10000"}), 0);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  const auto& cps = t.checkpoints[1];
  // 4 + 10000 + 1 + 4 + 10000 words: chunks start at words 0, 4092 and
  // 8184 in the first phase (the third activation's kEnter, then its
  // witnesses), at 12276 and 16368 in the second.
  ASSERT_EQ(cps.size(), 5u);
  for (size_t i = 0; i < 3; i++)
    EXPECT_EQ(cps[i], std::vector<uint32_t>{BALLARUS_TRACE_CHECKPOINT_UNKNOWN})
        << i;
  for (size_t i = 3; i < 5; i++)
    EXPECT_EQ(cps[i], (std::vector<uint32_t>{1, 4, 40, 9})) << i;
  const std::vector<uint32_t>& w = t.witnesses[1];
  ASSERT_GE(w.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>(w.begin(), w.begin() + 4),
            (std::vector<uint32_t>{BALLARUS_TRACE_EVENT_TAG | 3, 30, 2, 0}));
}

TEST(TraceRt, ThreadRunningAtTheStartRegistersAtItsScratchChunksEnd) {
  // The thread wrote 100 words before the start: its first one went to
  // the slow path (position NULL), which pointed it at a scratch chunk,
  // the 99 others into it.  After the start it fills that chunk
  // (4092 - 99 words, dropped) and registers at the next word.
  std::string dir = FreshDir("prethread");
  ASSERT_EQ(RunProg(dir, "full", {"prethread", "10000"}), 0);
  Trace t = ReadTrace(dir + "/trace");
  ASSERT_EQ(t.error, "");
  ASSERT_EQ(t.witnesses.size(), 1u);
  std::vector<uint32_t> want =
      Seq(1, BALLARUS_TRACE_CHUNK_BYTES / 4 - BALLARUS_TRACE_CHUNK_HEAD_WORDS - 99,
          10000);
  want.insert(want.end(), {BALLARUS_TRACE_EVENT_END, 0, 0});
  EXPECT_EQ(t.witnesses.begin()->second, want);
}

TEST(TraceRt, ForkChildStartsWithTheStackAtTheFork) {
  std::string dir = FreshDir("hooks_fork");
  ASSERT_EQ(RunProg(dir, "full", {"hooks_fork", "3000", "4"}), 0);
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  Trace parent = ReadTrace(dir + "/trace");
  Trace child = ReadTrace(dir + "/" + files[1]);
  ASSERT_EQ(parent.error, "");
  ASSERT_EQ(child.error, "");
  const std::vector<uint32_t>& s = parent.witnesses[1];
  ASSERT_EQ(CheckStream(parent, s).error, "");
  // The parent's stream: steps, the fork's block 7777, steps; the child
  // took the same steps after the fork.
  auto fork_at = std::find(s.begin(), s.end(), 7777u);
  ASSERT_NE(fork_at, s.end());
  size_t at = fork_at - s.begin() + 1;
  StackModel m;
  for (size_t i = 0; i < at;) i = m.Step(s, i);
  ASSERT_EQ(m.error, "");
  ASSERT_FALSE(m.stack.empty());
  EXPECT_EQ(m.stack.back().site, 7777u);
  ASSERT_FALSE(child.records[1].empty());
  EXPECT_EQ(child.records[1][0].kind, BALLARUS_TRACE_CHECKPOINT);
  EXPECT_EQ(child.records[1][0].seq, 0u);
  EXPECT_EQ(child.records[1][0].total, 0u);
  ASSERT_EQ(child.checkpoints[1].size(), 1u);
  EXPECT_EQ(child.checkpoints[1][0], m.Checkpoint());
  EXPECT_EQ(child.witnesses[1], std::vector<uint32_t>(s.begin() + at, s.end()));
  for (size_t i = 0; i < child.records[1].size(); i++)
    EXPECT_EQ(child.records[1][i].seq, i);
  // In a ring both processes keep the chunks before the fork, and both
  // took the same steps after it: each file is the end of s, its
  // checkpoints s's stack.
  dir = FreshDir("hooks_fork_ring");
  ASSERT_EQ(RunProg(dir, "ring:100000", {"hooks_fork", "3000", "4"}), 0);
  files = Files(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    Trace t = ReadTrace(dir + "/" + f);
    ASSERT_EQ(t.error, "") << f;
    EXPECT_EQ(t.witnesses[1], s) << f;
    Consistency c = CheckStream(t, s);
    EXPECT_EQ(c.error, "") << f;
    EXPECT_GE(c.known, 2) << f;
  }
}

// The stream of `hooks STEPS 5` and the kEnd it ends with.
std::vector<uint32_t> StreamWithEnd(const std::string& name,
                                    const char* steps = "3000") {
  std::vector<uint32_t> s = FullStream(name, {"hooks", steps, "5"});
  StackModel m;
  for (size_t i = 0; i < s.size();) i = m.Step(s, i);
  uint32_t site = m.stack.empty() ? m.root_site : m.stack.back().site;
  s.insert(s.end(), {BALLARUS_TRACE_EVENT_END,
                     static_cast<uint32_t>(m.stack.size()), site});
  return s;
}

TEST(TraceRt, ExecWritesTheTraceFirst) {
  std::vector<uint32_t> want = StreamWithEnd("exec_plain");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("exec");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_exec", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], want) << spec;
    EXPECT_EQ(CheckStream(t, want).error, "") << spec;
  }
}

TEST(TraceRt, VforkChildsExecLeavesTheParentsTrace) {
  // The child shares the parent's memory: its __ballarus_trace_exec must
  // neither write a kEnd into the parent's chunk nor finish the file.
  // 3000 steps, vfork + exec, 3000 more and the parent's own exec = the
  // stream of 6000 steps and one kEnd.
  std::vector<uint32_t> s = StreamWithEnd("vfork_plain", "6000");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("vfork");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_vfork", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], s) << spec;
    EXPECT_EQ(CheckStream(t, s).error, "") << spec;
  }
}

TEST(TraceRt, FailedExecContinuesUntraced) {
  // The trace ends at the first exec's kEnd; the steps after the failed
  // exec and the second exec's kEnd are not written.
  std::vector<uint32_t> want = StreamWithEnd("execfail_plain");
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("execfail");
    EXPECT_EQ(RunProg(dir, spec, {"hooks_execfail", "3000", "5"}), 0) << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    EXPECT_EQ(t.witnesses[1], want) << spec;
  }
}

}  // namespace
}  // namespace trace_rt_test
