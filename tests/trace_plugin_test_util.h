// trace_plugin_test_util.h — what the tests of mode=trace with the real
// GCC share (trace_plugin_test.cc, trace_plugin_landing_test.cc): trace
// files read back as words and events, a mode=trace-naive stream decoded
// with a stack alone, and the fixture that builds a program plain and
// with the plugin and runs both.
#ifndef BALLARUS_TESTS_TRACE_PLUGIN_TEST_UTIL_H_
#define BALLARUS_TESTS_TRACE_PLUGIN_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "tests/harness.h"

namespace trace_plugin_test {

using harness::Quote;
using harness::Run;

// The program the fixture writes as prog.c: a loop calling classify.
const char kProgram[] = R"(#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int classify(int x) {
  if (x % 3 == 0) return 0;
  else if (x % 3 == 1) return 1;
  return 2;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  int sums[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) sums[classify(i)] += i;
  printf("%d %d %d\n", sums[0], sums[1], sums[2]);
  return 0;
}
)";

// Each thread's words, by thread serial.
// A record of a thread's words (not a checkpoint or a TU's metadata).
inline bool IsStreamRecord(const ballarus_trace_record_header* h) {
  return h->kind == BALLARUS_TRACE_CHUNK || h->kind == BALLARUS_TRACE_RING;
}

inline int CollectByThread(void* ctx, const ballarus_trace_record_header* h,
                           const uint32_t* w) {
  if (!IsStreamRecord(h)) return 0;
  auto* m = static_cast<std::map<uint32_t, std::vector<uint32_t>>*>(ctx);
  (*m)[h->thread].insert((*m)[h->thread].end(), w, w + h->count);
  return 0;
}

inline int Collect(void* ctx, const ballarus_trace_record_header* h,
                   const uint32_t* w) {
  if (!IsStreamRecord(h)) return 0;
  auto* words = static_cast<std::vector<uint32_t>*>(ctx);
  words->insert(words->end(), w, w + h->count);
  return 0;
}

inline std::vector<uint32_t> ReadTrace(const std::string& path) {
  std::string bytes;
  std::vector<uint32_t> words;
  if (!harness::ReadFile(path, &bytes)) {
    ADD_FAILURE() << "no trace file " << path;
    return words;
  }
  ballarus_trace_file_header header;
  char err[256];
  EXPECT_EQ(ballarus_trace_read(bytes.data(), bytes.size(), &header, Collect,
                                &words, err, sizeof err),
            0)
      << err;
  return words;
}

// One event of a stream (runtime/trace_events.h).
struct Event {
  enum Kind { kWitness, kEnter, kLand, kEnd } kind = kWitness;
  uint32_t id = 0;  // witness (naive: block), function index, landing block
  uint32_t depth = 0, site = 0, live = 0;
};

inline std::vector<Event> Events(const std::vector<uint32_t>& w) {
  std::vector<Event> out;
  for (size_t i = 0; i < w.size();) {
    Event e;
    size_t n = 1;
    if (w[i] == BALLARUS_TRACE_EVENT_END) {
      e.kind = Event::kEnd, n = BALLARUS_TRACE_END_WORDS;
    } else if (w[i] == BALLARUS_TRACE_EVENT_LAND) {
      e.kind = Event::kLand, n = BALLARUS_TRACE_LAND_WORDS;
    } else if (w[i] & BALLARUS_TRACE_EVENT_TAG) {
      e.kind = Event::kEnter, n = BALLARUS_TRACE_ENTER_WORDS;
    }
    if (w.size() - i < n) {
      ADD_FAILURE() << "event cut at word " << i;
      break;
    }
    if (e.kind == Event::kWitness) e.id = w[i];
    if (e.kind == Event::kEnter)
      e.id = w[i] & ~BALLARUS_TRACE_EVENT_TAG, e.depth = w[i + 2],
      e.site = w[i + 3];
    if (e.kind == Event::kLand)
      e.id = w[i + 1], e.depth = w[i + 2], e.site = w[i + 3],
      e.live = w[i + 4];
    if (e.kind == Event::kEnd) e.depth = w[i + 1], e.site = w[i + 2];
    out.push_back(e);
    i += n;
  }
  return out;
}

// A mode=trace-naive stream decoded with a stack alone: kEnter pushes its
// function (whose ENTRY, 0, is a step), a block word is a step of the
// innermost activation and 1 (EXIT) pops it, kLand abandons the
// activations deeper than its depth.  Every kEnter's depth, kLand's live
// count and kEnd's depth must be the stack's height: `error` says where
// one is not.
struct Step {
  uint32_t fn = 0, block = 0;
  bool operator==(const Step& o) const {
    return fn == o.fn && block == o.block;
  }
};
inline std::ostream& operator<<(std::ostream& os, const Step& s) {
  return os << "(" << s.fn << ", " << s.block << ")";
}

struct NaiveDecoded {
  std::vector<Step> steps;
  bool ended = false;
  std::string error;
};

inline NaiveDecoded DecodeNaive(const std::vector<Event>& events) {
  NaiveDecoded d;
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < events.size() && d.error.empty(); ++k) {
    const Event& e = events[k];
    const std::string at = "event " + std::to_string(k) + ": ";
    if (d.ended) {
      d.error = at + "after kEnd";
    } else if (e.kind == Event::kEnter) {
      if (e.depth != stack.size()) d.error = at + "kEnter's depth";
      stack.push_back(e.id);
      d.steps.push_back({e.id, 0});
    } else if (e.kind == Event::kWitness) {
      if (stack.empty()) {
        d.error = at + "a block outside any activation";
        break;
      }
      d.steps.push_back({stack.back(), e.id});
      if (e.id == 1) stack.pop_back();
    } else if (e.kind == Event::kLand) {
      if (e.live != stack.size()) d.error = at + "kLand's live count";
      if (e.depth >= stack.size()) d.error = at + "kLand's depth";
      stack.resize(e.depth + 1);
    } else {
      if (e.depth != stack.size()) d.error = at + "kEnd's depth";
      d.ended = true;
    }
  }
  return d;
}

class TracePluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = harness::TempRoot() + "/trace_plugin";
    harness::MakeFreshDir(dir_);
    harness::WriteFileOrDie(dir_ + "/prog.c", kProgram);
  }
  // Builds prog.c into `exe` with `flags`; the runtime is linked with the
  // plugin.
  void Build(const std::string& exe, const std::string& flags,
             const std::string& compiler = "gcc",
             const std::string& source = "prog.c") {
    const std::string rf = harness::Runfiles();
    const std::string plugin =
        flags.empty() ? ""
                      : "-fplugin=" + Quote(rf + "/plugin/ballarus.so") + " " +
                            flags + " ";
    const std::string rt =
        flags.empty() ? "" : Quote(rf + "/runtime/archive/libballarus_rt.a");
    auto r = harness::Run(compiler + " " + plugin + source + " " + rt + " -lpthread -o " + exe,
                 dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // Writes `text` to `source`, builds it plain and with `flags`, runs both
  // with `args`: the same output and status; the traced run's events.
  std::vector<Event> RunBoth(const std::string& compiler,
                             const std::string& source, const char* text,
                             const std::string& flags,
                             const std::string& args = "") {
    harness::WriteFileOrDie(dir_ + "/" + source, text);
    Build("plain", "", compiler, source);
    Build("traced", flags, compiler, source);
    if (HasFatalFailure()) return {};
    auto plain = harness::Run("./plain" + args, dir_);
    auto traced = harness::Run(
        "./traced" + args, dir_,
        {"BALLARUS_TRACE=full", "BALLARUS_TRACE_FILE=" + dir_ + "/t.trace"});
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.status, plain.status);
    EXPECT_EQ(traced.err, plain.err);
    return Events(ReadTrace(dir_ + "/t.trace"));
  }
  std::string dir_;
};

// The stream ends with kEnd at `depth`.
inline void ExpectEnd(const std::vector<Event>& events, uint32_t depth) {
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, Event::kEnd);
  EXPECT_EQ(events.back().depth, depth);
}

}  // namespace trace_plugin_test

#endif  // BALLARUS_TESTS_TRACE_PLUGIN_TEST_UTIL_H_
