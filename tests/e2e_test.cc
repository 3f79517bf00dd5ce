// e2e_test.cc — end-to-end tests of ballarus' naive mode against gcov.
//
// Installs ballarus with //:install into $TEST_TMPDIR/prefix (which tests
// the installer too), then, for every program of tests/programs/MANIFEST at
// -O0 and -O2, builds it three ways — plain gcc/g++, gcov
// (-fprofile-arcs -ftest-coverage) and the installed ballarus-gcc/g++ in
// naive mode — runs each in its own directory, and checks:
//
//   * stdout and exit status of the gcov and ballarus builds equal the plain
//     build's (instrumentation must not change behaviour);
//   * `ballarus-reconstruct verify` exits 0;
//   * `ballarus-reconstruct show --json`, function by function against the
//     gcov oracle (tests/gcov_oracle.h; matched by assembler name,
//     cfg_checksum and translation unit): execution count, block count, the
//     arc list (src, dst) in .gcno order, and every arc count;
//   * line counts: summed over functions and TUs, ballarus' line_counts equal
//     gcov's own `gcov --json-format` line counts, line for line;
//   * at -O0, every `/* count(N) */` annotation holds for gcov and ballarus.
//   * edge mode reconstructs the naive profile exactly with |E|-|V|+1
//     counters per function (|E|-|V| where the callers' call blocks give
//     the entry count);
//   * path mode (Ball-Larus): mode=edge,path verifies its path-derived edge
//     profile against its own edge counters; mode=path alone derives an
//     edge profile equal to the naive one (also via `verify --against`),
//     exit/longjmp/exception programs included.
//
// Plus: the 4-thread program's exact counts with update=atomic, with the
// default under -pthread and from path counts alone; damaged profiles are rejected with exit 2 and one
// line naming the file; and two compiles of one source give identical
// objects.
//
// Legitimate differences from gcov are listed in ONE place, `Expectation`
// below, each with its reason; nothing else is tolerated.
//
// On mismatch the failure message is a readable diff:
//   loops -O2: function 'mix' (loops): arc 3->5: ballarus 12, gcov 13
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reconstruct/gcov_oracle.h"
#include "tests/harness.h"
#include "tests/harness_gtest.h"

namespace {

using harness::Build;
using harness::BuildOptions;
using harness::CommandResult;
using harness::Kind;
using harness::Program;
using harness::Quote;
using nlohmann::json;

// ---------------------------------------------------------------------------
// Installation (once per test binary).

using harness::InstallPrefix;

std::string Reconstruct() { return InstallPrefix() + "/bin/ballarus-reconstruct"; }

const Program* FindProgram(const std::string& name) {
  static const std::vector<Program> programs = harness::LoadManifestOrDie();
  for (const Program& p : programs)
    if (p.name == name) return &p;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Documented, legitimate differences from gcov.  Each entry names the
// program and function it applies to; the comparison consults it and
// nothing else is tolerated.

struct Expectation {
  std::string program;   // "" = any
  std::string function;  // assembler name, "" = any
  std::string opt;       // "" = any
  enum What {
    // gcov's arc counts of this function are not a circulation: GCC 12
    // writes no fake ENTRY arc for a setjmp receiver re-entered by longjmp
    // (profile.cc adds one, then marks it ignored with the abnormal
    // edges), so solving gcov's counters gives a negative count on the fake
    // arc leaving the setjmp call (e.g. main 3->EXIT = -4 in
    // setjmp_longjmp at -O0), and gcov's block counts around it are off by
    // the number of longjmps.  Ballarus must still agree with gcov on every
    // counted (non-fake) arc and on execution counts; fake arcs are
    // exempt from the count comparison (only where gcov's is negative).
    kGcovNegativeFakeArcs,
    // A fake edge (call that may not return, setjmp receiver, noreturn
    // block) that ballarus lists but gcov's .gcno omits because it was not
    // on GCC's spanning tree (see CompareFunctions).  Fake edges never hold
    // a counter, so this changes no measured count; the remaining arcs must
    // still match gcov's one for one and in order.
    kFakeOffTree,
    // A cycle of edges without counters (a setjmp receiver with fake
    // ENTRY and fake EXIT edges, closed by the virtual EXIT->ENTRY edge)
    // must lose one edge.  GCC keeps whichever its frequency-sorted edge list
    // meets first; ballarus always keeps the fake ENTRY edges, which carry the
    // longjmp re-entries, and drops the fake EXIT edge (flagged ignored).
    // Where gcov kept the EXIT edge instead, its entry count and the
    // receiver's lines miss the re-entries: ballarus must then exceed gcov by
    // exactly `reentries` (hand-derived from the program) on the execution
    // count and on every differing line, and each side's dropped fake edge
    // is skipped in the arc comparison.
    kFakeCycleChoice,
    // A thunk (C++ this-adjusting or covariant-return): gcov instruments it
    // but records it with checksum 0 and counts only its entry arc
    // (profile.cc, branch_prob (thunk)); ballarus records and counts its
    // whole CFG.  Matched by name; the execution count must agree.
    kGcovThunk,
  } what;
  const char* why;
  int64_t reentries = 0;
};

const std::vector<Expectation>& Expectations() {
  static const std::vector<Expectation> e = {
      {"setjmp_longjmp", "main", "", Expectation::kGcovNegativeFakeArcs,
       "longjmp re-enters main's setjmp receiver without an arc gcov can see"},
      {"", "", "", Expectation::kFakeOffTree,
       "GCC drops fake edges off its spanning tree from the .gcno"},
      // main's setjmp returns 5 times: once directly, and once for each of
      // the 4 longjmps (work() throws for i = 0, 2, 4, 6: `jumps` is 4).
      {"setjmp_longjmp", "main", "-O0", Expectation::kFakeCycleChoice,
       "gcov keeps the receiver's fake EXIT edge, ballarus its fake ENTRY "
       "edge", 4},
      {"thunks", "", "", Expectation::kGcovThunk,
       "gcov records thunks with checksum 0 and their entry arc only"},
      // setjmp in main's first block (GCC's gcov-7.c): gcov drops the
      // abnormal dispatcher's fake ENTRY edge and keeps the fake EXIT
      // edges; ballarus keeps the ENTRY edge and adds its own for the
      // setjmp block (plugin/reentry.cc, not a gcov arc), so re-entries
      // are on no line and on no execution count gcov knows: 0 to add.
      {"setjmp_entry", "main", "", Expectation::kFakeCycleChoice,
       "gcov keeps the fake EXIT edges of the setjmp block and the "
       "dispatcher, ballarus the fake ENTRY edges",
       0},
      {"setjmp_entry", "main", "", Expectation::kGcovNegativeFakeArcs,
       "longjmp re-enters main's first block without an arc gcov can see"},
      // vfork returns twice (GCC treats it like setjmp): at -O0 gcov keeps
      // the fake EXIT edges of the vfork block and its dispatcher, ballarus
      // the fake ENTRY edge, which carries the parent's second return.
      {"fork_vfork", "main", "-O0", Expectation::kFakeCycleChoice,
       "gcov keeps the vfork block's fake EXIT edge, ballarus its fake "
       "ENTRY edge",
       1},
      // After fork() the child's counters restart at zero (as gcov's
      // __gcov_fork does), after __gcov_reset() everybody's: the rest of
      // an activation is counted, not its start.  gcov's solved arcs then
      // go negative on fake edges; ballarus counts the re-entries on its
      // own edges (plugin/reentry.cc) and stays a circulation.
      {"fork_vfork", "", "", Expectation::kGcovNegativeFakeArcs,
       "a forked child's return from fork() is no arc of gcov's"},
      {"gcov_api", "main", "", Expectation::kGcovNegativeFakeArcs,
       "the return from __gcov_reset() is no arc of gcov's"},
  };
  return e;
}

const Expectation* FindExpected(Expectation::What what,
                                const std::string& program,
                                const std::string& function,
                                const std::string& opt) {
  for (const Expectation& x : Expectations())
    if (x.what == what && (x.program.empty() || x.program == program) &&
        (x.function.empty() || x.function == function) &&
        (x.opt.empty() || x.opt == opt))
      return &x;
  return nullptr;
}

bool Expected(Expectation::What what, const std::string& program,
              const std::string& function, const std::string& opt) {
  return FindExpected(what, program, function, opt) != nullptr;
}

// ---------------------------------------------------------------------------
// Running and reading.

struct Outcome {
  Build build;
  std::string run_dir;
  CommandResult run;
};

Outcome BuildAndRun(const Program& p, const BuildOptions& o,
                    const std::string& root) {
  Outcome out;
  out.build = harness::BuildProgram(p, o, root + "/" + KindName(o.kind));
  out.run_dir = root + "/run-" + KindName(o.kind);
  harness::MakeFreshDir(out.run_dir);
  // Every TU pooled into one file in the run directory (ballarus-reconstruct
  // reads one profile; by default each object's profile lies beside it).
  if (out.build.ok)
    out.run = harness::Run(Quote(out.build.exe), out.run_dir,
                           {"BALLARUS_PROFILE=" + out.run_dir +
                            "/ballarus.profile"});
  return out;
}

// Builds the three kinds in parallel (two cores; compiles dominate).
std::vector<Outcome> BuildAll(const Program& p, const std::string& opt,
                              const std::string& root,
                              const std::vector<std::string>& extra = {}) {
  std::vector<Outcome> outs(3);
  std::vector<std::thread> threads;
  const Kind kinds[3] = {Kind::kPlain, Kind::kGcov, Kind::kBallarus};
  std::string prefix = InstallPrefix();
  for (int i = 0; i < 3; i++) {
    threads.emplace_back([&, i] {
      BuildOptions o;
      o.kind = kinds[i];
      o.opt = opt;
      o.extra_flags = extra;
      o.ballarus_prefix = prefix;
      outs[i] = BuildAndRun(p, o, root);
    });
  }
  for (auto& t : threads) t.join();
  return outs;
}

bool ShowJson(const std::string& profile, const std::string& cwd, json* out,
              std::string* error) {
  CommandResult r =
      harness::Run(Quote(Reconstruct()) + " show --json " + Quote(profile), cwd);
  if (r.status != 0) {
    *error = "ballarus-reconstruct show --json " + profile + " exited " +
             std::to_string(r.status) + ": " + r.err;
    return false;
  }
  try {
    *out = json::parse(r.out);
  } catch (const std::exception& e) {
    *error = std::string("show --json output is not JSON: ") + e.what();
    return false;
  }
  return true;
}

std::string Stem(const std::string& path) {
  std::string b = harness::Basename(path);
  size_t dot = b.rfind('.');
  return dot == std::string::npos ? b : b.substr(0, dot);
}

// The gcov side of one program run: every unit's oracle data and gcov JSON.
struct GcovSide {
  std::map<std::string, gcov_oracle::Unit> units;  // by unit stem
  std::map<std::pair<std::string, uint32_t>, int64_t> lines;
  std::map<std::pair<std::string, uint32_t>, bool> unexecuted;
};

bool LoadGcov(const Build& b, GcovSide* g, std::string* error) {
  for (const std::string& unit : b.units) {
    gcov_oracle::Unit u;
    if (!gcov_oracle::ReadGcno(b.dir + "/" + unit + ".gcno", &u, error) ||
        !gcov_oracle::ReadGcda(b.dir + "/" + unit + ".gcda", &u, error))
      return false;
    g->units[unit] = std::move(u);
    harness::GcovJson j;
    if (!harness::RunGcovJson(b.dir, unit, &j, error)) return false;
    for (const auto& kv : j.lines) g->lines[kv.first] += kv.second;
    for (const auto& kv : j.unexecuted) {
      bool& u = g->unexecuted[kv.first];
      u = u || kv.second;
    }
  }
  return true;
}

// Collects mismatches; prints them as one readable failure.
class Diff {
 public:
  explicit Diff(std::string context) : context_(std::move(context)) {}
  void Add(const std::string& line) {
    if (lines_.size() < 60) lines_.push_back(line);
    n_++;
  }
  int count() const { return n_; }
  void Report() const {
    if (!n_) return;
    std::ostringstream s;
    s << context_ << ": " << n_ << " mismatch(es)\n";
    for (const auto& l : lines_) s << "  " << l << "\n";
    if (n_ > int(lines_.size())) s << "  ...\n";
    ADD_FAILURE() << s.str();
  }

 private:
  std::string context_;
  std::vector<std::string> lines_;
  int n_ = 0;
};

std::string CountStr(const json& c) {
  return c.is_null() ? "null" : c.dump();
}

// Compares ballarus' functions with the oracle's; adds line totals of
// ballarus (non-artificial functions) to *ours.
void CompareFunctions(const std::string& program, const std::string& opt,
                      const json& show, const GcovSide& gcov, Diff* diff,
                      std::map<std::pair<std::string, uint32_t>, int64_t>* ours,
                      int* n_compared) {
  // Oracle functions that have data, keyed by (name, cfg_checksum).
  std::set<std::pair<std::string, std::string>> matched;  // (unit, name)
  for (const json& f : show.at("functions")) {
    const std::string name = f.at("name").get<std::string>();
    const uint32_t checksum = f.at("checksum").get<uint32_t>();
    std::set<std::string> tus;
    for (const json& t : f.at("tus")) tus.insert(Stem(t.get<std::string>()));
    // The oracle copies of this function: same name and cfg_checksum, in a
    // TU ballarus attributes it to (COMDAT copies of several TUs are summed,
    // like ballarus does).
    std::vector<const gcov_oracle::Function*> copies;
    bool artificial = false;
    for (const auto& [unit, u] : gcov.units) {
      if (!tus.count(unit)) continue;
      for (const auto& of : u.functions)
        if (of.name == name && of.cfg_checksum == checksum) {
          copies.push_back(&of);
          artificial |= of.artificial;
          matched.insert({unit, name});
        }
    }
    const std::string where = "function '" + name + "'";
    if (copies.empty() &&
        Expected(Expectation::kGcovThunk, program, "", opt)) {
      int64_t entries = 0;
      bool thunk = false;
      for (const auto& [unit, u] : gcov.units) {
        if (!tus.count(unit)) continue;
        for (const auto& of : u.functions)
          if (of.name == name && of.cfg_checksum == 0 && of.artificial) {
            thunk = true;
            matched.insert({unit, name});
            entries += of.execution_count;
          }
      }
      if (thunk) {
        (*n_compared)++;
        if (f.at("execution_count") != entries)
          diff->Add(where + " (thunk): execution count: ballarus " +
                    CountStr(f.at("execution_count")) + ", gcov " +
                    std::to_string(entries));
        continue;
      }
    }
    if (copies.empty()) {
      diff->Add(where + " (checksum " + std::to_string(checksum) +
                "): in ballarus' profile but not in gcov's notes");
      continue;
    }
    (*n_compared)++;
    if (!artificial)
      for (const json& l : f.at("line_counts"))
        if (!l.at("count").is_null())
          (*ours)[{harness::Basename(l.at("file").get<std::string>()),
                   l.at("line").get<uint32_t>()}] += l.at("count").get<int64_t>();

    // Sum the copies arc by arc; their graphs must be identical.
    const gcov_oracle::Function& first = *copies[0];
    std::vector<int64_t> arc_counts(first.arcs.size(), 0);
    int64_t exec = 0;
    bool same_graph = true;
    for (const auto* c : copies) {
      if (c->arcs.size() != first.arcs.size()) same_graph = false;
      for (size_t i = 0; same_graph && i < c->arcs.size(); i++) {
        if (c->arcs[i].src != first.arcs[i].src ||
            c->arcs[i].dst != first.arcs[i].dst)
          same_graph = false;
        else
          arc_counts[i] += c->arcs[i].count;
      }
      exec += c->execution_count;
    }
    if (!same_graph) {
      diff->Add(where + ": gcov's copies in several TUs differ in shape");
      continue;
    }
    const Expectation* cycle =
        FindExpected(Expectation::kFakeCycleChoice, program, name, opt);
    const int64_t exec_want = exec + (cycle ? cycle->reentries : 0);
    if (f.at("execution_count").is_null() ||
        f.at("execution_count").get<int64_t>() != exec_want)
      diff->Add(where + ": execution count: ballarus " +
                CountStr(f.at("execution_count")) + ", gcov " +
                std::to_string(exec));

    // Blocks: ballarus lists ids; gcov's n_blocks includes ENTRY and EXIT.
    uint32_t max_id = 1;
    for (const json& b : f.at("blocks"))
      max_id = std::max(max_id, b.at("id").get<uint32_t>());
    if (max_id + 1 != first.n_blocks)
      diff->Add(where + ": blocks: ballarus " + std::to_string(max_id + 1) +
                " (highest id + 1), gcov " + std::to_string(first.n_blocks));

    // Arcs: ballarus' edges minus those gcov does not write, in order.
    // gcov leaves out (a) abnormal edges it replaces by fake ones (ballarus
    // flags them "ignored", count null), and (b) fake edges that fell off
    // its spanning tree (profile.cc, after find_spanning_tree: "Fake edges
    // that are not on the tree will not be instrumented, so mark them
    // ignored").  (b) depends on GCC's tree, which naive mode does not
    // build, so ballarus may list fake edges the .gcno lacks: kFakeOffTree.
    std::vector<const json*> edges;
    std::vector<size_t> gcov_index;  // parallel to edges
    std::vector<std::string> skipped_fake;
    size_t next = 0;  // next gcov arc to match
    bool same_arcs = true;
    for (const json& e : f.at("edges")) {
      bool ignored = false, fake = e.value("kind", "") == "fake";
      bool reentry = false;
      if (e.contains("flags"))
        for (const json& fl : e.at("flags")) {
          ignored |= fl.get<std::string>() == "ignored";
          fake |= fl.get<std::string>() == "fake";
          reentry |= fl.get<std::string>() == "reentry";
        }
      // ballarus' own re-entry edges (plugin/reentry.cc) are in no .gcno.
      if (reentry) continue;
      const uint32_t src = e.at("src").get<uint32_t>();
      const uint32_t dst = e.at("dst").get<uint32_t>();
      if (ignored) {
        if (!e.at("count").is_null())
          diff->Add(where + ": ignored edge " + std::to_string(src) + "->" +
                    std::to_string(dst) + " has count " + e.at("count").dump());
        // A fake edge ballarus dropped to break a cycle that gcov kept.
        if (fake && cycle && next < first.arcs.size() &&
            first.arcs[next].src == src && first.arcs[next].dst == dst &&
            first.arcs[next].fake())
          next++;
        continue;
      }
      if (next < first.arcs.size() && first.arcs[next].src == src &&
          first.arcs[next].dst == dst) {
        edges.push_back(&e);
        gcov_index.push_back(next);
        next++;
      } else if (fake && Expected(Expectation::kFakeOffTree, program, name, opt)) {
        skipped_fake.push_back(std::to_string(src) + "->" + std::to_string(dst));
      } else {
        same_arcs = false;
      }
    }
    if (!same_arcs || next != first.arcs.size()) {
      std::string a, b;
      for (const json& e : f.at("edges"))
        a += " " + e.at("src").dump() + "->" + e.at("dst").dump();
      for (const auto& arc : first.arcs)
        b += " " + std::to_string(arc.src) + "->" + std::to_string(arc.dst);
      diff->Add(where + ": arc lists differ\n    ballarus:" + a +
                "\n    gcov:    " + b);
      continue;
    }
    const bool negative_ok = Expected(Expectation::kGcovNegativeFakeArcs,
                                      program, name, opt);
    for (size_t k = 0; k < edges.size(); k++) {
      const size_t i = gcov_index[k];
      const json& c = edges[k]->at("count");
      const int64_t want = arc_counts[i];
      if (want < 0 && first.arcs[i].fake() && negative_ok) continue;
      // Fake ENTRY edges gcov's tree dropped are not in gcov's list; the
      // ones both kept carry the re-entries only on ballarus' side.
      if (cycle && first.arcs[i].fake() && first.arcs[i].src == 0) continue;
      if (c.is_null() || c.get<int64_t>() != want)
        diff->Add(where + ": arc " + std::to_string(first.arcs[i].src) + "->" +
                  std::to_string(first.arcs[i].dst) + " (#" +
                  std::to_string(i) + "): ballarus " + CountStr(c) +
                  ", gcov " + std::to_string(want));
    }
  }
  // Everything gcov instrumented (and reports) ballarus must have too.
  for (const auto& [unit, u] : gcov.units)
    for (const auto& of : u.functions)
      if (!of.artificial && of.has_data && !matched.count({unit, of.name}))
        diff->Add("function '" + of.name + "' of " + unit +
                  " (checksum " + std::to_string(of.cfg_checksum) +
                  "): in gcov's data but not in ballarus' profile");
}

// `reentries`: a kFakeCycleChoice expectation's hand-derived count by which
// ballarus may exceed gcov on a line (a setjmp line gcov undercounts); 0
// demands equality.
void CompareLines(
    const std::map<std::pair<std::string, uint32_t>, int64_t>& ours,
    const std::map<std::pair<std::string, uint32_t>, int64_t>& theirs,
    Diff* diff, int64_t reentries = 0) {
  std::set<std::pair<std::string, uint32_t>> keys;
  for (const auto& kv : ours) keys.insert(kv.first);
  for (const auto& kv : theirs) keys.insert(kv.first);
  for (const auto& k : keys) {
    auto a = ours.find(k), b = theirs.find(k);
    std::string sa = a == ours.end() ? "absent" : std::to_string(a->second);
    std::string sb = b == theirs.end() ? "absent" : std::to_string(b->second);
    if (reentries != 0 && a != ours.end() && b != theirs.end() &&
        a->second == b->second + reentries)
      continue;
    if (sa != sb)
      diff->Add("line " + k.first + ":" + std::to_string(k.second) +
                ": ballarus " + sa + ", gcov " + sb);
  }
}

void CheckAnnotations(
    const Program& p, const std::string& who,
    const std::map<std::pair<std::string, uint32_t>, int64_t>& counts,
    Diff* diff) {
  for (const auto& [key, want] : harness::Annotations(p)) {
    auto it = counts.find(key);
    std::string got = it == counts.end() ? "absent" : std::to_string(it->second);
    if (got != std::to_string(want))
      diff->Add(who + ": " + key.first + ":" + std::to_string(key.second) +
                ": count(" + std::to_string(want) + ") annotated, got " + got);
  }
}

// ---------------------------------------------------------------------------
// The corpus, program by program, at -O0 and -O2.

class Corpus : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

// Matches `other`'s functions with the naive profile's (by name,
// checksum and TUs), reports functions missing on either side and graphs
// that differ, and calls `check(naive_function, other_function, where)` for
// every pair with the same graph.
void ForEachFunctionLikeNaive(
    const json& naive, const json& other, const std::string& label,
    Diff* diff,
    const std::function<void(const json&, const json&, const std::string&)>&
        check) {
  auto key = [](const json& f) {
    return f.at("name").get<std::string>() + "#" +
           std::to_string(f.at("checksum").get<uint64_t>()) + "#" +
           f.at("tus").dump();
  };
  std::map<std::string, const json*> by_key;
  for (const json& f : naive.at("functions")) by_key[key(f)] = &f;
  if (naive.at("functions").size() != other.at("functions").size())
    diff->Add("function counts differ: naive " +
              std::to_string(naive.at("functions").size()) + ", " + label +
              " " + std::to_string(other.at("functions").size()));
  for (const json& f : other.at("functions")) {
    const std::string where = "function '" + f.at("name").get<std::string>() + "'";
    auto it = by_key.find(key(f));
    if (it == by_key.end()) {
      diff->Add(where + ": not in the naive profile");
      continue;
    }
    const json& n = *it->second;
    if (n.at("edges").size() != f.at("edges").size() ||
        n.at("blocks").size() != f.at("blocks").size()) {
      diff->Add(where + ": graphs differ");
      continue;
    }
    check(n, f, where);
  }
}

// Every edge and block count of `f` equals the naive profile's `n`; with
// null_as_zero, an edge the naive profile cannot count (null) may also be
// 0 in `f`.
void CompareCounts(const json& n, const json& f, const std::string& where,
                   const std::string& label, bool null_as_zero, Diff* diff) {
  for (size_t i = 0; i < f.at("edges").size(); i++) {
    const json &a = n.at("edges")[i], &b = f.at("edges")[i];
    bool same = a.at("count") == b.at("count") ||
                (null_as_zero && a.at("count").is_null() &&
                 (b.at("count").is_null() || b.at("count") == 0));
    if (!same)
      diff->Add(where + ": edge " + b.at("src").dump() + "->" +
                b.at("dst").dump() + ": naive " + a.at("count").dump() +
                ", " + label + " " + b.at("count").dump());
  }
  for (size_t i = 0; i < f.at("blocks").size(); i++)
    if (n.at("blocks")[i].at("count") != f.at("blocks")[i].at("count"))
      diff->Add(where + ": block " + f.at("blocks")[i].at("id").dump() +
                ": naive " + n.at("blocks")[i].at("count").dump() + ", " +
                label + " " + f.at("blocks")[i].at("count").dump());
}

// Same functions, same graphs, same counts on every edge and block; and in
// edge mode exactly |E|-|V|+1 counted edges per function (closed graph:
// ignored edges left out, the virtual EXIT->ENTRY edge counted in |E|),
// one fewer where the entry count comes from the callers' call blocks: one
// edge out of ENTRY is then "from_calls".
void CompareEdgeWithNaive(const json& naive, const json& edge, Diff* diff) {
  ForEachFunctionLikeNaive(
      naive, edge, "edge", diff,
      [&](const json& n, const json& f, const std::string& where) {
        CompareCounts(n, f, where, "edge", /*null_as_zero=*/false, diff);
        size_t counted = 0, live_edges = 0, from_calls = 0;
        for (const json& e : f.at("edges")) {
          bool ignored = false;
          for (const json& fl : e.value("flags", json::array()))
            ignored |= fl.get<std::string>() == "ignored";
          if (!ignored) live_edges++;
          if (e.at("counted").get<bool>()) counted++;
          if (e.value("from_calls", false) && e.at("src") == 0) from_calls++;
        }
        const bool entry_from_calls = f.value("entry_from_calls", false);
        if (from_calls != (entry_from_calls ? 1u : 0u))
          diff->Add(where + ": " + std::to_string(from_calls) +
                    " entry edges from calls, entry_from_calls " +
                    (entry_from_calls ? "true" : "false"));
        const size_t want =
            live_edges + 1 - f.at("blocks").size() + 1 - from_calls;
        if (counted != want)
          diff->Add(where + ": " + std::to_string(counted) +
                    " counters, |E|-|V|+1 = " + std::to_string(want + from_calls) +
                    (from_calls ? " less the entry from calls" : ""));
      });
}

// A profile whose edge counts were derived from Ball-Larus path counts
// (mode=path: no edge counters at all) against the naive profile: same
// functions, same count on every edge and block.  Edges the naive profile
// cannot count either (null) must be null or 0 here.
void ComparePathDerivedWithNaive(const json& naive, const json& paths,
                                 Diff* diff) {
  ForEachFunctionLikeNaive(
      naive, paths, "path", diff,
      [&](const json& n, const json& f, const std::string& where) {
        // Or, path-from-edges, its paths come from its edge counts (the
        // counters of edge mode; PathsFromEdges below checks the paths).
        if (!f.value("edges_from_paths", false) &&
            !f.value("paths_from_edges", false))
          diff->Add(where + ": its edge counts do not come from paths");
        CompareCounts(n, f, where, "from paths", /*null_as_zero=*/true, diff);
      });
}

TEST_P(Corpus, MatchesPlainAndGcov) {
  const std::string name = GetParam().first, opt = GetParam().second;
  const Program* p = FindProgram(name);
  ASSERT_NE(p, nullptr) << name << " not in MANIFEST";
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = harness::TempRoot() + "/" + name + opt;
  // No -fno-partial-inlining: -fprofile-arcs turns GCC's function
  // splitting off (ipa-split.cc), and so does the plugin (plugin.cc), so
  // the gcov and the ballarus builds are the same compile at every -O
  // level (split_function and goto_recursion would split at -O2).
  std::vector<std::string> extra;
  std::vector<Outcome> o = BuildAll(*p, opt, root, extra);
  const Outcome &plain = o[0], &gcov = o[1], &ours = o[2];
  ASSERT_TRUE(plain.build.ok) << plain.build.log;
  ASSERT_TRUE(gcov.build.ok) << gcov.build.log;
  ASSERT_TRUE(ours.build.ok) << ours.build.log;
  const std::string ctx = name + " " + opt;

  EXPECT_EQ(gcov.run.out, plain.run.out) << ctx << ": gcov build's stdout";
  EXPECT_EQ(gcov.run.status, plain.run.status) << ctx << ": gcov build's exit";
  EXPECT_EQ(ours.run.out, plain.run.out) << ctx << ": ballarus build's stdout";
  EXPECT_EQ(ours.run.status, plain.run.status)
      << ctx << ": ballarus build's exit status; stderr: " << ours.run.err;
  EXPECT_FALSE(plain.run.out.empty()) << ctx << ": the program printed nothing";

  const std::string profile = ours.run_dir + "/ballarus.profile";
  ASSERT_EQ(access(profile.c_str(), R_OK), 0) << ctx << ": no " << profile;
  CommandResult v = harness::Run(Quote(Reconstruct()) + " verify " +
                                     Quote(profile), ours.run_dir);
  EXPECT_EQ(v.status, 0) << ctx << ": verify:\n" << v.out << v.err;

  json show;
  std::string error;
  ASSERT_TRUE(ShowJson(profile, ours.run_dir, &show, &error)) << ctx << ": " << error;
  GcovSide g;
  ASSERT_TRUE(LoadGcov(gcov.build, &g, &error)) << ctx << ": " << error;

  Diff fdiff(ctx + ": per-function comparison with gcov");
  std::map<std::pair<std::string, uint32_t>, int64_t> our_lines;
  int compared = 0;
  std::map<std::pair<std::string, uint32_t>, int64_t> function_lines;
  CompareFunctions(name, opt, show, g, &fdiff, &function_lines, &compared);
  fdiff.Report();
  // Line counts as `show --json` gives them per file ("lines"): computed
  // per TU over all functions at once, as gcov does, so a header line
  // inlined into several functions is accumulated the way gcov does it.
  ASSERT_TRUE(show.contains("lines")) << ctx << ": show --json has no lines";
  // gcov's line flags, or-ed over TUs like gcov does for a shared line:
  // unexecuted_block ("N*"), and exceptional (all blocks only reachable by
  // a throw: "=====" when never run), which every line must carry.
  std::map<std::pair<std::string, uint32_t>, bool> our_unexecuted;
  std::map<std::pair<std::string, uint32_t>, bool> our_exceptional;
  for (const json& l : show.at("lines")) {
    const std::pair<std::string, uint32_t> key{
        harness::Basename(l.at("file").get<std::string>()),
        l.at("line").get<uint32_t>()};
    our_lines[key] += l.at("count").get<int64_t>();
    EXPECT_TRUE(l.contains("unexecuted_block") && l.contains("exceptional"))
        << ctx << ": line flags missing in " << l.dump();
    bool& u = our_unexecuted[key];
    u = u || l.value("unexecuted_block", false);
    // A line is exceptional only if it is in every TU listing it.
    auto [it, fresh] = our_exceptional.emplace(key, true);
    it->second = it->second && l.value("exceptional", false);
  }
  EXPECT_GT(compared, 0) << ctx << ": no function compared";

  Diff ldiff(ctx + ": line counts, ballarus vs gcov --json-format");
  int64_t reentries = 0;
  for (const Expectation& x : Expectations())
    if (x.what == Expectation::kFakeCycleChoice && x.program == name &&
        (x.opt.empty() || x.opt == opt))
      reentries = x.reentries;
  CompareLines(our_lines, g.lines, &ldiff, reentries);
  for (const auto& [key, u] : g.unexecuted) {
    auto it = our_unexecuted.find(key);
    if (it != our_unexecuted.end() && it->second != u)
      ldiff.Add("line " + key.first + ":" + std::to_string(key.second) +
                ": unexecuted_block: ballarus " +
                (it->second ? "true" : "false") + ", gcov " +
                (u ? "true" : "false"));
  }
  ldiff.Report();

  if (opt == "-O0") {
    Diff adiff(ctx + ": /* count(N) */ annotations");
    CheckAnnotations(*p, "gcov", g.lines, &adiff);
    CheckAnnotations(*p, "ballarus", our_lines, &adiff);
    // gcov's other forms: "N*" for both (gcov's JSON has the flag), and
    // "=====" / "#####" for ballarus (gcov's JSON has no exceptional flag;
    // GCC's suite checks gcov's, //tests:gcc_gcov_suite_test ours too).
    // A plain "N" says nothing of the flags (unexecuted_block is compared
    // with gcov's on every line above).
    for (const auto& [key, form] : harness::AnnotationForms(*p)) {
      if (form.find_first_not_of("0123456789") == std::string::npos) continue;
      const std::string where =
          key.first + ":" + std::to_string(key.second) + ": count(" + form +
          ") annotated, ";
      auto c = our_lines.find(key);
      if (c == our_lines.end()) continue;  // reported above
      const std::string ours = harness::GcovCountForm(
          c->second, our_unexecuted[key], our_exceptional[key]);
      if (ours != form) adiff.Add("ballarus: " + where + "got " + ours);
      auto gc = g.lines.find(key);
      if (gc != g.lines.end() && gc->second > 0) {
        const std::string theirs =
            harness::GcovCountForm(gc->second, g.unexecuted[key], false);
        if (theirs != form) adiff.Add("gcov: " + where + "got " + theirs);
      }
    }
    adiff.Report();
  }

  // Edge mode (optimal placement: counters on spanning-tree chords only)
  // must reconstruct exactly the naive profile, with |E|-|V|+1 counters.
  BuildOptions eo;
  eo.kind = Kind::kBallarus;
  eo.opt = opt;
  eo.extra_flags = extra;
  eo.ballarus_prefix = InstallPrefix();
  eo.ballarus_mode = "edge";
  Outcome edge = BuildAndRun(*p, eo, root + "/edge");
  ASSERT_TRUE(edge.build.ok) << edge.build.log;
  EXPECT_EQ(edge.run.out, plain.run.out) << ctx << ": edge build's stdout";
  EXPECT_EQ(edge.run.status, plain.run.status) << ctx << ": edge build's exit";
  const std::string eprofile = edge.run_dir + "/ballarus.profile";
  CommandResult ev = harness::Run(Quote(Reconstruct()) + " verify " +
                                      Quote(eprofile), edge.run_dir);
  EXPECT_EQ(ev.status, 0) << ctx << ": edge verify:\n" << ev.out << ev.err;
  json eshow;
  ASSERT_TRUE(ShowJson(eprofile, edge.run_dir, &eshow, &error))
      << ctx << ": " << error;
  Diff ediff(ctx + ": edge mode vs naive mode");
  CompareEdgeWithNaive(show, eshow, &ediff);
  ediff.Report();

  // Path profiling.  mode=edge,path: one run gives both profiles, and
  // `verify` checks the edge profile derived from the paths against the
  // edge counters, edge by edge.  mode=path alone: the edge profile derived
  // from the paths equals the naive profile, and `verify --against` the
  // naive profile agrees.  Both with exit/longjmp/exception programs: the
  // paths cut short are counted (early termination).
  for (const char* mode : {"edge,path", "path"}) {
    BuildOptions po = eo;
    po.ballarus_mode = mode;
    const std::string pctx = ctx + " mode=" + mode;
    Outcome pb = BuildAndRun(*p, po, root + "/" + (std::string(mode) == "path"
                                                      ? "path"
                                                      : "edgepath"));
    ASSERT_TRUE(pb.build.ok) << pb.build.log;
    EXPECT_EQ(pb.run.out, plain.run.out) << pctx << ": stdout";
    EXPECT_EQ(pb.run.status, plain.run.status)
        << pctx << ": exit status; stderr: " << pb.run.err;
    const std::string pprofile = pb.run_dir + "/ballarus.profile";
    CommandResult pv = harness::Run(Quote(Reconstruct()) + " verify " +
                                        Quote(pprofile),
                                    pb.run_dir);
    EXPECT_EQ(pv.status, 0) << pctx << ": verify:\n" << pv.out << pv.err;
    if (std::string(mode) == "edge,path") {
      EXPECT_NE(pv.out.find("paths:"), std::string::npos)
          << pctx << ": verify compared no paths:\n" << pv.out;
      continue;
    }
    CommandResult pa = harness::Run(Quote(Reconstruct()) + " verify " +
                                        Quote(pprofile) + " --against " +
                                        Quote(profile),
                                    pb.run_dir);
    EXPECT_EQ(pa.status, 0) << pctx << ": verify --against naive:\n"
                            << pa.out << pa.err;
    json pshow;
    ASSERT_TRUE(ShowJson(pprofile, pb.run_dir, &pshow, &error))
        << pctx << ": " << error;
    Diff pdiff(pctx + ": edge profile from paths vs naive mode");
    ComparePathDerivedWithNaive(show, pshow, &pdiff);
    pdiff.Report();
  }

  // `stats`: static counters = counted edges, dynamic increments = the sum
  // of the counted edges' counts, per show --json; and gcov's figures from
  // its .gcda (counters = arcs off its tree).
  for (const auto* prof : {&profile, &eprofile}) {
    const json& shown = prof == &profile ? show : eshow;
    std::string gcdas;
    for (const std::string& u : gcov.build.units)
      gcdas += " " + Quote(gcov.build.dir + "/" + u + ".gcda");
    CommandResult st = harness::Run(Quote(Reconstruct()) + " stats --json " +
                                        Quote(*prof) + " --gcov" + gcdas,
                                    ours.run_dir);
    ASSERT_EQ(st.status, 0) << ctx << ": stats: " << st.err;
    json stats = json::parse(st.out);
    uint64_t counters = 0, increments = 0;
    for (const json& f : shown.at("functions"))
      for (const json& e : f.at("edges"))
        if (e.at("counted").get<bool>()) {
          counters++;
          increments += e.at("count").get<uint64_t>();
        }
    EXPECT_EQ(stats.at("total").at("static_counters").get<uint64_t>(), counters)
        << ctx;
    EXPECT_EQ(stats.at("total").at("dynamic_increments").get<uint64_t>(),
              increments)
        << ctx;
    EXPECT_GT(stats.at("gcov").at("total").at("static_counters").get<uint64_t>(),
              0u)
        << ctx;
  }
}

std::vector<std::pair<std::string, std::string>> AllCases() {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const Program& p : harness::LoadManifestOrDie())
    for (const char* opt : {"-O0", "-O2"}) cases.push_back({p.name, opt});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, Corpus, ::testing::ValuesIn(AllCases()),
    [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& i) {
      return i.param.first + "_" + i.param.second.substr(1);
    });

// ---------------------------------------------------------------------------
// Threads: exact, hand-derived counts need atomic updates.

class Threads : public ::testing::TestWithParam<std::pair<int, std::string>> {};

TEST_P(Threads, ExactCounts) {
  const std::string opt = GetParam().second;
  const Program* base = FindProgram("threads");
  ASSERT_NE(base, nullptr);
  ASSERT_FALSE(InstallPrefix().empty());
  Program p = *base;
  BuildOptions o;
  o.kind = Kind::kBallarus;
  o.opt = opt;
  o.ballarus_prefix = InstallPrefix();
  std::string label;
  if (GetParam().first == 0) {
    // Explicit atomic updates, no -pthread (glibc >= 2.34 needs none).
    p.cflags.clear();
    o.extra_flags = {"-fplugin-arg-ballarus-update=atomic"};
    label = "update=atomic";
  } else if (GetParam().first == 2) {
    // Path profiling alone: every count below is derived from path counts.
    p.cflags = {"-pthread"};
    o.ballarus_mode = "path";
    label = "mode=path with -pthread";
  } else {
    // The default mode must be atomic when compiling with -pthread.
    p.cflags = {"-pthread"};
    label = "default with -pthread";
  }
  const std::string ctx = "threads " + opt + " " + label;
  Outcome out = BuildAndRun(p, o, harness::TempRoot() + "/threads" + opt +
                                      std::to_string(GetParam().first));
  ASSERT_TRUE(out.build.ok) << out.build.log;
  EXPECT_EQ(out.run.status, 0) << ctx;
  // 4 workers x 500000 calls; the sum of x/2 or 3x+1 over 0..1999999.
  unsigned long total = 0;
  for (unsigned long x = 0; x < 2000000; x++) total += x & 1 ? x * 3 + 1 : x / 2;
  EXPECT_EQ(out.run.out, "total=" + std::to_string(total) + "\n") << ctx;
  json show;
  std::string error;
  ASSERT_TRUE(ShowJson(out.run_dir + "/ballarus.profile", out.run_dir, &show,
                       &error))
      << ctx << ": " << error;
  std::map<std::string, int64_t> exec;
  std::map<std::pair<std::string, uint32_t>, int64_t> lines;
  for (const json& f : show.at("functions")) {
    exec[f.at("name").get<std::string>()] =
        f.at("execution_count").is_null() ? -1
                                          : f.at("execution_count").get<int64_t>();
    for (const json& l : f.at("line_counts"))
      if (!l.at("count").is_null())
        lines[{harness::Basename(l.at("file").get<std::string>()),
               l.at("line").get<uint32_t>()}] += l.at("count").get<int64_t>();
  }
  EXPECT_EQ(exec["hammer"], 2000000) << ctx;
  EXPECT_EQ(exec["main"], 1) << ctx;
  if (opt == "-O0") {
    EXPECT_EQ(exec["worker"], 4) << ctx;
    Diff adiff(ctx + ": /* count(N) */ annotations");
    CheckAnnotations(p, "ballarus", lines, &adiff);
    adiff.Report();
  }
  CommandResult v = harness::Run(Quote(Reconstruct()) + " verify ballarus.profile",
                                 out.run_dir);
  EXPECT_EQ(v.status, 0) << ctx << ": verify:\n" << v.out << v.err;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Threads,
    ::testing::Values(std::make_pair(0, std::string("-O0")),
                      std::make_pair(0, std::string("-O2")),
                      std::make_pair(1, std::string("-O0")),
                      std::make_pair(1, std::string("-O2")),
                      std::make_pair(2, std::string("-O0")),
                      std::make_pair(2, std::string("-O2"))),
    [](const auto& i) {
      return std::string(i.param.first == 0   ? "atomic_"
                         : i.param.first == 1 ? "pthread_default_"
                                              : "path_pthread_") +
             i.param.second.substr(1);
    });

// ---------------------------------------------------------------------------
// Damaged profiles: exit 2, one line naming the file; the file untouched.

TEST(MalformedProfile, RejectedWithOneLine) {
  const Program* p = FindProgram("switch");
  ASSERT_NE(p, nullptr);
  ASSERT_FALSE(InstallPrefix().empty());
  BuildOptions o;
  o.kind = Kind::kBallarus;
  o.ballarus_prefix = InstallPrefix();
  Outcome out = BuildAndRun(*p, o, harness::TempRoot() + "/malformed");
  ASSERT_TRUE(out.build.ok) << out.build.log;
  const std::string good_path = out.run_dir + "/ballarus.profile";
  const std::string good = harness::ReadFileOrDie(good_path);
  ASSERT_GT(good.size(), 64u);

  std::vector<std::pair<std::string, std::string>> damaged;  // label, bytes
  for (size_t len : {size_t(0), size_t(7), size_t(31), size_t(32), size_t(40),
                     good.size() / 2, good.size() - 8, good.size() - 1})
    damaged.push_back({"truncated to " + std::to_string(len),
                       good.substr(0, len)});
  for (size_t at : {size_t(0), size_t(9), size_t(20), size_t(33), size_t(60),
                    good.size() / 3, good.size() / 2, good.size() - 3}) {
    std::string b = good;
    b[at] ^= 0x10;
    damaged.push_back({"bit flipped at " + std::to_string(at), b});
  }
  int i = 0;
  for (const auto& [label, bytes] : damaged) {
    const std::string path =
        out.run_dir + "/damaged" + std::to_string(i++) + ".profile";
    harness::WriteFileOrDie(path, bytes);
    for (const char* cmd : {" show ", " show --json ", " verify "}) {
      CommandResult r =
          harness::Run(Quote(Reconstruct()) + cmd + Quote(path), out.run_dir);
      EXPECT_EQ(r.status, 2) << label << ":" << cmd << "stdout: " << r.out
                             << " stderr: " << r.err;
      EXPECT_NE(r.err.find(path), std::string::npos)
          << label << ":" << cmd << "the message does not name the file: "
          << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
          << label << ":" << cmd << "not exactly one line: " << r.err;
    }
    EXPECT_EQ(harness::ReadFileOrDie(path), bytes) << label << ": file modified";
  }
  EXPECT_EQ(harness::ReadFileOrDie(good_path), good);
  CommandResult r = harness::Run(
      Quote(Reconstruct()) + " verify " + Quote(good_path), out.run_dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// ---------------------------------------------------------------------------
// Determinism: two compiles of one source give identical objects.

// ---------------------------------------------------------------------------
// abort(): with BALLARUS_DUMP_ON_ABORT=1 the runtime dumps on SIGABRT, and
// the paths abort() cut short are counted (path-derived edges equal the
// edge counters, hand-derived counts below); without it nothing is written.

TEST(Abort, PathsCutShortAreCounted) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/abort";
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(dir + "/ab.c",
                          "#include <stdio.h>\n"
                          "#include <stdlib.h>\n"
                          "static void check(int i) { if (i == 7) abort(); }\n"
                          "int main(void) {\n"
                          "  for (int i = 0; i < 10; i++) { check(i); printf(\"%d\\n\", i); }\n"
                          "  return 0;\n"
                          "}\n");
  for (const char* opt : {"-O0", "-O2"}) {
    const std::string ctx = std::string("abort ") + opt;
    CommandResult c = harness::Run(
        Quote(InstallPrefix() + "/bin/ballarus-gcc") +
            " -fplugin-arg-ballarus-mode=edge,path -fno-inline " + opt +
            " ab.c -o ab",
        dir);
    ASSERT_EQ(c.status, 0) << ctx << ": " << c.err;
    harness::Run("rm -f ballarus.profile", dir);
    const std::string pool = "BALLARUS_PROFILE=" + dir + "/ballarus.profile";
    CommandResult r = harness::Run("./ab", dir, {pool});
    EXPECT_EQ(r.status, 128 + 6) << ctx;
    EXPECT_NE(access((dir + "/ballarus.profile").c_str(), F_OK), 0)
        << ctx << ": a profile without BALLARUS_DUMP_ON_ABORT";
    r = harness::Run("./ab", dir, {pool, "BALLARUS_DUMP_ON_ABORT=1"});
    EXPECT_EQ(r.status, 128 + 6) << ctx;
    CommandResult v = harness::Run(Quote(Reconstruct()) +
                                       " verify ballarus.profile", dir);
    EXPECT_EQ(v.status, 0) << ctx << ": " << v.out << v.err;
    EXPECT_NE(v.out.find("paths:"), std::string::npos) << ctx << v.out;
    json show;
    std::string error;
    ASSERT_TRUE(ShowJson(dir + "/ballarus.profile", dir, &show, &error))
        << ctx << ": " << error;
    std::map<std::string, int64_t> exec;
    for (const json& f : show.at("functions"))
      exec[f.at("name").get<std::string>()] =
          f.at("execution_count").get<int64_t>();
    // check() ran 8 times (i = 0..7), main once.
    EXPECT_EQ(exec["check"], 8) << ctx;
    EXPECT_EQ(exec["main"], 1) << ctx;
    CommandResult pj = harness::Run(Quote(Reconstruct()) +
                                        " paths --json --top 0 ballarus.profile",
                                    dir);
    ASSERT_EQ(pj.status, 0) << ctx << ": " << pj.err;
    json paths = json::parse(pj.out);
    int64_t cut_short = 0;
    for (const json& f : paths.at("functions"))
      if (f.at("name") == "check")
        for (const json& p : f.at("paths"))
          if (p.at("end") == "no_return") cut_short += p.at("count").get<int64_t>();
    EXPECT_EQ(cut_short, 1) << ctx << ": the path into abort()";
  }
}

// ---------------------------------------------------------------------------
// Path mode's early termination needs no pre-count before a call to a
// function of the TU that always returns (plugin/path_returns.cc): mid()
// and leaf() never leave their frames (they write a global, so GCC does
// not make them const and their calls keep their fake edges), bad() exits,
// viaptr() calls through a pointer.  The path bad() cuts short in main() must still be counted:
// verify compares the path-derived edges with the edge counters, so a
// callee wrongly taken for one that always returns fails it.

TEST(PathEarlyTermination, NoPreCountBeforeCallsThatAlwaysReturn) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_returns";
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(
      dir + "/pr.c",
      "#include <stdio.h>\n"
      "#include <stdlib.h>\n"
      "static int calls;\n"
      "__attribute__((noinline)) static int leaf(int x) {\n"
      "  calls++;\n"
      "  return x * 2 + 1;\n"
      "}\n"
      "__attribute__((noinline)) static int mid(int x) {\n"
      "  int s = 0;\n"
      "  calls++;\n"
      "  for (int i = 0; i < x; i++) s += leaf(i);\n"
      "  return s;\n"
      "}\n"
      "__attribute__((noinline)) static int bad(int x) {\n"
      "  if (x == 6) exit(3);\n"
      "  return x;\n"
      "}\n"
      "__attribute__((noinline)) static int viaptr(int (*f)(int), int x) {\n"
      "  return f(x);\n"
      "}\n"
      "int main(void) {\n"
      "  int s = 0;\n"
      "  for (int i = 0; i < 10; i++) {\n"
      "    s += mid(i);\n"
      "    s += viaptr(leaf, i);\n"
      "    s += bad(i);\n"
      "    printf(\"%d %d\\n\", s, calls);\n"
      "  }\n"
      "  return 0;\n"
      "}\n");
  for (const char* opt : {"-O0", "-O2"}) {
    const std::string ctx = std::string("path_returns ") + opt;
    harness::Run("rm -f ballarus.profile *.ballarus", dir);
    CommandResult c = harness::Run(
        Quote(InstallPrefix() + "/bin/ballarus-gcc") +
            " -fplugin-arg-ballarus-mode=edge,path"
            // Every pre-count made, so that the dump lists each one (with
            // path-derive they are all taken from the edge counters).
            " -fplugin-arg-ballarus-tune-path-derive=off"
            " -fplugin-arg-ballarus-dump " + opt + " pr.c -o pr",
        dir);
    ASSERT_EQ(c.status, 0) << ctx << ": " << c.err;
    CommandResult r = harness::Run(
        "./pr", dir, {"BALLARUS_PROFILE=" + dir + "/ballarus.profile"});
    EXPECT_EQ(r.status, 3) << ctx;
    CommandResult v = harness::Run(Quote(Reconstruct()) +
                                       " verify ballarus.profile", dir);
    EXPECT_EQ(v.status, 0) << ctx << ": " << v.out << v.err;
    EXPECT_NE(v.out.find("paths:"), std::string::npos) << ctx << v.out;
    // The dump: leaf and mid always return; their calls get no pre-count,
    // the others (bad, viaptr, printf) do.
    CommandResult d = harness::Run("cat *.ballarus", dir);
    ASSERT_EQ(d.status, 0) << ctx;
    EXPECT_NE(d.out.find("ballarus: 2 functions always return"),
              std::string::npos)
        << ctx << d.out;
    size_t skipped = 0, precounted = 0;
    for (size_t at = 0;
         (at = d.out.find("the callee always returns: no pre-count", at)) !=
         std::string::npos;
         ++at)
      ++skipped;
    for (size_t at = 0;
         (at = d.out.find("pre-count[r + a]++ before call", at)) !=
         std::string::npos;
         ++at)
      ++precounted;
    EXPECT_EQ(skipped, 2u) << ctx << ": main's call to mid, mid's to leaf";
    EXPECT_GE(precounted, 3u) << ctx;
    // main's path cut short by bad()'s exit, and bad()'s own, once each.
    CommandResult pj = harness::Run(
        Quote(Reconstruct()) + " paths --json --top 0 ballarus.profile", dir);
    ASSERT_EQ(pj.status, 0) << ctx << ": " << pj.err;
    json paths = json::parse(pj.out);
    std::map<std::string, int64_t> cut_short;
    for (const json& f : paths.at("functions"))
      for (const json& p : f.at("paths"))
        if (p.at("end") == "no_return")
          cut_short[f.at("name").get<std::string>()] +=
              p.at("count").get<int64_t>();
    EXPECT_EQ(cut_short["main"], 1) << ctx;
    EXPECT_EQ(cut_short["bad"], 1) << ctx;
    EXPECT_EQ(cut_short["mid"], 0) << ctx;
  }
}

// ---------------------------------------------------------------------------
// Loops whose iterations take one path, counted in locals (core
// FindCountedLoops): while, for with a break (some runs never find the
// key), do-while; each runs 8 or more times per entry on average.
// With tune-path-loops=on on static estimates, and by default (tune-path-loops=
// profile) with weights from an earlier edge profile of the same program:
// the dump shows counted loops, and verify finds the path-derived edges
// equal to the edge counters.

TEST(PathCountedLoops, ExactOnEstimatesAndOnAProfile) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_loops";
  harness::MakeFreshDir(dir);
  harness::WriteFileOrDie(
      dir + "/cl.c",
      "#include <stdio.h>\n"
      "__attribute__((noinline)) static int fill(int *a, int n) {\n"
      "  int i = 0;\n"
      "  while (i < n) { a[i] = i * 3; i++; }\n"
      "  return i;\n"
      "}\n"
      "__attribute__((noinline)) static int scan(const int *a, int n, int k) {\n"
      "  int i;\n"
      "  for (i = 0; i < n; i++)\n"
      "    if (a[i] == k) break;\n"
      "  return i;\n"
      "}\n"
      "__attribute__((noinline)) static int digits(unsigned long long v) {\n"
      "  int d = 0;\n"
      "  do { d++; v /= 10; } while (v);\n"
      "  return d;\n"
      "}\n"
      "int main(void) {\n"
      "  int a[64];\n"
      "  long s = 0;\n"
      "  for (int k = 0; k < 50; k++) {\n"
      "    int n = 20 + k % 17;\n"
      "    s += fill(a, n);\n"
      "    s += scan(a, n, k % 5 == 0 ? 1 : 3 * (k % 30));\n"
      "    s += digits(k * 123456789012345ull + 1);\n"
      "  }\n"
      "  printf(\"%ld\\n\", s);\n"
      "  return 0;\n"
      "}\n");
  const std::string gcc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  const std::string pool = "BALLARUS_PROFILE=" + dir + "/";
  for (const char* opt : {"-O0", "-O2"}) {
    const std::string ctx = std::string("path_loops ") + opt;
    // The edge profile the default mode bases its decision on.
    harness::Run("rm -f *.profile *.ballarus", dir);
    CommandResult c = harness::Run(gcc + " " + opt + " cl.c -o cl", dir);
    ASSERT_EQ(c.status, 0) << ctx << ": " << c.err;
    CommandResult r = harness::Run("./cl", dir, {pool + "edge.profile"});
    ASSERT_EQ(r.status, 0) << ctx;
    const std::string expected = r.out;
    for (const std::string how :
         {std::string("-fplugin-arg-ballarus-tune-path-loops=on"),
          "-fplugin-arg-ballarus-weights=profile=" + dir + "/edge.profile"}) {
      const std::string hctx = ctx + " " + how;
      harness::Run("rm -f paths.profile *.ballarus", dir);
      c = harness::Run(gcc + " -fplugin-arg-ballarus-mode=edge,path " + how +
                           " -fplugin-arg-ballarus-dump " + opt +
                           " cl.c -o cl",
                       dir);
      ASSERT_EQ(c.status, 0) << hctx << ": " << c.err;
      r = harness::Run("./cl", dir, {pool + "paths.profile"});
      EXPECT_EQ(r.status, 0) << hctx;
      EXPECT_EQ(r.out, expected) << hctx;
      CommandResult d = harness::Run("cat *.ballarus", dir);
      size_t counted = 0;
      for (size_t at = 0; (at = d.out.find("counted in a local", at)) !=
                          std::string::npos;
           ++at)
        ++counted;
      EXPECT_GE(counted, 3u) << hctx << ": fill, scan, digits\n" << d.out;
      CommandResult v = harness::Run(Quote(Reconstruct()) +
                                         " verify paths.profile", dir);
      EXPECT_EQ(v.status, 0) << hctx << ": " << v.out << v.err;
      EXPECT_NE(v.out.find("paths:"), std::string::npos) << hctx << v.out;
    }
  }
}

// ---------------------------------------------------------------------------
// Loop entry cuts and computed-goto targets (path-loop-cuts: by default in
// mode=path, and in mode=edge,path unless tune-path-derive=off;
// path-goto-targets: by default unless
// the weights are an earlier profile's), on
// programs/goto_loops.c: the corpus test checks the defaults against gcov,
// the naive profile and the edge counters; here the dump must show each at
// work where it applies (entry edges cut -- one of them out of ENTRY at
// -O0 --, targets that set the register, a target also entered normally
// that checks the flag) and not where it does not, and every combination
// must give the program's output and a path profile that verifies
// (mode=edge,path: its derived edges equal the edge counters).

TEST(PathLoopCutsAndGotoTargets, ShownInTheDumpAndExactEachWay) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_loop_cuts";
  harness::MakeFreshDir(dir);
  ASSERT_EQ(harness::Run("cp " + Quote(harness::ProgramsDir() +
                                       "/goto_loops.c") + " .", dir).status,
            0);
  const std::string gcc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  const std::string pool = "BALLARUS_PROFILE=" + dir + "/";
  CommandResult c = harness::Run("gcc -O0 goto_loops.c -o plain", dir);
  ASSERT_EQ(c.status, 0) << c.err;
  CommandResult r = harness::Run("./plain", dir);
  ASSERT_EQ(r.status, 0);
  const std::string expected = r.out;
  auto occurrences = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(what, at)) != std::string::npos;
         ++at)
      ++n;
    return n;
  };
  struct Config {
    std::string options;
    bool cuts, targets;
  };
  const std::string m = "-fplugin-arg-ballarus-mode=";
  const std::string lc = " -fplugin-arg-ballarus-tune-path-loop-cuts=";
  const std::string gt = " -fplugin-arg-ballarus-tune-path-goto-targets=";
  const std::string dv = " -fplugin-arg-ballarus-tune-path-derive=";
  // An edge profile of the program (at each -O), for weights=profile=
  // (goto targets off by default there; every cut loop iterates at least
  // once per entry).
  const std::string measured =
      " -fplugin-arg-ballarus-weights=profile=" + dir + "/edge.profile";
  const std::vector<Config> configs = {
      {m + "path", true, true},
      {m + "path" + measured, true, false},
      {m + "edge,path" + lc + "on" + gt + "on" + measured, true, true},
      {m + "edge,path", true, true},
      {m + "edge,path" + dv + "off", false, true},
      {m + "edge,path" + lc + "on" + dv + "off", true, true},
      {m + "edge,path" + lc + "on" + gt + "off", true, false},
      {m + "path" + lc + "off", false, true},
      {m + "path" + gt + "off", true, false},
  };
  for (const char* opt : {"-O0", "-O2"}) {
    harness::Run("rm -f edge.profile", dir);
    c = harness::Run(gcc + " " + opt + " goto_loops.c -o gl", dir);
    ASSERT_EQ(c.status, 0) << opt << ": " << c.err;
    r = harness::Run("./gl", dir, {pool + "edge.profile"});
    ASSERT_EQ(r.status, 0) << opt;
    for (const Config& cf : configs) {
      const std::string ctx = std::string("goto_loops ") + opt + " " +
                              cf.options;
      harness::Run("rm -f paths.profile *.ballarus", dir);
      c = harness::Run(gcc + " " + cf.options +
                           " -fplugin-arg-ballarus-dump " + opt +
                           " goto_loops.c -o gl",
                       dir);
      ASSERT_EQ(c.status, 0) << ctx << ": " << c.err;
      r = harness::Run("./gl", dir, {pool + "paths.profile"});
      EXPECT_EQ(r.status, 0) << ctx;
      EXPECT_EQ(r.out, expected) << ctx;
      CommandResult d = harness::Run("cat *.ballarus", dir);
      if (cf.options.find("weights=profile=") != std::string::npos)
        EXPECT_EQ(d.out.find("not in the profile"), std::string::npos)
            << ctx << "\n" << d.out;
      // bits, checked_sum (and halve: its entry edge leaves ENTRY at -O0)
      EXPECT_EQ(occurrences(d.out, "loop entry edge ") >= 2, cf.cuts)
          << ctx << "\n" << d.out;
      if (cf.cuts && std::string(opt) == "-O0")
        EXPECT_EQ(occurrences(d.out, "loop entry edge 0->"), 1u)
            << ctx << "\n" << d.out;
      // op_fill, op_sum, op_twice, op_jnz, op_halt set r at their start;
      // op_shift, also entered by op_sum's goto, checks the flag.
      // (A cut block whose count went onto its in-edges sets r at its
      // start too: path-call-cuts.)
      EXPECT_EQ(occurrences(d.out, "r = a at start") -
                    occurrences(d.out, "its count made on"),
                cf.targets ? 5u : 0u)
          << ctx << "\n" << d.out;
      EXPECT_EQ(occurrences(d.out, "is entered otherwise too"),
                cf.targets ? 1u : 0u)
          << ctx << "\n" << d.out;
      // ... op_shift's normal entry (op_sum's goto) saves r for it, so r
      // is dead at the computed gotos; and their path ends are counted
      // further back than the dispatcher's in-edges, where handlers merge
      // paths (1 block back at -O0, 2 at -O2: "computed-goto path ends
      // hoisted deep", path_hoist.cc HoistPathEnd).
      EXPECT_EQ(occurrences(d.out, "s = r (normal entry)"),
                cf.targets ? 1u : 0u)
          << ctx << "\n" << d.out;
      EXPECT_EQ(occurrences(d.out, "re-entry check at start, r = s"),
                cf.targets ? 1u : 0u)
          << ctx << "\n" << d.out;
      // (Back edges' ends hoisted onto the latch's in-edges say "its path
      // end counted on the N edges into": not this.)
      EXPECT_EQ(occurrences(d.out, ": its path end counted on") -
                    occurrences(d.out, "path end counted on the "),
                cf.targets ? 1u : 0u)
          << ctx << "\n" << d.out;
      if (cf.targets) {
        std::istringstream lines(d.out);
        for (std::string line; std::getline(lines, line);)
          if (line.find("computed goto at block") != std::string::npos) {
            EXPECT_EQ(line.find("up to 0 blocks"), std::string::npos)
                << ctx << "\n" << d.out;
          }
      }
      CommandResult v = harness::Run(Quote(Reconstruct()) +
                                         " verify paths.profile", dir);
      EXPECT_EQ(v.status, 0) << ctx << ": " << v.out << v.err;
      // `paths` names a path that ends at a cut entry edge "loop entry",
      // not "back edge", and one that starts at such a loop's header
      // "loop_header" (it may follow either); every cut loop runs.
      CommandResult p = harness::Run(Quote(Reconstruct()) +
                                         " paths paths.profile --top 0",
                                     dir);
      EXPECT_EQ(p.status, 0) << ctx << ": " << p.err;
      EXPECT_EQ(occurrences(p.out, " -> loop entry to ") >= 2, cf.cuts)
          << ctx << "\n" << p.out;
      EXPECT_NE(p.out.find(" -> back edge to "), std::string::npos)
          << ctx << "\n" << p.out;
      CommandResult pj = harness::Run(Quote(Reconstruct()) +
                                          " paths paths.profile --top 0 --json",
                                      dir);
      EXPECT_EQ(pj.status, 0) << ctx << ": " << pj.err;
      EXPECT_EQ(occurrences(pj.out, "\"end\": \"loop_entry\"") >= 2, cf.cuts)
          << ctx << "\n" << pj.out;
      EXPECT_EQ(pj.out.find("\"start\": \"loop_header\"") != std::string::npos,
                cf.cuts)
          << ctx << "\n" << pj.out;
      if (cf.options.find("edge,path") != std::string::npos) {
        EXPECT_NE(v.out.find("paths: 6 functions"), std::string::npos)
            << ctx << v.out;
        EXPECT_NE(v.out.find(" 0 not comparable"), std::string::npos)
            << ctx << v.out;
      }
    }
  }
}

// One build of a corpus program with the given plugin options, its run and
// its path profile: what the path-mode tests below compare between two
// builds that must count the same paths.
struct PathBuild {
  std::string out, err;  // the program's
  int status = -1;
  CommandResult verify;
  std::string error;  // a failed compile or `paths` run; empty if none
  // name@file -> path id -> count, of every function with paths.
  std::map<std::string, std::map<std::string, uint64_t>> counts;
  json functions;  // `paths --json`'s functions with paths
  // The sum over those functions of a numeric field of theirs.
  uint64_t Sum(const char* field) const {
    uint64_t n = 0;
    for (const json& f : functions) n += f.value(field, uint64_t{0});
    return n;
  }
  // The function named `name` (null if none).
  const json* Function(const std::string& name) const {
    for (const json& f : functions)
      if (f.at("name") == name) return &f;
    return nullptr;
  }
};

PathBuild BuildRunPaths(const std::string& dir, const std::string& program,
                        const std::string& opt, const std::string& options,
                        const std::string& exe) {
  PathBuild b;
  const std::string src = harness::ProgramsDir() + "/" + program;
  const bool cxx = program.find(".cc") != std::string::npos;
  const std::string cc = Quote(InstallPrefix() + (cxx ? "/bin/ballarus-g++"
                                                      : "/bin/ballarus-gcc"));
  const std::string profile = dir + "/" + exe + ".profile";
  harness::Run("rm -f " + Quote(profile), dir);
  CommandResult c = harness::Run(
      cc + " " + opt + " " + options + " " + Quote(src) + " -o " + exe, dir);
  if (c.status != 0) {
    b.error = "compile: " + c.err;
    return b;
  }
  CommandResult r =
      harness::Run("./" + exe, dir, {"BALLARUS_PROFILE=" + profile});
  b.out = r.out;
  b.err = r.err;
  b.status = r.status;
  b.verify = harness::Run(Quote(Reconstruct()) + " verify " + Quote(profile),
                          dir);
  CommandResult pj = harness::Run(Quote(Reconstruct()) + " paths " +
                                      Quote(profile) + " --top 0 --json",
                                  dir);
  if (pj.status != 0) {
    b.error = "paths: " + pj.err;
    return b;
  }
  b.functions = json::array();
  const json all = json::parse(pj.out);
  for (const json& f : all.at("functions")) {
    if (!f.contains("paths")) continue;
    b.functions.push_back(f);
    auto& m = b.counts[f.at("name").get<std::string>() + "@" +
                       f.at("file").get<std::string>()];
    for (const json& p : f.at("paths"))
      m[p.at("id").get<std::string>()] = p.at("count").get<uint64_t>();
  }
  return b;
}

// Two builds of one program that must count the same paths: the same
// output and exit status, both verify, equal path counts in every function.
void ExpectSamePaths(const PathBuild& a, const PathBuild& b,
                     const std::string& ctx) {
  ASSERT_TRUE(a.error.empty()) << ctx << ": " << a.error;
  ASSERT_TRUE(b.error.empty()) << ctx << ": " << b.error;
  EXPECT_EQ(a.verify.status, 0) << ctx << ": " << a.verify.out << a.verify.err;
  EXPECT_EQ(b.verify.status, 0) << ctx << ": " << b.verify.out << b.verify.err;
  EXPECT_EQ(a.out, b.out) << ctx;
  EXPECT_EQ(a.err, b.err) << ctx;
  EXPECT_EQ(a.status, b.status) << ctx;
  EXPECT_FALSE(b.counts.empty()) << ctx;
  EXPECT_EQ(a.counts, b.counts) << ctx;
}

// One path-profiling mechanism against the same build without it: `prog`
// at `opt` built with `options` and with `options` + `off`; equal path
// counts (ExpectSamePaths), and `field` (if any) -- the per-function
// number of counts the mechanism left out -- 0 without it.  Returns the
// build with
// the mechanism; with `dump`, that build also writes the plugin's dump,
// returned there.
PathBuild BuildWithAndWithout(const std::string& dir, const std::string& prog,
                              const std::string& opt,
                              const std::string& options,
                              const std::string& off, const char* field,
                              const std::string& ctx,
                              std::string* dump = nullptr) {
  if (dump) harness::Run("rm -f *.ballarus", dir);
  PathBuild with = BuildRunPaths(
      dir, prog, opt,
      dump ? options + " -fplugin-arg-ballarus-dump" : options, "with");
  if (dump) *dump = harness::Run("cat *.ballarus", dir).out;
  const PathBuild without =
      BuildRunPaths(dir, prog, opt, options + " " + off, "without");
  ExpectSamePaths(with, without, ctx);
  if (field) EXPECT_EQ(without.Sum(field), 0u) << ctx;
  return with;
}

// A function's path executions: those that started at its entry, and the
// executions per end ("return", "no_return", "back_edge", ...); the
// returning paths' counts, ascending.
struct PathTally {
  uint64_t entries = 0;
  std::map<std::string, uint64_t> ends;
  std::vector<uint64_t> returned;
};

PathTally TallyPaths(const json& function) {
  PathTally t;
  for (const json& p : function.at("paths")) {
    const uint64_t n = p.at("count").get<uint64_t>();
    const std::string end = p.at("end").get<std::string>();
    if (p.at("start") == "entry") t.entries += n;
    t.ends[end] += n;
    if (end == "return") t.returned.push_back(n);
  }
  std::sort(t.returned.begin(), t.returned.end());
  return t;
}

// Paths determined by edge counts (path-from-edges, on by default): a
// function whose paths its edge counts determine gets edge counters, no
// path register, and reconstruct solves its path counts.  The oracle is
// the same program built with the register everywhere
// (tune-path-from-edges=off): path numbers are the same, so every function's
// path counts must be equal, in programs that leave by exit(), longjmp,
// exceptions and switches; and each program has such functions.
TEST(PathsFromEdges, SamePathCountsAsTheRegister) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/paths_from_edges";
  harness::MakeFreshDir(dir);
  auto from_edges = [](const PathBuild& b) {
    int n = 0;
    for (const json& f : b.functions) n += f.at("path_storage") == "edges";
    return n;
  };
  int total_from_edges = 0;
  for (const char* prog : {"switch.c", "exit_deep.c", "exceptions.cc",
                           "setjmp_longjmp.c", "goto_loops.c", "loops.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      const std::string m = "-fplugin-arg-ballarus-mode=path";
      const PathBuild fe = BuildRunPaths(dir, prog, opt, m, "fe");
      const PathBuild reg = BuildRunPaths(
          dir, prog, opt, m + " -fplugin-arg-ballarus-tune-path-from-edges=off",
          "reg");
      ExpectSamePaths(fe, reg, ctx);
      if (std::string(opt) == "-O0") EXPECT_GE(from_edges(fe), 1) << ctx;
      total_from_edges += from_edges(fe);
      EXPECT_EQ(from_edges(reg), 0) << ctx;
    }
  }
  // At -O2 too (loops.c's one function, a loop nest, has more paths than
  // its edge counts determine).
  EXPECT_GE(total_from_edges, 15);
}

// ---------------------------------------------------------------------------
// vfork then exec (programs/vfork_exec.c): each child runs in the parent's
// memory, so its edge counts are the parent's, and its path ends where a
// successful exec replaces it -- counted before the exec-family call.  By
// hand: three children's paths end at exec or _exit ("no_return"), the
// output is "total 9" (round 1's child exits 9).  mode=edge,path: verify
// compares the path-derived edges with the edge counters; mode=path: the
// edges derived from the paths equal a naive build's (verify --against).

TEST(VforkExec, ChildPathsEndAtExec) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/vfork_exec";
  harness::MakeFreshDir(dir);
  const std::string prog = "vfork_exec.c";
  for (const char* opt : {"-O0", "-O2"}) {
    const PathBuild naive = BuildRunPaths(
        dir, prog, opt, "-fplugin-arg-ballarus-mode=naive", "naive");
    ASSERT_EQ(naive.status, 0) << opt << ": naive build: " << naive.err;
    for (const char* mode : {"edge,path", "path"}) {
      const std::string ctx = prog + " " + opt + " mode=" + mode;
      const PathBuild b = BuildRunPaths(
          dir, prog, opt, std::string("-fplugin-arg-ballarus-mode=") + mode,
          "paths");
      ASSERT_TRUE(b.error.empty()) << ctx << ": " << b.error;
      EXPECT_EQ(b.out, "total 9\n") << ctx;
      EXPECT_EQ(b.status, 0) << ctx << ": " << b.err;
      EXPECT_EQ(b.verify.status, 0) << ctx << ": " << b.verify.out
                                    << b.verify.err;
      const json* main_paths = b.Function("main");
      ASSERT_NE(main_paths, nullptr) << ctx << ": no paths of main()";
      const PathTally t = TallyPaths(*main_paths);
      EXPECT_EQ(t.ends.count("no_return") ? t.ends.at("no_return") : 0, 3u)
          << ctx << ": the children's paths\n" << main_paths->dump();
      EXPECT_EQ(t.ends.count("return") ? t.ends.at("return") : 0, 1u)
          << ctx << main_paths->dump();
      if (std::string(mode) == "edge,path") {
        EXPECT_NE(b.verify.out.find("paths:"), std::string::npos)
            << ctx << ": verify compared no paths:\n" << b.verify.out;
        continue;
      }
      CommandResult va = harness::Run(
          Quote(Reconstruct()) + " verify paths.profile --against naive.profile",
          dir);
      EXPECT_EQ(va.status, 0) << ctx << ": verify --against naive:\n"
                              << va.out << va.err;
    }
  }
}

// ---------------------------------------------------------------------------
// Path counts taken from the edge counters (path-derive, on by default in
// mode=edge,path): where one path prefix reaches a path end, a pre-count or
// a cut, the count is not made and reconstruct reads it off the edge
// profile.  The oracle is the same build with every count made
// (tune-path-derive=off, with the loop entry cuts path-derive brings by default
// kept, so that the paths are the same): equal path counts in every
// function, the same output
// and exit status, and both verify (path-derived edges equal the edge
// counters).  The programs cover exit, longjmp, exceptions, fork, computed
// gotos, loop cuts and cut blocks (big_function).

TEST(PathDerive, SamePathCountsAsEveryCountMade) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_derive";
  harness::MakeFreshDir(dir);
  uint64_t total_derived = 0;
  for (const char* prog :
       {"exit_deep.c", "setjmp_longjmp.c", "exceptions.cc", "fork_vfork.c",
        "computed_goto.c", "goto_loops.c", "multi_loops.c", "loops.c",
        "big_function.c", "destructors.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      const PathBuild derived = BuildWithAndWithout(
          dir, prog, opt, "-fplugin-arg-ballarus-mode=edge,path",
          "-fplugin-arg-ballarus-tune-path-derive=off"
          " -fplugin-arg-ballarus-tune-path-loop-cuts=on",
          "derived_paths", ctx);
      total_derived += derived.Sum("derived_paths");
    }
  }
  EXPECT_GE(total_derived, 40u);
}

// ---------------------------------------------------------------------------
// Truncated paths counted by the balance of the function's calls
// (path-entry-balance, on by default in mode=path): a static function whose
// every call is a direct call from a path-profiled function of its TU does
// not make the pre-count before the first call on its way in, and
// reconstruct takes that truncated path's count from the calls' blocks.
// programs/entry_balance.c by hand (its comment): step() is invoked 19
// times, cut short in leave() twice, returns 8 times for odd i, 4 for i a
// multiple of 4 and 5 for the other even i.  The oracle for every program
// is also the same build with every pre-count made
// (tune-path-entry-balance=off).

TEST(PathEntryBalance, TruncationsByTheBalanceOfTheCalls) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_entry_balance";
  harness::MakeFreshDir(dir);
  uint64_t total_balanced = 0;
  for (const char* prog :
       {"entry_balance.c", "balance_loop.c", "exit_deep.c",
        "setjmp_longjmp.c", "exceptions.cc", "goto_recursion.c",
        "destructors.c", "fork_vfork.c", "split_function.c",
        "computed_goto.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      std::string dump;
      const PathBuild balanced = BuildWithAndWithout(
          dir, prog, opt, "-fplugin-arg-ballarus-mode=path",
          "-fplugin-arg-ballarus-tune-path-entry-balance=off",
          "entry_balanced_paths", ctx, &dump);
      total_balanced += balanced.Sum("entry_balanced_paths");
      if (std::string(prog) != "entry_balance.c") continue;
      EXPECT_NE(dump.find("counted by the balance of the function's"),
                std::string::npos)
          << ctx << "\n" << dump;
      EXPECT_EQ(balanced.status, 3) << ctx;
      EXPECT_EQ(balanced.out, "start\nexit 84\n") << ctx;
      // step() and walk(): each called only from this file.
      EXPECT_EQ(balanced.Sum("entry_balanced_paths"), 2u) << ctx;
      const json* step = balanced.Function("step");
      ASSERT_NE(step, nullptr) << ctx << ": no paths of step()";
      EXPECT_EQ(step->value("entry_balanced_paths", uint64_t{0}), 1u) << ctx;
      PathTally t = TallyPaths(*step);
      EXPECT_EQ(t.entries, 19u) << ctx << step->dump();
      EXPECT_EQ(t.ends["no_return"], 2u) << ctx;
      EXPECT_EQ(t.ends["return"], 17u) << ctx;
      EXPECT_EQ(t.returned, (std::vector<uint64_t>{4, 5, 8})) << ctx;
    }
  }
  EXPECT_GE(total_balanced, 6u);  // entry_balance.c 4, the others 3
}

// ---------------------------------------------------------------------------
// Entry counts from the callers' call blocks (edge mode, tune-entry-calls,
// core/entry_calls.h).  programs/entry_calls.c by hand: square() runs 44
// times (14 calls from main, 30 from mix()), mix() 20, check() 14,
// stop() 6 (the 6th exits); fib() is recursive and twice() is called
// through a pointer: both keep their entry counter.  The other programs
// take their callees' entries from calls that longjmp, throw, exit deep
// down, recurse mutually; fork_vfork.c's spawn() forks, and its call in
// main is resumed by the child's re-entry, so it keeps its counter.  The oracle for every count is the same build
// with every entry counted (tune-entry-calls=off); the Corpus compares
// edge mode with naive mode and gcov.

// `show --json` of `program` built at `opt` with ballarus-gcc `options` in
// `dir`, run; its exit status in *status.
json EdgeShow(const std::string& dir, const std::string& program,
              const std::string& opt, const std::string& options,
              int* status) {
  const std::string profile = dir + "/p.profile";
  harness::Run("rm -f p.profile", dir);
  const bool cxx = program.find(".cc") != std::string::npos;
  CommandResult c = harness::Run(
      Quote(InstallPrefix() + (cxx ? "/bin/ballarus-g++" : "/bin/ballarus-gcc")) +
          " " + opt + " " +
          options + " " + Quote(harness::ProgramsDir() + "/" + program) +
          " -o prog",
      dir);
  EXPECT_EQ(c.status, 0) << c.err;
  *status = harness::Run("./prog", dir, {"BALLARUS_PROFILE=" + profile}).status;
  CommandResult v =
      harness::Run(Quote(Reconstruct()) + " verify " + Quote(profile), dir);
  EXPECT_EQ(v.status, 0) << program << " " << opt << " " << options << ":\n"
                         << v.out << v.err;
  json j;
  std::string error;
  EXPECT_TRUE(ShowJson(profile, dir, &j, &error)) << error;
  return j;
}

// The functions of `with` and `without` (the same build but for
// tune-entry-calls=off) have equal counts, and `with` counts one entry
// fewer for each function whose entry comes from calls; their names.
std::set<std::string> CompareEntryCalls(const json& with, const json& without,
                                        const std::string& ctx) {
  std::set<std::string> from_calls;
  EXPECT_EQ(with.at("functions").size(), without.at("functions").size())
      << ctx;
  if (with.at("functions").size() != without.at("functions").size())
    return from_calls;
  for (size_t i = 0; i < with.at("functions").size(); ++i) {
    const json& f = with.at("functions")[i];
    const json& g = without.at("functions")[i];
    const std::string name = f.at("name");
    EXPECT_EQ(name, g.at("name")) << ctx;
    EXPECT_FALSE(g.value("entry_from_calls", false)) << ctx << " " << name;
    const bool from = f.value("entry_from_calls", false);
    if (from) from_calls.insert(name);
    for (const char* part : {"blocks", "edges"})
      for (size_t k = 0; k < f.at(part).size(); ++k)
        EXPECT_EQ(f.at(part)[k].at("count"), g.at(part)[k].at("count"))
            << ctx << " " << name << " " << part << " " << k;
    size_t with_n = 0, without_n = 0;
    for (const json& e : f.at("edges")) with_n += e.at("counted").get<bool>();
    for (const json& e : g.at("edges")) without_n += e.at("counted").get<bool>();
    EXPECT_EQ(with_n + (from ? 1 : 0), without_n) << ctx << " " << name;
  }
  return from_calls;
}

TEST(EntryCalls, FromTheCallersCallBlocks) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/entry_calls";
  harness::MakeFreshDir(dir);
  const std::map<std::string, uint64_t> by_hand = {
      {"square", 44}, {"mix", 20}, {"check", 14}, {"stop", 6}};
  for (const char* prog : {"entry_calls.c", "setjmp_longjmp.c", "exit_deep.c",
                           "exceptions.cc", "goto_recursion.c",
                           "fork_vfork.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      int with_status = -1, without_status = -1;
      const json with = EdgeShow(dir, prog, opt,
                                 "-fplugin-arg-ballarus-mode=edge",
                                 &with_status);
      const json without = EdgeShow(dir, prog, opt,
                                    "-fplugin-arg-ballarus-mode=edge "
                                    "-fplugin-arg-ballarus-tune-entry-calls=off",
                                    &without_status);
      EXPECT_EQ(with_status, without_status) << ctx;
      const std::set<std::string> from = CompareEntryCalls(with, without, ctx);
      if (std::string(opt) == "-O0") EXPECT_FALSE(from.empty()) << ctx;
      if (std::string(prog) != "entry_calls.c") continue;
      EXPECT_EQ(with_status, 3) << ctx;
      std::set<std::string> want;
      for (const auto& [name, calls] : by_hand) want.insert(name);
      EXPECT_EQ(from, want) << ctx;
      for (const json& f : with.at("functions"))
        if (by_hand.count(f.at("name")))
          EXPECT_EQ(f.at("execution_count"), by_hand.at(f.at("name")))
              << ctx << " " << f.at("name");
    }
  }
}

// ---------------------------------------------------------------------------
// Truncated paths counted by the balance of their start (path-balance, on
// by default in mode=path): at a loop header entered by cut edges, one
// pre-count (before the first call on the way from it) is not made, and
// reconstruct takes the truncated path's count from the header's balance.
// programs/balance_loop.c by hand: run() is entered 3 times (loop entry
// cut), goes round 7 + 4 + 5 = 16 times, is cut short in its call twice
// (longjmp at i == 7, exit at i == 20) and returns once.  The oracle for
// the other programs is the same build with every pre-count made
// (tune-path-balance=off).

TEST(PathBalance, TruncationsByTheBalanceOfTheirStart) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_balance";
  harness::MakeFreshDir(dir);
  uint64_t total_balanced = 0;
  for (const char* prog :
       {"balance_loop.c", "exit_deep.c", "setjmp_longjmp.c", "exceptions.cc",
        "goto_loops.c", "multi_loops.c", "loops.c", "big_function.c",
        "destructors.c", "fork_vfork.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      std::string dump;
      const PathBuild balanced = BuildWithAndWithout(
          dir, prog, opt, "-fplugin-arg-ballarus-mode=path",
          "-fplugin-arg-ballarus-tune-path-balance=off", "balanced_paths", ctx,
          &dump);
      total_balanced += balanced.Sum("balanced_paths");
      if (std::string(prog) != "balance_loop.c") continue;
      EXPECT_NE(dump.find("counted by the balance of block"),
                std::string::npos)
          << ctx << "\n" << dump;
      EXPECT_EQ(balanced.status, 3) << ctx;
      EXPECT_EQ(balanced.out, "start\n18 1\n") << ctx;
      const json* run = balanced.Function("run");
      ASSERT_NE(run, nullptr) << ctx << ": no paths of run()";
      EXPECT_EQ(run->value("balanced_paths", uint64_t{0}), 1u) << ctx;
      PathTally t = TallyPaths(*run);
      EXPECT_EQ(t.entries, 3u) << ctx << run->dump();
      EXPECT_EQ(t.ends["back_edge"], 16u) << ctx;
      EXPECT_EQ(t.ends["no_return"], 2u) << ctx;
      EXPECT_EQ(t.ends["return"], 1u) << ctx;
    }
  }
  EXPECT_GE(total_balanced, 10u);
}

// ---------------------------------------------------------------------------
// Pre-counts made on the edges into the call's block where several path
// prefixes reach the call (path-precount-hoist, on by default): the oracle
// is the same build counting in the call's block
// (tune-path-precount-hoist=off), in both path modes, with programs that leave
// by exit(), longjmp and exceptions; multi_loops.c and exceptions.cc have
// such calls, and the dump must show their counts moved.

TEST(PathPrecountHoist, SamePathCountsAsCountedInTheCallBlock) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_precount_hoist";
  harness::MakeFreshDir(dir);
  for (const char* prog :
       {"multi_loops.c", "exceptions.cc", "exit_deep.c", "setjmp_longjmp.c",
        "goto_recursion.c", "big_function.c"}) {
    for (const char* mode : {"path", "edge,path"}) {
      for (const char* opt : {"-O0", "-O2"}) {
        const std::string ctx =
            std::string(prog) + " " + mode + " " + opt;
        std::string dump;
        // (In mode=path a call several prefixes reach has its block cut
        // instead, path-call-cuts: off here, so that its pre-count is.)
        BuildWithAndWithout(
            dir, prog, opt,
            std::string("-fplugin-arg-ballarus-mode=") + mode +
                (std::string(mode) == "path"
                     ? " -fplugin-arg-ballarus-tune-path-call-cuts=off"
                     : ""),
            "-fplugin-arg-ballarus-tune-path-precount-hoist=off", nullptr, ctx,
            &dump);
        const std::string p = prog;
        if (p == "multi_loops.c" || p == "exceptions.cc")
          EXPECT_NE(dump.find("pre-count made on"), std::string::npos)
              << ctx << "\n" << dump.substr(0, 4000);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Call cuts and loop entry ends by balance (path-call-cuts, on by default
// in mode=path; path-balance).  A call that may not return whose block
// several path prefixes reach has its block cut, so the paths through it
// are counted as two (to the call, and from it): the path numbers change,
// but not what the paths add up to.  The oracle is the build without the
// cuts (tune-path-call-cuts=off): per function, as many paths from the entry,
// as many returns and as many executions cut short at a call (exit,
// longjmp, exceptions, abort-free programs that leave early).  In
// mode=edge,path (tune-path-call-cuts=on) the edge profile the cut paths give
// must equal the edge counters (`verify`).  And a loop entry cut's count
// left to its header's balance gives what counting it gives
// (tune-path-balance=off).

TEST(PathCallCuts, SameEntriesReturnsAndTruncationsAsWithout) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_call_cuts";
  harness::MakeFreshDir(dir);
  const std::string m = "-fplugin-arg-ballarus-mode=";
  const std::string cc = " -fplugin-arg-ballarus-tune-path-call-cuts=";
  size_t cut = 0, entry_ends = 0;
  for (const char* prog :
       {"multi_loops.c", "exceptions.cc", "exit_deep.c", "setjmp_longjmp.c",
        "goto_recursion.c", "big_function.c", "balance_loop.c",
        "interp_hash.c"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(prog) + " " + opt;
      harness::Run("rm -f *.ballarus", dir);
      const PathBuild with = BuildRunPaths(
          dir, prog, opt, m + "path -fplugin-arg-ballarus-dump", "with");
      const std::string dump = harness::Run("cat *.ballarus", dir).out;
      for (size_t at = 0; (at = dump.find("its call may not return and "
                                          "several prefixes reach it",
                                          at)) != std::string::npos;
           ++at)
        ++cut;
      for (size_t at = 0; (at = dump.find("(ending at a loop entry cut) "
                                          "counted by the balance",
                                          at)) != std::string::npos;
           ++at)
        ++entry_ends;
      const PathBuild without =
          BuildRunPaths(dir, prog, opt, m + "path" + cc + "off", "without");
      ASSERT_TRUE(with.error.empty()) << ctx << ": " << with.error;
      ASSERT_TRUE(without.error.empty()) << ctx << ": " << without.error;
      EXPECT_EQ(with.verify.status, 0)
          << ctx << ": " << with.verify.out << with.verify.err;
      EXPECT_EQ(with.out, without.out) << ctx;
      EXPECT_EQ(with.err, without.err) << ctx;
      EXPECT_EQ(with.status, without.status) << ctx;
      ASSERT_EQ(with.functions.size(), without.functions.size()) << ctx;
      for (const json& f : without.functions) {
        const std::string name = f.at("name").get<std::string>();
        const json* g = with.Function(name);
        ASSERT_NE(g, nullptr) << ctx << ": " << name;
        const PathTally a = TallyPaths(*g), b = TallyPaths(f);
        EXPECT_EQ(a.entries, b.entries) << ctx << ": " << name;
        EXPECT_EQ(a.ends.count("return") ? a.ends.at("return") : 0,
                  b.ends.count("return") ? b.ends.at("return") : 0)
            << ctx << ": " << name;
        EXPECT_EQ(a.ends.count("no_return") ? a.ends.at("no_return") : 0,
                  b.ends.count("no_return") ? b.ends.at("no_return") : 0)
            << ctx << ": " << name;
      }
      // Every count made: the same paths.
      BuildWithAndWithout(dir, prog, opt, m + "path",
                          "-fplugin-arg-ballarus-tune-path-balance=off",
                          nullptr, ctx + " balance");
      // The cut paths' edge profile is the edge counters'.
      const PathBuild ep =
          BuildRunPaths(dir, prog, opt, m + "edge,path" + cc + "on", "ep");
      ASSERT_TRUE(ep.error.empty()) << ctx << ": " << ep.error;
      EXPECT_EQ(ep.verify.status, 0)
          << ctx << " edge,path: " << ep.verify.out << ep.verify.err;
      EXPECT_EQ(ep.out, without.out) << ctx;
      EXPECT_EQ(ep.status, without.status) << ctx;
    }
  }
  EXPECT_GE(cut, 10u);
  EXPECT_GE(entry_ends, 4u);
}

// ---------------------------------------------------------------------------
// Counter updates kept apart from GCC's -O2 passes (programs/interp_hash.c,
// whose comment says why): a computed goto whose path end went onto the
// edges into it turns cross-jumping off (path-keep-tails), and a counter
// updated per iteration of a loop that may touch counter memory gets an
// empty asm after it (loop-barrier).  Neither changes a count: the oracle
// is the same build with both off, in both path modes and edge mode, at
// -O0 and -O2.  And they do what they are for, read off the -O2 assembly:
// every one of run()'s eight `goto *` sites keeps its own indirect jump
// (the dispatch duplicated into each handler; with tune-path-keep-tails=off
// GCC folds the handlers' tails together and fewer remain), and no counter
// in main (where the hash loop is inlined) is written by a plain store of
// a value carried in a register (with tune-loop-barrier=off GCC's PRE and
// IVOPTs make the hash loop's count one).

namespace {

// The function `fn`'s lines of the assembly file `s` (GCC's layout: from
// its label to .cfi_endproc).
std::string AsmFunction(const std::string& s, const std::string& fn) {
  const size_t b = s.find("\n" + fn + ":\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find(".cfi_endproc", b);
  return s.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

size_t CountMatches(const std::string& text, const std::regex& re) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                       std::sregex_iterator());
}

}  // namespace

TEST(LoopBarrierKeepTails, SameCountsAndTheCodeGccWouldHaveSpoilt) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/loop_barrier_keep_tails";
  harness::MakeFreshDir(dir);
  const std::string off =
      "-fplugin-arg-ballarus-tune-loop-barrier=off "
      "-fplugin-arg-ballarus-tune-path-keep-tails=off";
  for (const char* mode : {"path", "edge,path"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string("interp_hash.c ") + mode + " " + opt;
      const PathBuild with = BuildWithAndWithout(
          dir, "interp_hash.c", opt,
          std::string("-fplugin-arg-ballarus-mode=") + mode, off, nullptr,
          ctx);
      EXPECT_EQ(with.out, "run=948 traced=670\nstrings=800 sum=1493423\n")
          << ctx;
    }
  }
  // Edge mode: the same edge profile with and without the barrier.
  const std::string src = harness::ProgramsDir() + "/interp_hash.c";
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  for (const char* opt : {"-O0", "-O2"}) {
    std::string shown[2];
    for (int i = 0; i < 2; ++i) {
      const std::string exe = i ? "edge_off" : "edge_on";
      ASSERT_EQ(harness::Run(cc + " " + opt + " " + (i ? off : "") + " " +
                                 Quote(src) + " -o " + exe,
                             dir).status,
                0);
      const std::string profile = dir + "/" + exe + ".prof";
      const CommandResult r =
          harness::Run("./" + exe, dir, {"BALLARUS_PROFILE=" + profile});
      EXPECT_EQ(r.out, "run=948 traced=670\nstrings=800 sum=1493423\n");
      json show;
      std::string error;
      ASSERT_TRUE(ShowJson(profile, dir, &show, &error)) << error;
      shown[i] = show.at("functions").dump();
    }
    EXPECT_EQ(shown[0], shown[1]) << "edge " << opt;
  }

  // The assembly at -O2.
  const std::regex indirect_jump(R"(\tjmp\t\*)");
  const std::regex stored_counter(
      R"(\tmovq\t%r[a-z0-9]+, [0-9]*\+?__ballarus_counters)");
  auto assembly = [&](const std::string& options) {
    const CommandResult c = harness::Run(
        cc + " -O2 " + options + " -S " + Quote(src) + " -o out.s", dir);
    EXPECT_EQ(c.status, 0) << options << ": " << c.err;
    return harness::Run("cat out.s", dir).out;
  };
  for (const char* mode : {"path", "edge,path"}) {
    const std::string m = std::string("-fplugin-arg-ballarus-mode=") + mode;
    const std::string on = assembly(m);
    const std::string tails_off =
        assembly(m + " -fplugin-arg-ballarus-tune-path-keep-tails=off");
    // (Loop registers would keep the hash loop's counter out of memory
    // altogether: see LoopRegisters below.)
    const std::string barrier_off =
        assembly(m + " -fplugin-arg-ballarus-tune-loop-barrier=off "
                     "-fplugin-arg-ballarus-tune-loop-registers=off");
    const size_t jumps = CountMatches(AsmFunction(on, "run"), indirect_jump);
    EXPECT_GE(jumps, 8u) << mode << "\n" << AsmFunction(on, "run");
    EXPECT_LT(CountMatches(AsmFunction(tails_off, "run"), indirect_jump),
              std::min<size_t>(jumps, 8))
        << mode;
    EXPECT_EQ(CountMatches(AsmFunction(on, "main"), stored_counter), 0u)
        << mode << "\n" << AsmFunction(on, "main");
    EXPECT_GE(CountMatches(AsmFunction(barrier_off, "main"), stored_counter),
              1u)
        << mode;
  }
  const std::string edge = assembly("-fplugin-arg-ballarus-mode=edge");
  EXPECT_EQ(CountMatches(AsmFunction(edge, "main"), stored_counter), 0u)
      << AsmFunction(edge, "main");
}

// ---------------------------------------------------------------------------
// Inlining as in the plain build (tune-inline-sizes, inline_sizes.cc): GCC's
// inliner reads summaries computed without the instrumentation.  The oracle
// is the plain build's assembly: programs/inline_sizes.c's `slot` is
// inlined into every caller by gcc -O2, so every mode's build has as many
// calls of it as the plain one (none), and with tune-inline-sizes=off (the
// instrumentation counted, as in gcov's build) some stay.  Its counts are
// checked against the naive profile and gcov's by Corpus.
TEST(InlineSizes, InlinesWhatThePlainBuildInlines) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/inline_sizes";
  harness::MakeFreshDir(dir);
  const std::string src = harness::ProgramsDir() + "/inline_sizes.c";
  const std::regex call_slot(R"(\tcall\tslot\b)");
  auto calls = [&](const std::string& cc, const std::string& options) {
    const CommandResult c = harness::Run(
        cc + " -O2 " + options + " -S " + Quote(src) + " -o out.s", dir);
    EXPECT_EQ(c.status, 0) << options << ": " << c.err;
    return CountMatches(harness::Run("cat out.s", dir).out, call_slot);
  };
  const size_t plain = calls("gcc", "");
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  for (const char* mode : {"edge", "path", "edge,path"}) {
    const std::string m = std::string("-fplugin-arg-ballarus-mode=") + mode;
    EXPECT_EQ(calls(cc, m), plain) << mode;
    EXPECT_GT(calls(cc, m + " -fplugin-arg-ballarus-tune-inline-sizes=off"),
              plain)
        << mode;
  }
}

// ---------------------------------------------------------------------------
// Loop registers (tune-loop-registers, loop_registers.cc): in call-free counted
// loops, fixed-address counts are made in locals added to the counters on
// each exit.  The oracle is the same program with every count made in
// memory (tune-loop-registers=off): the path numbers are the same, so every
// path count must be equal, with the programs' output, at -O1 to -O3, in
// path and edge,path modes, on programs whose loops are left by breaks,
// returns, exit(), longjmp and exceptions.  The dumps must show counts
// made in locals (or the comparison proves nothing), and sort_loops.c's
// quadrant loop must count its two paths without the read-modify-write
// through a register address (`addq $1, (%reg)`) it needs in memory, as
// must its copy_buckets loop, whose counts land on one of two paths each
// (a pair of locals: the register's sum and the count, PathEmitter::
// CountChoices).
TEST(LoopRegisters, SamePathsAsCountedInMemory) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/loop_registers";
  harness::MakeFreshDir(dir);
  const std::string off = "-fplugin-arg-ballarus-tune-loop-registers=off";
  const std::regex in_local("path known, counted in a local");
  const std::regex in_pair("one of a few paths, counted in locals");
  const std::regex loop_taken("counters with a fixed address in locals");
  size_t locals = 0;
  for (const char* prog : {"sort_loops.c", "interp_hash.c", "loops.c",
                           "multi_loops.c", "goto_loops.c", "exit_deep.c",
                           "setjmp_longjmp.c", "exceptions.cc"}) {
    for (const char* mode : {"path", "edge,path"}) {
      for (const char* opt : {"-O1", "-O2", "-O3"}) {
        const std::string ctx =
            std::string(prog) + " " + mode + " " + opt;
        std::string dump;
        BuildWithAndWithout(dir, prog, opt,
                            std::string("-fplugin-arg-ballarus-mode=") + mode,
                            off, nullptr, ctx, &dump);
        const size_t here = CountMatches(dump, in_local);
        locals += here;
        if (std::string(prog) == "sort_loops.c") {
          EXPECT_GE(CountMatches(dump, loop_taken), 4u) << ctx;
          if (std::string(mode) == "path") {
            EXPECT_GE(here, 4u) << ctx;
            EXPECT_GE(CountMatches(dump, in_pair), 2u) << ctx;
          }
        }
      }
    }
  }
  EXPECT_GE(locals, 20u);

  const std::string src = harness::ProgramsDir() + "/sort_loops.c";
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  auto function = [&](const std::string& name, const std::string& options) {
    const CommandResult c = harness::Run(
        cc + " -O2 -fplugin-arg-ballarus-mode=path " + options + " -S " +
            Quote(src) + " -o out.s",
        dir);
    EXPECT_EQ(c.status, 0) << options << ": " << c.err;
    const std::string s = harness::Run("cat out.s", dir).out;
    std::string f = AsmFunction(s, name);
    if (f.empty()) f = AsmFunction(s, name + ".constprop.0");
    EXPECT_FALSE(f.empty()) << name << "\n" << s;
    return f;
  };
  const std::regex through_register(R"(\taddq\t\$1, \(%r[a-z0-9]+\))");
  for (const char* name : {"set_quadrant", "copy_buckets"}) {
    const std::string on = function(name, "");
    const std::string in_memory = function(name, off);
    EXPECT_EQ(CountMatches(on, through_register), 0u) << name << "\n" << on;
    EXPECT_GE(CountMatches(in_memory, through_register), 1u)
        << name << "\n" << in_memory;
  }
}

// ---------------------------------------------------------------------------
// A return after a call that always returns, counted before the call
// (programs/tail_call.c): in mode=path, pick()'s `return leaf(a)` stays the
// tail call the plain -O2 build makes (`jmp leaf`), where counting after
// the call made it `call leaf; addq; ret`.  The counts are those of the
// same build with every return counted in its own block (tune-path-hoist=off:
// the same path numbers), and the checksum is the plain build's.

TEST(PathReturnBeforeCall, TailCallKeptAndSamePaths) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_return_before_call";
  harness::MakeFreshDir(dir);
  const std::string src = harness::ProgramsDir() + "/tail_call.c";
  const std::string cc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  const std::regex tail_call(R"(\tjmp\tleaf\b)");
  auto assembly = [&](const std::string& compiler, const std::string& options) {
    const CommandResult c = harness::Run(
        compiler + " -O2 " + options + " -S " + Quote(src) + " -o out.s", dir);
    EXPECT_EQ(c.status, 0) << options << ": " << c.err;
    return AsmFunction(harness::Run("cat out.s", dir).out, "pick");
  };
  const std::string plain = assembly("gcc", "");
  ASSERT_EQ(CountMatches(plain, tail_call), 1u) << plain;
  const std::string path = assembly(cc, "-fplugin-arg-ballarus-mode=path");
  EXPECT_EQ(CountMatches(path, tail_call), 1u) << path;
  EXPECT_NE(path.find("__ballarus_counters"), std::string::npos) << path;
  CommandResult c = harness::Run("gcc -O2 " + Quote(src) + " -o plain", dir);
  ASSERT_EQ(c.status, 0) << c.err;
  const CommandResult r = harness::Run("./plain", dir);
  ASSERT_EQ(r.status, 0);
  for (const char* opt : {"-O0", "-O2"}) {
    for (const char* mode : {"path", "edge,path"}) {
      const std::string ctx = std::string(opt) + " " + mode;
      const PathBuild with = BuildWithAndWithout(
          dir, "tail_call.c", opt,
          std::string("-fplugin-arg-ballarus-mode=") + mode,
          "-fplugin-arg-ballarus-tune-path-hoist=off", nullptr, ctx);
      EXPECT_EQ(with.out, r.out) << ctx;
      const json* pick = with.Function("pick");
      ASSERT_NE(pick, nullptr) << ctx;
      const PathTally t = TallyPaths(*pick);
      EXPECT_EQ(t.entries, 1000u) << ctx;
      EXPECT_EQ(t.ends.count("return") ? t.ends.at("return") : 0, 1000u)
          << ctx;
    }
  }
}

// ---------------------------------------------------------------------------
// A cut block's count made on the edges into it (path-cut-hoist, on by
// default): the oracle is the same build counting at the block's start
// (tune-path-cut-hoist=off), in both path modes; big_function.c's functions
// have more paths than a dense table holds, so they are cut at blocks, and
// the dump must show counts moved.

TEST(PathCutHoist, SamePathCountsAsCountedAtTheBlock) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_cut_hoist";
  harness::MakeFreshDir(dir);
  for (const char* mode : {"path", "edge,path"}) {
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string("big_function.c ") + mode + " " + opt;
      const std::string m = std::string("-fplugin-arg-ballarus-mode=") + mode;
      harness::Run("rm -f *.ballarus", dir);
      const PathBuild hoisted = BuildRunPaths(
          dir, "big_function.c", opt, m + " -fplugin-arg-ballarus-dump",
          "hoisted");
      const CommandResult dump = harness::Run("cat *.ballarus", dir);
      EXPECT_NE(dump.out.find("its count made on"), std::string::npos)
          << ctx << "\n" << dump.out.substr(0, 4000);
      const PathBuild at_block = BuildRunPaths(
          dir, "big_function.c", opt,
          m + " -fplugin-arg-ballarus-tune-path-cut-hoist=off", "at_block");
      ExpectSamePaths(hoisted, at_block, ctx);
    }
  }
}

// ---------------------------------------------------------------------------
// Multi-path loop entry cuts (path-loop-cuts: by default, but not in
// mode=edge,path with tune-path-derive=off)
// and path ends hoisted onto the edges into their block (path-hoist: back
// edges' onto the latch's in-edges, returns' onto chords from branches too),
// on programs/multi_loops.c: the corpus test checks the defaults against
// gcov and the naive profile; here the dump must show each where it
// applies and not where it is off (at -O2, get_bits' loop left uncut on
// GCC's guessed profile), and every combination must give the
// program's output and a path profile that verifies (mode=edge,path: its
// path-derived edges equal the edge counters).

TEST(PathMultiLoopCutsAndHoists, ShownInTheDumpAndExactEachWay) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/path_multi_loops";
  harness::MakeFreshDir(dir);
  ASSERT_EQ(harness::Run("cp " + Quote(harness::ProgramsDir() +
                                       "/multi_loops.c") + " .", dir).status,
            0);
  const std::string gcc = Quote(InstallPrefix() + "/bin/ballarus-gcc");
  const std::string pool = "BALLARUS_PROFILE=" + dir + "/";
  CommandResult c = harness::Run("gcc -O0 multi_loops.c -o plain", dir);
  ASSERT_EQ(c.status, 0) << c.err;
  CommandResult r = harness::Run("./plain", dir);
  ASSERT_EQ(r.status, 0);
  const std::string expected = r.out;
  auto occurrences = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(what, at)) != std::string::npos;
         ++at)
      ++n;
    return n;
  };
  struct Config {
    std::string options;
    bool cuts, hoists;
  };
  const std::string m = "-fplugin-arg-ballarus-mode=";
  const std::string lc = " -fplugin-arg-ballarus-tune-path-loop-cuts=";
  const std::string ho = " -fplugin-arg-ballarus-tune-path-hoist=";
  const std::string dv = " -fplugin-arg-ballarus-tune-path-derive=";
  const std::vector<Config> configs = {
      {m + "path", true, true},
      {m + "edge,path", true, true},
      {m + "edge,path" + dv + "off", false, true},
      {m + "edge,path" + lc + "on" + dv + "off", true, true},
      {m + "edge,path" + lc + "on" + ho + "off", true, false},
      {m + "path" + lc + "off", false, true},
      {m + "path" + ho + "off", true, false},
  };
  for (const char* opt : {"-O0", "-O2"}) {
    for (const Config& cf : configs) {
      const std::string ctx = std::string("multi_loops ") + opt + " " +
                              cf.options;
      harness::Run("rm -f paths.profile *.ballarus", dir);
      c = harness::Run(gcc + " " + cf.options +
                           " -fplugin-arg-ballarus-dump " + opt +
                           " multi_loops.c -o ml",
                       dir);
      ASSERT_EQ(c.status, 0) << ctx << ": " << c.err;
      r = harness::Run("./ml", dir, {pool + "paths.profile"});
      EXPECT_EQ(r.status, 0) << ctx;
      EXPECT_EQ(r.out, expected) << ctx;
      CommandResult d = harness::Run("cat *.ballarus", dir);
      // partition's two inner loops and its outer one, collatz, checked
      // (its call to check may exit: the entry cut is still exact).
      EXPECT_EQ(d.out.find("(several paths per iteration;") !=
                    std::string::npos,
                cf.cuts)
          << ctx << "\n" << d.out;
      // The partition loops' latches merge the swap and the plain step.
      EXPECT_EQ(d.out.find("its path end counted on the") !=
                    std::string::npos,
                cf.hoists)
          << ctx << "\n" << d.out;
      if (std::string(opt) == "-O2") {  // greater's returns
        EXPECT_EQ(d.out.find("chords from branches") != std::string::npos,
                  cf.hoists)
            << ctx << "\n" << d.out;
        // get_bits' loop: GCC's guessed profile (none at -O0) says it
        // rarely goes round.
        EXPECT_EQ(occurrences(d.out, "under one iteration per entry"),
                  cf.cuts ? 1u : 0u)
            << ctx << "\n" << d.out;
      }
      CommandResult v = harness::Run(Quote(Reconstruct()) +
                                         " verify paths.profile", dir);
      EXPECT_EQ(v.status, 0) << ctx << ": " << v.out << v.err;
      if (cf.options.find("edge,path") != std::string::npos) {
        EXPECT_NE(v.out.find("paths: 7 functions"), std::string::npos)
            << ctx << v.out;
        EXPECT_NE(v.out.find(" 0 not comparable"), std::string::npos)
            << ctx << v.out;
      }
    }
  }
}

TEST(Determinism, IdenticalObjects) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string dir = harness::TempRoot() + "/determinism";
  harness::MakeFreshDir(dir);
  for (const char* src : {"loops.c", "exceptions.cc", "big_function.c"}) {
    std::string s = src;
    bool cxx = s.size() > 3 && s.compare(s.size() - 3, 3, ".cc") == 0;
    CommandResult c = harness::Run(
        "cp " + Quote(harness::ProgramsDir() + "/" + s) + " .", dir);
    ASSERT_EQ(c.status, 0) << c.err;
    for (const char* opt : {"-O0", "-O2"})
    for (const char* mode : {"naive", "edge,path"}) {
      // edge,path: path numbering, cuts (big_function has > 2^63 paths)
      // and hashed tables must be deterministic too.
      std::string cc = Quote(InstallPrefix() + "/bin/" +
                             (cxx ? "ballarus-g++" : "ballarus-gcc")) +
                       " -fplugin-arg-ballarus-mode=" + mode +
                       " -frandom-seed=x " + opt + " -c " + s;
      // Same output name both times: the metadata records the .gcda name
      // GCC derives from it (plugin/gcov_arcs.h), as gcov's objects do.
      CommandResult a = harness::Run(cc + " -o a.o && mv a.o first.o", dir);
      CommandResult b = harness::Run(cc + " -o a.o", dir);
      ASSERT_EQ(a.status, 0) << a.err;
      ASSERT_EQ(b.status, 0) << b.err;
      CommandResult cmp = harness::Run("cmp first.o a.o", dir);
      EXPECT_EQ(cmp.status, 0) << s << " " << opt << " " << mode << ": "
                               << cmp.out;
    }
  }
}

// ---------------------------------------------------------------------------
// The Wu-Larus estimate (tune-estimator=wu-larus, estimator/wu_larus.h)
// moves edge counters, never counts: each program's edge profile with it
// equals its naive profile (CompareEdgeWithNaive, which also checks
// |E|-|V|+1 counters per function), and the pass dump names the estimate
// and the heuristics it applied.  (Corpus checks the default estimate.)
TEST(WuLarusEstimator, EdgeProfilesEqualNaive) {
  ASSERT_FALSE(InstallPrefix().empty());
  const std::string root = harness::TempRoot() + "/wu_larus";
  size_t heuristic_lines = 0;
  for (const char* name : {"loops", "switch", "exit_deep", "setjmp_longjmp",
                           "exceptions", "computed_goto", "goto_recursion"}) {
    const Program* p = FindProgram(name);
    ASSERT_NE(p, nullptr) << name << " not in MANIFEST";
    for (const char* opt : {"-O0", "-O2"}) {
      const std::string ctx = std::string(name) + " " + opt;
      const std::string dir = root + "/" + name + opt;
      BuildOptions o;
      o.kind = Kind::kBallarus;
      o.opt = opt;
      o.ballarus_prefix = InstallPrefix();
      const Outcome naive = BuildAndRun(*p, o, dir + "/naive");
      o.ballarus_mode = "edge";
      o.extra_flags = {"-fplugin-arg-ballarus-tune-estimator=wu-larus",
                       "-fplugin-arg-ballarus-dump"};
      const Outcome wl = BuildAndRun(*p, o, dir + "/wu-larus");
      ASSERT_TRUE(naive.build.ok) << naive.build.log;
      ASSERT_TRUE(wl.build.ok) << wl.build.log;
      EXPECT_EQ(wl.run.out, naive.run.out) << ctx << ": stdout";
      EXPECT_EQ(wl.run.status, naive.run.status) << ctx << ": exit status";
      json n, w;
      std::string error;
      ASSERT_TRUE(ShowJson(naive.run_dir + "/ballarus.profile",
                           naive.run_dir, &n, &error))
          << ctx << ": " << error;
      ASSERT_TRUE(
          ShowJson(wl.run_dir + "/ballarus.profile", wl.run_dir, &w, &error))
          << ctx << ": " << error;
      Diff diff(ctx + ": Wu-Larus edge mode vs naive mode");
      CompareEdgeWithNaive(n, w, &diff);
      diff.Report();
      const std::string dump =
          harness::Run("find . -name '*.ballarus' -exec cat {} +",
                       wl.build.dir)
              .out;
      EXPECT_NE(dump.find("weights: Wu-Larus heuristic"), std::string::npos)
          << ctx;
      EXPECT_EQ(dump.find("weights: Ball-Larus heuristic"), std::string::npos)
          << ctx;
      for (size_t at = 0;
           (at = dump.find(" heuristics:", at)) != std::string::npos; ++at)
        ++heuristic_lines;
    }
  }
  EXPECT_GE(heuristic_lines, 20u);
}

}  // namespace
