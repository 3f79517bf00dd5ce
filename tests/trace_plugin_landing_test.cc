// trace_plugin_landing_test.cc — landings with the real GCC and the built
// plugin: exceptions thrown two traced calls deep (through a cleanup) and
// in the catching function itself, longjmp out of a traced callee and
// setjmp's first returns: kLand at the depth and with the live count the
// program implies, in mode=trace and mode=trace-naive (whose streams are
// decoded with a stack).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/trace_events.h"
#include "tests/trace_plugin_test_util.h"

namespace trace_plugin_test {
namespace {

// Thrown two traced calls deep through mid's cleanup (a destructor) for
// x > 3, i.e. i = 3, 4, 5 (argc 1), and by main itself at i = 2.
const char kExceptions[] = R"(#include <cstdio>
#include <stdexcept>
struct Count { int* n; ~Count() { ++*n; } };
__attribute__((noinline)) int leaf(int x) {
  if (x > 3) throw std::runtime_error("big");
  return x * 2;
}
__attribute__((noinline)) int mid(int x, int* cleanups) {
  Count c{cleanups};
  return leaf(x) + 1;
}
int main(int argc, char**) {
  int s = 0, cleanups = 0;
  for (int i = 0; i < 6; i++) {
    try {
      if (i == 2) throw 7;
      s += mid(i + argc, &cleanups);
    } catch (int v) { s += v; } catch (const std::exception&) { s -= 1; }
  }
  std::printf("%d %d\n", s, cleanups);
}
)";

// setjmp returns first at every iteration; g longjmps for odd i (1, 3),
// two traced calls deep.
const char kLongjmp[] = R"(#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
__attribute__((noinline)) static void g(int x) { if (x & 1) longjmp(jb, x); }
__attribute__((noinline)) static void f(int x) { g(x); }
int main(void) {
  int s = 0;
  for (int i = 0; i < 5; i++) {
    int r = setjmp(jb);
    if (r == 0) f(i); else s += r;
  }
  printf("%d\n", s);
  return 0;
}
)";

// Each kLand's (depth, live count), in stream order, and for each such
// pair the landing blocks and sites seen.
struct Landings {
  std::vector<std::pair<uint32_t, uint32_t>> order;
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> blocks, sites;
  std::map<uint32_t, std::set<uint32_t>> enter_depths;  // by function
  std::map<uint32_t, int> enters_at_depth;
};

Landings LandingsOf(const std::vector<Event>& events) {
  Landings l;
  for (const Event& e : events) {
    if (e.kind == Event::kEnter) {
      l.enter_depths[e.id].insert(e.depth);
      ++l.enters_at_depth[e.depth];
    }
    if (e.kind != Event::kLand) continue;
    const std::pair<uint32_t, uint32_t> key(e.depth, e.live);
    l.order.push_back(key);
    l.blocks[key].insert(e.id);
    l.sites[key].insert(e.site);
  }
  return l;
}

// kExceptions: main's own throw (i = 2) lands in main at depth 0 with main
// alone live; each of leaf's three throws lands first in mid's cleanup
// (depth 1; live 3: main, mid, leaf), whose resx goes on unwinding into
// main (depth 0; live 2).  One landing pad per function, one throwing site
// per kind.  mid starts at depth 1 every time (5 calls), leaf (and at -O0
// Count's destructor) at 2: without the kLands' depths the activations
// after a throw would start deeper.
void CheckExceptionLandings(const std::vector<Event>& events) {
  const Landings l = LandingsOf(events);
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(l.order, (std::vector<P>{{0, 1}, {1, 3}, {0, 2}, {1, 3}, {0, 2},
                                     {1, 3}, {0, 2}}));
  for (const auto& [key, blocks] : l.blocks) {
    EXPECT_EQ(blocks.size(), 1u) << key.first << " " << key.second;
    EXPECT_EQ(l.sites.at(key).size(), 1u) << key.first << " " << key.second;
  }
  if (l.blocks.count({0, 1}) && l.blocks.count({0, 2})) {
    EXPECT_EQ(l.blocks.at({0, 1}), l.blocks.at({0, 2})) << "main's pad";
  }
  EXPECT_EQ(l.enters_at_depth.at(0), 1);
  EXPECT_EQ(l.enters_at_depth.at(1), 5);
  for (const auto& [fn, depths] : l.enter_depths)
    EXPECT_EQ(depths.size(), 1u) << "function " << fn;
  ExpectEnd(events, 0);
}

// kLongjmp: setjmp's first return at each of the 5 iterations (depth 0,
// main alone live, in the call at the setjmp's own block), g's longjmp at
// i = 1 and 3 (depth 0; live 3: main, f, g); all in the setjmp's block.
// f starts at depth 1 and g at 2 every time.
void CheckLongjmpLandings(const std::vector<Event>& events) {
  const Landings l = LandingsOf(events);
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(l.order, (std::vector<P>{{0, 1}, {0, 1}, {0, 3}, {0, 1}, {0, 1},
                                     {0, 3}, {0, 1}}));
  ASSERT_EQ(l.blocks.size(), 2u);
  EXPECT_EQ(l.blocks.at({0, 1}), l.blocks.at({0, 3}));
  EXPECT_EQ(l.blocks.at({0, 1}).size(), 1u);
  EXPECT_EQ(l.sites.at({0, 1}), l.blocks.at({0, 1})) << "first return's site";
  EXPECT_EQ(l.sites.at({0, 3}).size(), 1u);
  EXPECT_EQ(l.enters_at_depth.at(0), 1);
  EXPECT_EQ(l.enters_at_depth.at(1), 5);
  EXPECT_EQ(l.enters_at_depth.at(2), 5);
  ExpectEnd(events, 0);
}

// The naive stream decodes with a stack; after each kLand comes the block
// where control resumed: an exception's landing pad is the kLand's block,
// after setjmp (block B) it is B's successor, the same for both returns;
// a first return's kLand follows B's own word.
void CheckNaiveLandings(const std::vector<Event>& events, bool setjmp) {
  const NaiveDecoded d = DecodeNaive(events);
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.ended);
  std::set<uint32_t> after;
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    const Event& e = events[k];
    if (e.kind != Event::kLand) continue;
    ASSERT_EQ(events[k + 1].kind, Event::kWitness) << "event " << k;
    const uint32_t next = events[k + 1].id;
    if (!setjmp) {
      EXPECT_EQ(next, e.id) << "event " << k;
      continue;
    }
    after.insert(next);
    EXPECT_NE(next, e.id) << "event " << k;
    if (e.live == 1) {
      ASSERT_GT(k, 0u);
      EXPECT_EQ(events[k - 1].kind, Event::kWitness);
      EXPECT_EQ(events[k - 1].id, e.id) << "event " << k;
    }
  }
  if (setjmp) {
    EXPECT_EQ(after.size(), 1u);
  }
}

TEST_F(TracePluginTest, ExceptionsLandAtTheirDepth) {
  for (const char* mode : {"trace", "trace-naive"})
    for (const char* opt : {"-O0", "-O2"}) {
      SCOPED_TRACE(std::string(mode) + " " + opt);
      const std::vector<Event> events = RunBoth(
          "g++", "ex.cc", kExceptions,
          std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode);
      CheckExceptionLandings(events);
      if (std::string(mode) == "trace-naive") CheckNaiveLandings(events, false);
    }
}

TEST_F(TracePluginTest, LongjmpAndSetjmpLand) {
  for (const char* mode : {"trace", "trace-naive"})
    for (const char* opt : {"-O0", "-O2"}) {
      SCOPED_TRACE(std::string(mode) + " " + opt);
      const std::vector<Event> events = RunBoth(
          "gcc", "sj.c", kLongjmp,
          std::string(opt) + " -fplugin-arg-ballarus-mode=" + mode);
      CheckLongjmpLandings(events);
      if (std::string(mode) == "trace-naive") CheckNaiveLandings(events, true);
    }
}

}  // namespace
}  // namespace trace_plugin_test
