// entry_calls_test.cc — a function's entry count taken from its callers'
// call blocks (core/entry_calls.h) on hand-made graphs: the spanning tree
// places one counter fewer, the reader solves the caller first and the
// callee from the sum of its call blocks, exactly, with one activation of
// the callee cut short by exit() in the caller's loop; the extension's
// bytes and the metadata checks across the TU (a call block that re-entries
// after fork resume is refused).
#include "core/entry_calls.h"

#include <string>
#include <vector>

#include "core/flow.h"
#include "core/gcov_arcs.h"
#include "core/metadata.h"
#include "core/profile_reader.h"
#include "core/spanning_tree.h"
#include "core/test_metadata.h"
#include "core/test_profiles.h"
#include "core/trace_ids.h"
#include "gtest/gtest.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

using metadata_testing::DecodeError;
using metadata_testing::Varints;

constexpr uint32_t kT = kEdgeTrue, kF = kEdgeFalse, kFake = kEdgeFake;

// g(n): for (i = 0; i < n; i++) f(...) [block 4]; f(...) [block 5].
//   blocks 2 {entry} 3 {i < n?} 4 {call f} 5 {call f} ; the calls may not
//   return: fake edges 4->EXIT and 5->EXIT.
//   edges 0:0->2 1:2->3 2:3->4(T) 3:3->5(F) 4:4->3 5:4->1(fake) 6:5->1
//         7:5->1(fake)
// The run: g(3) whole, then g(3) whose third call of f exits.
Function Caller() {
  return TestFunction("g", 10, 6,
                      {{0, 2, 0}, {2, 3, 0}, {3, 4, kT}, {3, 5, kF},
                       {4, 3, 0}, {4, 1, kFake}, {5, 1, 0}, {5, 1, kFake}},
                      -1);
}
const std::vector<uint64_t>& CallerEdges() {
  static const std::vector<uint64_t> c = {2, 2, 6, 1, 5, 1, 1, 0};
  return c;
}

// f(x): if (x) { may exit [block 3] } return [block 4].
//   edges 0:0->2 1:2->3(T) 2:2->4(F) 3:3->4 4:3->1(fake) 5:4->1
// The run: 7 calls (6 from block 4, 1 from block 5), 4 take the branch,
// one of them exits.
Function Callee() {
  return TestFunction("f", 30, 5,
                      {{0, 2, 0}, {2, 3, kT}, {2, 4, kF}, {3, 4, 0},
                       {3, 1, kFake}, {4, 1, 0}},
                      -1);
}
const std::vector<uint64_t>& CalleeEdges() {
  static const std::vector<uint64_t> c = {7, 4, 3, 3, 1, 6};
  return c;
}

// Counters on the chords of each function's maximum spanning tree (the
// callee's entry edge known), numbered from *next; their values from the
// run.  Returns the tree.
SpanningTree PlaceCounters(Function* f, const std::vector<uint64_t>& run,
                           const std::vector<size_t>& known,
                           std::vector<uint64_t>* counters) {
  const SpanningTree t =
      MaximumSpanningTree(*f, std::vector<uint64_t>(f->edges.size(), 1), known);
  for (size_t i : t.chords) {
    f->edges[i].counter = static_cast<int64_t>(counters->size());
    counters->push_back(run[i]);
  }
  return t;
}

// The TU: the callee first (index 0), so reading must reorder.
TestRecord CallTu(bool with_entry_calls, bool caller_counted = true) {
  TestRecord r;
  r.tu.source = "calls.c";
  r.tu.cwd = "/src";
  r.tu.compiler = "gcc 12.2.0";
  r.tu.flags = BALLARUS_META_F_EDGE;
  r.tu.files = {"calls.c"};
  Function f = Callee(), g = Caller();
  if (caller_counted) PlaceCounters(&g, CallerEdges(), {}, &r.counters);
  const std::vector<size_t> known = {0};
  PlaceCounters(&f, CalleeEdges(), with_entry_calls ? known
                                                    : std::vector<size_t>(),
                &r.counters);
  if (with_entry_calls) {
    EntryCalls ec;
    ec.edge = 0;
    ec.calls = {{1, 4}, {1, 5}};
    f.extensions.push_back({kEntryCallsExtensionTag, EncodeEntryCalls(ec)});
  }
  r.tu.functions = {f, g};
  return r;
}

std::vector<Count> Counts(const std::vector<uint64_t>& v) {
  return std::vector<Count>(v.begin(), v.end());
}

TEST(EntryCalls, TheKnownEntryEdgeSavesACounter) {
  std::vector<uint64_t> with, without;
  Function a = Callee(), b = Callee();
  const SpanningTree t = PlaceCounters(&a, CalleeEdges(), {0}, &with);
  PlaceCounters(&b, CalleeEdges(), {}, &without);
  // |E| - |V| + 1 with the virtual edge: 7 - 5 + 1 = 3, one of them known.
  EXPECT_EQ(without.size(), 3u);
  EXPECT_EQ(with.size(), 2u);
  EXPECT_EQ(t.known_chords, std::vector<size_t>{0});
  EXPECT_FALSE(t.in_tree[0]);
  // The counters and the known entry count determine every count.
  std::vector<Count> known = KnownFromCounters(a, with.data(), with.size());
  known[0] = 7;
  const FlowResult r = SolveFlow(a, known);
  EXPECT_EQ(r.edges, Counts(CalleeEdges()));
  EXPECT_EQ(r.virtual_edge, Count(7));
  EXPECT_TRUE(CheckConservation(a, r).empty());
}

TEST(EntryCalls, AKnownEdgeTheTreeNeedsStaysOnIt) {
  // ENTRY's edge is the only way to block 2, which has no other edge.
  Function f = TestFunction("lone", 1, 3, {{0, 2, 0}}, -1);
  const SpanningTree t = MaximumSpanningTree(f, {1}, {0});
  EXPECT_TRUE(t.in_tree[0]);
  EXPECT_TRUE(t.known_chords.empty());
  EXPECT_TRUE(t.chords.empty());
}

TEST(EntryCalls, TheCalleeIsSolvedFromItsCallersCallBlocks) {
  const TestRecord r = CallTu(true);
  const std::string path = WriteTestProfile("calls.profile", {r});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  const LoadedTu& lt = p.tus.at(0);
  const FunctionCopy& f = lt.copies.at(0);
  const FunctionCopy& g = lt.copies.at(1);
  EXPECT_EQ(g.flow.edges, Counts(CallerEdges()));
  EXPECT_FALSE(g.entry_from_calls);
  ASSERT_TRUE(f.entry_from_calls);
  EXPECT_EQ(*f.entry_from_calls, 0u);
  EXPECT_EQ(f.known[0], Count(7));  // block 4 ran 6 times, block 5 once
  EXPECT_TRUE(f.entry_problem.empty()) << f.entry_problem;
  EXPECT_EQ(f.flow.edges, Counts(CalleeEdges()));
  EXPECT_TRUE(CheckConservation(lt.tu.functions[0], f.flow).empty());
  EXPECT_TRUE(f.flow.negatives.empty());
}

TEST(EntryCalls, WithoutTheExtensionTheEntryIsUnknown) {
  // The same counters, the extension dropped: the callee's counts are no
  // longer determined (its entry needs a counter or its calls).
  TestRecord r = CallTu(true);
  r.tu.functions[0].extensions.clear();
  const std::string path = WriteTestProfile("nocalls.profile", {r});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  const FunctionCopy& f = p.tus.at(0).copies.at(0);
  EXPECT_FALSE(f.entry_from_calls);
  EXPECT_FALSE(f.flow.edges[0]);
  EXPECT_FALSE(CheckConservation(p.tus[0].tu.functions[0], f.flow).empty());
}

TEST(EntryCalls, ACallerBlockOfUnknownCountIsNamed) {
  // The caller has no counters: its blocks are unknown, so is the entry.
  const TestRecord r = CallTu(true, /*caller_counted=*/false);
  const std::string path = WriteTestProfile("unknown.profile", {r});
  ProfileRecords p;
  std::string err;
  ASSERT_TRUE(ReadProfile(path, &p, &err)) << err;
  const FunctionCopy& f = p.tus.at(0).copies.at(0);
  EXPECT_FALSE(f.known[0]);
  EXPECT_EQ(f.entry_problem,
            "the entry count comes from the calls in function 'g', whose "
            "block 4 count is unknown");
}

// A function's extensions are told apart by tag alone: the entry calls'
// must be no other extension's (a trace plan read as entry calls made
// every traced TU's metadata invalid).
TEST(EntryCalls, TheTagIsNoOtherExtensionsTag) {
  for (uint32_t other : {kPathExtensionTag, kGcovExtensionTag,
                         kGcovUnitExtensionTag, kGcovReportExtensionTag,
                         kTracePlanExtensionTag})
    EXPECT_NE(kEntryCallsExtensionTag, other);
}

TEST(EntryCalls, BytesRoundTripAndBadBytesAreRefused) {
  EntryCalls ec;
  ec.edge = 3;
  ec.calls = {{1, 4}, {1, 4}, {2, 7}};  // a block calling twice: twice
  EntryCalls back;
  std::string err;
  ASSERT_TRUE(DecodeEntryCalls(EncodeEntryCalls(ec), &back, &err)) << err;
  EXPECT_EQ(back, ec);
  EXPECT_FALSE(DecodeEntryCalls(Varints({0, 0}), &back, &err));
  EXPECT_EQ(err, "entry calls: byte 1: no calls");
  EXPECT_FALSE(DecodeEntryCalls(Varints({0, 2, 2, 4, 1, 9}), &back, &err));
  EXPECT_EQ(err, "entry calls: byte 4: calls not ascending");
  EXPECT_FALSE(DecodeEntryCalls(Varints({0, 1, 2, 4, 0}), &back, &err));
  EXPECT_EQ(err, "entry calls: byte 4: trailing bytes");
}

// The TU with the callee's extension replaced.
TranslationUnit TuWith(const EntryCalls& ec,
                       uint32_t flags = BALLARUS_META_F_EDGE) {
  TestRecord r = CallTu(true);
  r.tu.flags = flags;
  r.tu.n_counters = r.counters.size();
  r.tu.functions[0].extensions = {
      Extension{kEntryCallsExtensionTag, EncodeEntryCalls(ec)}};
  return r.tu;
}
std::string ErrorWith(const EntryCalls& ec,
                      uint32_t flags = BALLARUS_META_F_EDGE) {
  return DecodeError(TuWith(ec, flags));
}

TEST(EntryCalls, MetadataChecksTheCallsAcrossTheTu) {
  EntryCalls ok;
  ok.calls = {{1, 4}, {1, 5}};
  const std::vector<uint8_t> blob = EncodeMetadata(TuWith(ok));
  TranslationUnit back;
  const DecodeResult res = DecodeMetadata(blob.data(), blob.size(), &back);
  EXPECT_TRUE(res.ok) << res.error;
  EntryCalls bad = ok;
  bad.edge = 1;
  EXPECT_NE(ErrorWith(bad).find("edge 1 is not the function's one real "
                                "ENTRY edge"),
            std::string::npos);
  EXPECT_NE(ErrorWith(ok, BALLARUS_META_F_NAIVE)
                .find("entry calls in a build without edge mode"),
            std::string::npos);
  bad = ok;
  bad.calls = {{0, 2}};
  EXPECT_NE(ErrorWith(bad).find("entry calls names function 0, itself"),
            std::string::npos);
  bad.calls = {{2, 2}};
  EXPECT_NE(ErrorWith(bad).find("entry calls names function 2, not another "
                                "function of the TU"),
            std::string::npos);
  bad.calls = {{1, 6}};
  EXPECT_NE(ErrorWith(bad).find("entry calls names block 6 of function 'g'"),
            std::string::npos);
  // g's block 4 resumed after a fork in its call (a re-entry edge into
  // it): its entries do not all run the call.
  {
    TranslationUnit tu = TuWith(ok);
    Function& g = tu.functions[1];
    g.edges.insert(g.edges.begin() + 1, Edge{kEntryBlock, 4, kEdgeReentry,
                                             kNoCounter});
    EXPECT_NE(DecodeError(tu).find("entry calls names block 4 of function "
                                   "'g', which re-entries resume"),
              std::string::npos)
        << DecodeError(tu);
    g.edges[1].flags |= kEdgeFake;  // a setjmp's second return: allowed
    const std::vector<uint8_t> b = EncodeMetadata(tu);
    TranslationUnit t;
    EXPECT_TRUE(DecodeMetadata(b.data(), b.size(), &t).ok);
  }
  // g's entry from f's block 3 and f's from g's: a cycle.
  TestRecord r = CallTu(true);
  r.tu.n_counters = r.counters.size();
  EntryCalls loop;
  loop.edge = 0;
  loop.calls = {{0, 3}};
  Function& g = r.tu.functions[1];
  for (Edge& e : g.edges)
    if (e.src == kEntryBlock) e.counter = kNoCounter;
  g.extensions = {Extension{kEntryCallsExtensionTag, EncodeEntryCalls(loop)}};
  EXPECT_NE(DecodeError(r.tu).find("depend on one another in a cycle"),
            std::string::npos)
      << DecodeError(r.tu);
}

}  // namespace
}  // namespace ballarus
