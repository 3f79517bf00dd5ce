// trace_rt_read_test.cc — a traced program and a traced library sharing
// one trace file, the METADATA records of every TU (testdata/rt_test_tus.h)
// and trace_read.c's checks of files written here by hand: checkpoints,
// seq, serials, POSITION, FAULT, metadata bytes and damage.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/testdata/rt_test_tus.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "runtime/trace_rt_test_util.h"

namespace trace_rt_test {
namespace {

// Runs NAME ARGS in DIR with BALLARUS_TRACE=SPEC,
// BALLARUS_TRACE_FILE=DIR/trace and BALLARUS_PROFILE=DIR/p.profile;
// returns the wait status.
int RunTraced(const std::string& dir, const std::string& name,
              const std::string& spec, std::vector<std::string> args) {
  std::string prog = Runfile(name);
  args.insert(args.begin(), prog);
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::string e = dir + "/stderr";
    std::string path = dir + "/trace";
    std::string profile = dir + "/p.profile";
    if (!freopen(e.c_str(), "w", stderr) || chdir(dir.c_str()) != 0 ||
        setenv("BALLARUS_TRACE", spec.c_str(), 1) != 0 ||
        setenv("BALLARUS_TRACE_FILE", path.c_str(), 1) != 0 ||
        setenv("BALLARUS_PROFILE", profile.c_str(), 1) != 0 ||
        unsetenv("RT_HOME") != 0)
      _exit(126);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  return st;
}

TEST(TraceRt, ProgramAndLibraryShareOneTrace) {
  // Program and library each carry the runtime; each thread's words,
  // half written by each module in turns of 50, form one stream in
  // program order, ended by one kEnd (at exit for main, at its end for the
  // thread).
  const uint32_t n = 20000;
  const std::vector<uint32_t> end = {BALLARUS_TRACE_EVENT_END, 0, 0};
  for (const char* spec : {"full", "ring:100000"}) {
    std::string dir = FreshDir("host");
    EXPECT_EQ(RunTraced(dir, "trace_host", spec, {std::to_string(n)}), 0)
        << spec;
    EXPECT_EQ(ReadBytes(dir + "/stderr"), "") << spec;
    EXPECT_EQ(Files(dir), std::vector<std::string>{"trace"}) << spec;
    Trace t = ReadTrace(dir + "/trace");
    ASSERT_EQ(t.error, "") << spec;
    ASSERT_EQ(t.witnesses.size(), 2u) << spec;
    for (uint32_t k = 0; k < 2; k++) {
      std::vector<uint32_t> want = Seq(k, 0, n);
      want.insert(want.end(), end.begin(), end.end());
      EXPECT_EQ(t.witnesses[k + 1], want) << spec << " thread " << k + 1;
    }
  }
}

// The blob rt_test_tus.h's RT_DEFINE_TU(tu, body, n) builds without a
// home.
std::string TuBlob(const char* tu, const std::string& body, uint64_t n) {
  std::vector<unsigned char> b(RT_NAMES_MAX + body.size() + 64);
  b.resize(rt_make_blob(b.data(), b.size(), nullptr, tu, body.data(),
                        body.size(), n));
  return std::string(b.begin(), b.end());
}

TEST(TraceRt, TraceCarriesEveryTusMetadata) {
  // The program's two TUs' blobs are in the file as METADATA records
  // (seq 0 and 1, thread 0), whether it exits or dies of SIGSEGV, which
  // writes no profile; the stream is not disturbed.
  std::vector<std::string> want = {
      TuBlob("alpha", std::string(RT_ALPHA_BODY, sizeof RT_ALPHA_BODY - 1),
             RT_ALPHA_N),
      TuBlob("beta", RT_BETA_BODY, RT_BETA_N)};
  std::sort(want.begin(), want.end());
  ASSERT_GT(want[0].size(), sizeof(ballarus_meta_header));
  for (const char* spec : {"full", "ring:1000"})
    for (const char* cmd : {"ok", "segv"}) {
      std::string what = std::string(spec) + " " + cmd;
      std::string dir = FreshDir("meta");
      int st = RunTraced(dir, "trace_meta_prog", spec, {cmd, "20000"});
      if (strcmp(cmd, "ok") == 0)
        EXPECT_EQ(st, 0) << what;
      else
        EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) << what;
      EXPECT_EQ(ReadBytes(dir + "/stderr"), "") << what;
      Trace t = ReadTrace(dir + "/trace");
      ASSERT_EQ(t.error, "") << what;
      std::vector<std::string> got = t.metadata;
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << what;
      ASSERT_EQ(t.records[0].size(), 2u) << what;
      for (uint32_t k = 0; k < 2; k++) {
        EXPECT_EQ(t.records[0][k].kind, BALLARUS_TRACE_METADATA) << what;
        EXPECT_EQ(t.records[0][k].seq, k) << what;
      }
      std::vector<uint32_t> stream = Seq(0, 0, 20000);
      if (strcmp(cmd, "ok") == 0)
        stream.insert(stream.end(), {BALLARUS_TRACE_EVENT_END, 0, 0});
      const std::vector<uint32_t>& w = t.witnesses[1];
      ASSERT_LE(w.size(), stream.size()) << what;
      EXPECT_TRUE(std::equal(w.begin(), w.end(), stream.end() - w.size()))
          << what;
      EXPECT_EQ(w.size() == stream.size(), strcmp(spec, "full") == 0) << what;
    }
}

// A trace file made here: the file header of `version`, then records
// {kind, seq, words, total} of thread 1 (METADATA: of thread 0, the words
// its bytes).
struct HandRecord {
  uint32_t kind, seq;
  std::vector<uint32_t> words;
  uint64_t total;
};

std::string HandFile(uint32_t version, const std::vector<HandRecord>& recs) {
  std::string out;
  auto put = [&out](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  ballarus_trace_file_header fh{};
  memcpy(fh.magic, BALLARUS_TRACE_MAGIC, 8);
  fh.version = version;
  fh.header_size = sizeof fh;
  fh.mode = BALLARUS_TRACE_MODE_RING;
  fh.ring_n = 10;
  put(&fh, sizeof fh);
  for (const HandRecord& r : recs) {
    std::string payload;
    uint32_t prev = 0;
    bool meta = r.kind == BALLARUS_TRACE_METADATA;  // words: its bytes
    for (uint32_t w : r.words) {
      if (meta) {
        payload.push_back(static_cast<char>(w));
        continue;
      }
      uint32_t d = w - prev, z = (d << 1) ^ (0u - (d >> 31));
      prev = w;
      do {
        payload.push_back(
            static_cast<char>((z & 0x7f) | (z > 0x7f ? 0x80 : 0)));
        z >>= 7;
      } while (z);
    }
    ballarus_trace_record_header h{};
    h.magic = BALLARUS_TRACE_RECORD_MAGIC;
    h.kind = r.kind;
    h.thread = meta ? 0 : 1;
    h.seq = r.seq;
    h.count = static_cast<uint32_t>(r.words.size());
    h.bytes = static_cast<uint32_t>(payload.size());
    h.total = r.total;
    put(&h, sizeof h);
    out += payload;
    uint32_t fnv = 2166136261u;
    for (unsigned char ch : payload) fnv = (fnv ^ ch) * 16777619u;
    put(&fnv, 4);
  }
  return out;
}

std::string ReadError(const std::string& data) {
  ballarus_trace_file_header h;
  char err[256] = "";
  Trace sink;
  if (ballarus_trace_read(data.data(), data.size(), &h, Collect, &sink, err,
                          sizeof err) == 0)
    return "";
  return err;
}

TEST(TraceRt, ReaderChecksCheckpointsAndSeq) {
  const uint32_t kU = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  const uint32_t kCp = BALLARUS_TRACE_CHECKPOINT, kRing = BALLARUS_TRACE_RING;
  // D = 1: one frame (fn 3, stamp 9, site 4); then 3 words.
  std::vector<HandRecord> good = {{kCp, 0, {1, 3, 9, 4}, 7},
                                  {kRing, 1, {5, 6, 1}, 10},
                                  {kCp, 2, {kU}, 10},
                                  {kRing, 3, {8}, 11}};
  EXPECT_EQ(ReadError(HandFile(2, good)), "");
  EXPECT_EQ(ReadError(HandFile(1, good)),
            "trace file version 1: this reader reads versions 2 to 3 (trace "
            "the program again with this ballarus)");
  EXPECT_EQ(ReadError(HandFile(4, good)),
            "trace file version 4: this reader reads versions 2 to 3 (trace "
            "the program again with this ballarus)");
  auto with = [&good](size_t i, HandRecord r) {
    std::vector<HandRecord> v = good;
    v[i] = r;
    return HandFile(2, v);
  };
  size_t third = sizeof(ballarus_trace_file_header) + 40 + 4 + 4 + 40 + 3 + 4;
  std::string at_third = "bad trace record at byte " + std::to_string(third);
  // D = 1 with two frames' words, D = 2 with one, unknown with a frame,
  // an empty checkpoint: all refused at their record.
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {1, 3, 9, 4, 5, 6, 7}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {2, 3, 9, 4}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {kU, 3, 9, 4}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 2, {}, 10})), at_third);
  // seq counts every kind: a gap or a repeat is refused.
  EXPECT_EQ(ReadError(with(2, {kCp, 3, {kU}, 10})), at_third);
  EXPECT_EQ(ReadError(with(2, {kCp, 1, {kU}, 10})), at_third);
}

TEST(TraceRt, ReaderTakesAnySerial) {
  // A thread's serial costs the reader one slot, whatever its value (it
  // once grew an array to it: 8 GiB for 2^31); seq still checked per
  // thread.
  const HandRecord ring = {BALLARUS_TRACE_RING, 0, {5, 6, 1}, 3};
  std::string f = HandFile(3, {ring});
  const uint32_t serial = 0x80000003u;
  memcpy(&f[sizeof(ballarus_trace_file_header) + 8], &serial, 4);
  EXPECT_EQ(ReadError(f), "");
  std::string twice = f + f.substr(sizeof(ballarus_trace_file_header));
  EXPECT_NE(ReadError(twice), "");  // seq 0 twice
}

TEST(TraceRt, ReaderChecksPositionAndFault) {
  const uint32_t kU = BALLARUS_TRACE_CHECKPOINT_UNKNOWN;
  const uint32_t kP = BALLARUS_TRACE_POSITION, kF = BALLARUS_TRACE_FAULT;
  const HandRecord ring = {BALLARUS_TRACE_RING, 0, {5, 6, 1}, 3};
  // SIGSEGV, SEGV_MAPERR at 0, pc 0x1234, offset 0x234, path "/a/bc" (5
  // bytes: 2 words).
  const std::vector<uint32_t> fault = {11, 1, 0, 0, 0x1234, 0, 0x234, 0,
                                       5, 0x632f612f, 0x62};
  auto file = [&](uint32_t version, HandRecord p, HandRecord f) {
    return HandFile(version, {ring, p, f});
  };
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            "");
  EXPECT_EQ(ReadError(file(3, {kP, 1, {kU}, 3}, {kF, 2, fault, 3})), "");
  size_t second = sizeof(ballarus_trace_file_header) + 40 + 3 + 4;
  size_t third = second + 40 + 4 + 4;
  const std::string at_second =
      "bad trace record at byte " + std::to_string(second);
  const std::string at_third =
      "bad trace record at byte " + std::to_string(third);
  // Not in version 2; a position's frames as a checkpoint's; a fault's
  // path length must fill its words exactly.
  EXPECT_EQ(ReadError(file(2, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            at_second);
  EXPECT_EQ(ReadError(file(3, {kP, 1, {2, 3, 9, 4}, 3}, {kF, 2, fault, 3})),
            at_second);
  std::vector<uint32_t> bad = fault;
  bad[8] = 9;
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, bad, 3})),
            at_third);
  bad = {11, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(ReadError(file(3, {kP, 1, {1, 3, 9, 4}, 3}, {kF, 2, bad, 3})),
            at_third);
}

TEST(TraceRt, ReaderPassesMetadataBytesAndChecksThem) {
  const uint32_t M = BALLARUS_TRACE_METADATA, C = BALLARUS_TRACE_CHECKPOINT,
                 R = BALLARUS_TRACE_RING;
  std::vector<HandRecord> recs = {{M, 0, {1, 0x80, 255}, 0},
                                  {C, 0, {0}, 0},
                                  {R, 1, {5, 6}, 2},
                                  {M, 1, {9}, 0}};
  std::string f = HandFile(BALLARUS_TRACE_VERSION, recs);
  ballarus_trace_file_header fh;
  Trace t;
  char err[256] = "";
  ASSERT_EQ(ballarus_trace_read(f.data(), f.size(), &fh, Collect, &t, err,
                                sizeof err),
            0)
      << err;
  EXPECT_EQ(t.metadata,
            (std::vector<std::string>{std::string("\x01\x80\xff"), "\x09"}));
  EXPECT_EQ(t.witnesses[1], (std::vector<uint32_t>{5, 6}));
  // Refused: a gap in the METADATA records' seq, a total, an empty one, a
  // count that is not the byte count.
  std::vector<std::vector<HandRecord>> bad = {
      {{M, 1, {1}, 0}}, {{M, 0, {1}, 3}}, {{M, 0, {}, 0}}};
  for (size_t i = 0; i < bad.size(); i++) {
    std::string g = HandFile(BALLARUS_TRACE_VERSION, bad[i]);
    EXPECT_NE(ballarus_trace_read(g.data(), g.size(), &fh, Collect, &t, err,
                                  sizeof err),
              0)
        << i;
  }
  uint32_t two = 2;
  memcpy(&f[sizeof fh + offsetof(ballarus_trace_record_header, count)], &two,
         4);
  EXPECT_NE(ballarus_trace_read(f.data(), f.size(), &fh, Collect, &t, err,
                                sizeof err),
            0);
}

TEST(TraceRt, ReaderRejectsDamage) {
  std::string dir = FreshDir("damage");
  ASSERT_EQ(RunProg(dir, "full", {"seq", "10000"}), 0);
  std::string data = ReadBytes(dir + "/trace");
  ballarus_trace_file_header h;
  char err[256];
  Trace sink;
  for (size_t at : {size_t{0}, size_t{50}, size_t{200}, data.size() - 1}) {
    std::string bad = data;
    bad[at] ^= 0x10;
    EXPECT_EQ(ballarus_trace_read(bad.data(), bad.size(), &h, Collect, &sink,
                                  err, sizeof err),
              -1)
        << at;
  }
  EXPECT_EQ(ballarus_trace_read(data.data(), data.size() - 3, &h, Collect,
                                &sink, err, sizeof err),
            -1);
}

}  // namespace
}  // namespace trace_rt_test
