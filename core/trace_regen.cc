// trace_regen.cc — Figure 14 of Ball & Larus TOPLAS'94 over a stack of
// activations (see trace_regen.h).
#include "core/trace_regen.h"

#include <algorithm>
#include <utility>

namespace ballarus {
namespace {

// Per function: flow successors, and for predicates the witness -> out-edge
// choice (computed on first use).
struct Tables {
  std::vector<std::vector<uint32_t>> succ;
  // A computed goto's dispatch block: the blocks it may go to.
  std::vector<std::vector<uint32_t>> targets;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> choice;
  // For predicates: (call block, out-edge) of the call blocks each out-edge
  // reaches witness-free (site(p, q), trace_plan.h).
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> site_choice;
  std::vector<bool> has_choice;
};

// Per block: the targets of a dispatch block's computed goto, else none.
std::vector<std::vector<uint32_t>> DispatchTargets(const Function& fn) {
  std::vector<std::vector<uint32_t>> targets(fn.blocks.size());
  const std::vector<bool> dispatch = DispatchBlocks(fn);
  for (const Edge& e : fn.edges)
    if (e.src < dispatch.size() && dispatch[e.src] &&
        (e.flags & kEdgeAbnormal) && e.dst > kExitBlock &&
        e.dst < dispatch.size())
      targets[e.src].push_back(e.dst);
  return targets;
}

Tables BuildTables(const Function& fn) {
  Tables t;
  const size_t nb = fn.blocks.size();
  t.succ.resize(nb);
  t.choice.resize(nb);
  t.site_choice.resize(nb);
  t.has_choice.assign(nb, false);
  for (size_t i = 0; i < fn.edges.size(); ++i) {
    const Edge& e = fn.edges[i];
    if (IsTraceFlowEdge(e) && e.src < nb && e.dst < nb)
      t.succ[e.src].push_back(static_cast<uint32_t>(i));
  }
  t.targets = DispatchTargets(fn);
  return t;
}

void SortUnique(std::vector<std::pair<uint32_t, uint32_t>>* pairs) {
  std::sort(pairs->begin(), pairs->end());
  pairs->erase(std::unique(pairs->begin(), pairs->end()), pairs->end());
}

// witness(p, q) for each flow out-edge p->q: the witnesses first met on
// witness-free paths that start with that edge, and site(p, q): the call
// blocks on them.  A path ends at a block witness; at a dispatch block it
// goes on to its targets' block witnesses.
void ComputeChoice(const Function& fn, const TracePlan& plan, Tables* t,
                   uint32_t p) {
  auto& pairs = t->choice[p];
  auto& sites = t->site_choice[p];
  std::vector<bool> seen(fn.blocks.size(), false);
  for (uint32_t e0 : t->succ[p]) {
    std::fill(seen.begin(), seen.end(), false);
    std::vector<uint32_t> edges{e0};
    while (!edges.empty()) {
      const uint32_t e = edges.back();
      edges.pop_back();
      const int64_t w = plan.witness_of_edge[e];
      if (w != kNoWitness) {
        pairs.emplace_back(static_cast<uint32_t>(w), e0);
        continue;
      }
      const uint32_t x = fn.edges[e].dst;
      if (seen[x]) continue;
      seen[x] = true;
      const int64_t bw = BlockWitness(plan, x);
      if (bw != kNoWitness) {
        pairs.emplace_back(static_cast<uint32_t>(bw), e0);
        continue;
      }
      if (plan.call_block[x]) sites.emplace_back(x, e0);
      for (uint32_t b : t->targets[x]) {
        const int64_t tw = BlockWitness(plan, b);
        if (tw != kNoWitness) pairs.emplace_back(static_cast<uint32_t>(tw), e0);
      }
      for (uint32_t next : t->succ[x]) edges.push_back(next);
    }
  }
  SortUnique(&pairs);
  SortUnique(&sites);
  t->has_choice[p] = true;
}

// Why the live activations (function, current block), outermost first,
// disagree with checkpoint c, or empty.  The innermost's site is not
// compared: at a witness it is not where the walk stands.
std::string CheckpointMismatch(
    const std::vector<std::pair<uint32_t, uint32_t>>& live,
    const TraceCheckpoint& c) {
  const std::string what = "the regenerated state disagrees with " + c.name;
  if (live.size() != c.frames.size())
    return what + ": " + std::to_string(live.size()) + " live activations, " +
           "it says " + std::to_string(c.frames.size());
  for (size_t k = 0; k < live.size(); ++k) {
    const bool innermost = k + 1 == live.size();
    if (live[k].first != c.frames[k].function ||
        (!innermost && live[k].second != c.frames[k].site))
      return what + " at frame " + std::to_string(k);
  }
  return "";
}

// Records what went wrong at event pos, naming the innermost live
// activation if there is one; returns false.
template <typename StackFrame>
bool RecordFailure(const std::vector<TracedFunction>& program, size_t pos,
                   const std::vector<StackFrame>& stack,
                   const std::string& what, RegenResult* result) {
  result->status = RegenStatus::kError;
  result->error = "event " + std::to_string(pos) + ": " + what;
  if (!stack.empty()) {
    const StackFrame& f = stack.back();
    result->error += " (in " + program[f.fid].fn->name + ", block " +
                     std::to_string(f.pc) + ")";
  }
  return false;
}

struct Frame {
  uint32_t fid = 0;
  uint32_t pc = kEntryBlock;
  int64_t pending = kNoWitness;  // read to decide a branch, not yet taken
  bool calls_done = false;
};

class Regenerator {
 public:
  Regenerator(const std::vector<TracedFunction>& program,
              const std::vector<TraceEvent>& events, const RegenStart& from)
      : program_(program), events_(events), from_(from) {
    for (const TracedFunction& f : program) {
      tables_.push_back(BuildTables(*f.fn));
      idle_limit_ = std::max(idle_limit_, 2 * f.fn->blocks.size() + 4);
    }
  }

  RegenResult Run() {
    if (Resume())
      while (result_.status == RegenStatus::kComplete && !AtStop() && Step()) {
      }
    result_.events_read = pos_;
    if (result_.status == RegenStatus::kComplete)
      result_.confirmed = result_.steps.size();
    return std::move(result_);
  }

 private:
  // The starting checkpoint's activations, without steps; a first witness
  // is taken at once unless the state was taken inside the innermost's
  // call.  False when the walk stops.
  bool Resume() {
    const std::vector<TraceFrame>& frames = from_.start.frames;
    if (frames.empty()) return true;
    if (from_.start.event != 0) return Fail("the start is not the first event");
    const bool witness = !events_.empty() && !from_.start.in_call &&
                         events_[0].kind == TraceEventKind::kWitness;
    for (size_t k = 0; k < frames.size(); ++k) {
      const TraceFrame& fr = frames[k];
      if (fr.function >= program_.size() || !HasPlan(fr.function))
        return Fail("checkpoint frame " + std::to_string(k) +
                    ": unknown or untraced function");
      const TracePlan& p = *program_[fr.function].plan;
      const bool innermost = k + 1 == frames.size();
      if (!(innermost && witness) &&
          (fr.site >= p.call_block.size() || !p.call_block[fr.site]))
        return Fail("checkpoint frame " + std::to_string(k) +
                    ": site is not a call block");
      stack_.push_back(Frame{fr.function, fr.site});
    }
    if (events_.empty()) return Truncated();
    if (!witness) return true;
    Frame& f = stack_.back();
    return ResumeAtWitness(f, events_[0].id);
  }

  // A checkpoint at witness w: about to take w's edge, or for a block
  // witness to enter its block.
  bool ResumeAtWitness(Frame& f, uint32_t w) {
    const TracePlan& p = plan(f);
    const size_t n_edges = p.witness_edges.size();
    if (w >= n_edges + p.witness_blocks.size())
      return Fail("witness id out of range");
    if (!Consume()) return false;
    if (w < n_edges) {
      f.pending = w;
      return Take(f, static_cast<uint32_t>(p.witness_edges[w]));
    }
    Move(f, p.witness_blocks[w - n_edges]);
    Confirm();
    return true;
  }

  // A traced function: its plan fits its CFG.
  bool HasPlan(uint32_t fid) const {
    const TracedFunction& t = program_[fid];
    return t.plan->call_block.size() == t.fn->blocks.size() &&
           t.plan->witness_of_edge.size() == t.fn->edges.size();
  }

  // One step of the walk; false when it stops.
  bool Step() {
    if (++idle_ > idle_limit_) return Fail("no progress (plan and CFG differ)");
    if (stack_.empty()) return Outermost();
    Frame& f = stack_.back();
    if (f.pc == kExitBlock) {
      stack_.pop_back();
      idle_ = 0;
      return true;
    }
    // With a witness read but not yet taken, the calls on the way wrote
    // nothing: their events would have come before it.
    if (plan(f).call_block[f.pc] && !f.calls_done &&
        f.pending == kNoWitness)
      return Calls(f);
    return Advance(f);
  }

  // Between outermost activations only kEnter{depth 0} or kEnd may come.
  bool Outermost() {
    if (pos_ == events_.size()) return Truncated();
    const TraceEvent& ev = events_[pos_];
    if (ev.kind == TraceEventKind::kEnd) return End(ev);
    if (ev.kind != TraceEventKind::kEnter || ev.depth != 0)
      return Fail("expected the start of an outermost activation");
    return Enter(ev);
  }

  bool Enter(const TraceEvent& ev) {
    if (ev.id >= program_.size()) return Fail("unknown function id");
    if (!HasPlan(ev.id)) return Fail("kEnter of an untraced function");
    if (ev.depth != stack_.size()) return Fail("activation depth mismatch");
    if (!Consume()) return false;
    stack_.push_back(Frame{ev.id});
    Output(stack_.back());
    Confirm();
    return true;
  }

  // At a call block: nested activations and landings, then on.
  // An event of a call (kEnter, kLand, kEnd) names the activation making
  // the call (by the number of live activations, itself included) and its
  // call block.  One of an outer activation, or of this one at a later
  // block, leaves this block's calls done: this activation goes on (to
  // EXIT) without events.  At a cut stream's end the call ran no traced
  // code (it would have written an event) or is still running: the walk
  // goes on (trace_regen.h).
  bool Calls(Frame& f) {
    if (pos_ == events_.size()) {
      f.calls_done = true;
      return true;
    }
    const TraceEvent& ev = events_[pos_];
    uint32_t live = ev.depth;  // kEnter, kEnd
    if (ev.kind == TraceEventKind::kLand) live = ev.live;
    if (ev.kind != TraceEventKind::kWitness &&
        (live > stack_.size() || (live == stack_.size() && ev.site == f.pc))) {
      if (ev.kind == TraceEventKind::kEnter) return Enter(ev);
      if (ev.kind == TraceEventKind::kLand) return Land(ev);
      return End(ev);  // the thread ended inside this call
    }
    f.calls_done = true;
    return true;
  }

  // kEnd{d}: the thread ended with d activations live, the innermost one
  // where the walk stands now.  Nothing may follow.
  bool End(const TraceEvent& ev) {
    if (ev.depth != stack_.size())
      return Fail("the thread ends with another number of live activations");
    if (!Consume()) return false;
    if (pos_ != events_.size()) return Fail("events after the thread's end");
    return false;
  }

  // kLand{block, depth}: abandon deeper activations.  At a returns-twice
  // call's block B (a re-entry target), after either return of its call:
  // the activation resumes in B after that call, B not entered again (no
  // step), B's later calls still to come; at its first return this
  // changes nothing.  At an exception landing pad: the EH edge from the
  // call block, its witness read as usual (core/trace_plan.h).
  bool Land(const TraceEvent& ev) {
    if (ev.live != stack_.size())
      return Fail("thrown from an activation that is not the innermost");
    if (ev.depth >= stack_.size()) return Fail("landing in no live activation");
    const Function& fn = *program_[stack_[ev.depth].fid].fn;
    if (ev.id >= fn.blocks.size() || ev.id <= kExitBlock)
      return Fail("landing block out of range");
    if (!Consume()) return false;
    stack_.resize(ev.depth + 1);
    Frame& f = stack_.back();
    f.pending = kNoWitness;
    if (IsReentryTarget(fn, ev.id)) {
      f.pc = ev.id;
      f.calls_done = false;
      Confirm();
      return true;
    }
    for (uint32_t e : tables_[f.fid].succ[f.pc])
      if (fn.edges[e].dst == ev.id) {
        if (!Take(f, e)) return false;
        Confirm();
        return true;
      }
    return Fail("landing block not reachable");
  }

  static bool IsReentryTarget(const Function& fn, uint32_t b) {
    for (const Edge& e : fn.edges)
      if (e.src == kEntryBlock && e.dst == b &&
          (e.flags & (kEdgeFake | kEdgeReentry | kEdgeAbnormal)))
        return true;
    return false;
  }

  // Chooses the successor of f.pc and takes it.
  bool Advance(Frame& f) {
    const std::vector<uint32_t>& succ = tables_[f.fid].succ[f.pc];
    if (succ.empty() && !tables_[f.fid].targets[f.pc].empty())
      return Dispatch(f);
    if (succ.empty()) {
      if (pos_ == events_.size()) return Truncated();
      if (events_[pos_].kind == TraceEventKind::kEnd) return End(events_[pos_]);
      return Fail("block without successor, but the stream goes on");
    }
    if (succ.size() == 1) return Take(f, succ[0]);
    if (f.pending == kNoWitness && pos_ == events_.size() &&
        !from_.stop.frames.empty())
      return TowardStop(f);
    Tables& t = tables_[f.fid];
    if (!t.has_choice[f.pc]) ComputeChoice(*program_[f.fid].fn, plan(f), &t, f.pc);
    if (f.pending == kNoWitness && plan(f).calls == CallDecision::kSite &&
        OwnCallNext())
      return Choose(f, t.site_choice[f.pc], events_[pos_].site, "call block");
    if (f.pending == kNoWitness) {
      if (!ReadWitness(&f.pending)) return false;
    }
    return Choose(f, t.choice[f.pc], static_cast<uint32_t>(f.pending),
                  "witness");
  }

  // The next event is one of a call the innermost activation makes (its
  // number of live activations, itself included, is the stack's): the
  // call's block, its site, is ahead of the walk without a witness.
  bool OwnCallNext() const {
    if (pos_ == events_.size()) return false;
    const TraceEvent& ev = events_[pos_];
    if (ev.kind == TraceEventKind::kWitness) return false;
    const uint32_t live = ev.kind == TraceEventKind::kLand ? ev.live : ev.depth;
    return live == stack_.size();
  }

  // Takes the out-edge that `pairs` (key, out-edge) gives for `key`.
  bool Choose(Frame& f, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
              uint32_t key, const char* what) {
    auto it = std::lower_bound(pairs.begin(), pairs.end(),
                               std::make_pair(key, uint32_t{0}));
    if (it == pairs.end() || it->first != key)
      return Fail(std::string(what) + " reachable from no successor of the "
                  "branch");
    if (it + 1 != pairs.end() && (it + 1)->first == key)
      return Fail(std::string(what) + " reachable from two successors (plan "
                  "not exact)");
    return Take(f, it->second);
  }

  // How the live activations stand to the stop: 1 the stop's own (the
  // innermost at its function, the outer ones in their calls), 2 deeper
  // than the stop's within them (the stop's innermost in a call), 0 else.
  int StopRelation() const {
    const std::vector<TraceFrame>& want = from_.stop.frames;
    if (stack_.size() < want.size()) return 0;
    for (size_t k = 0; k < want.size(); ++k)
      if (stack_[k].fid != want[k].function ||
          (k + 1 < want.size() && stack_[k].pc != want[k].site))
        return 0;
    return stack_.size() == want.size() ? 1 : 2;
  }

  // After the last event: the walk stands where the stop says.
  bool AtStop() {
    if (from_.stop.frames.empty() || pos_ != events_.size() ||
        StopRelation() != 1)
      return false;
    const Frame& f = stack_.back();
    const std::vector<uint32_t>& b = from_.stop.blocks;
    if (f.pending != kNoWitness ||
        std::find(b.begin(), b.end(), f.pc) == b.end())
      return false;
    result_.stopped = true;
    return !Truncated();
  }

  // Whether a block of `targets` is reached from edge e0 of f's function
  // without passing a witness.
  bool ReachesWithoutWitness(const Frame& f, uint32_t e0,
                             const std::vector<uint32_t>& targets) {
    const Function& fn = *program_[f.fid].fn;
    const TracePlan& p = plan(f);
    std::vector<bool> seen(fn.blocks.size(), false);
    std::vector<uint32_t> edges{e0};
    while (!edges.empty()) {
      const uint32_t e = edges.back();
      edges.pop_back();
      const uint32_t x = fn.edges[e].dst;
      if (p.witness_of_edge[e] != kNoWitness || seen[x] ||
          BlockWitness(p, x) != kNoWitness)
        continue;
      if (std::find(targets.begin(), targets.end(), x) != targets.end())
        return true;
      seen[x] = true;
      for (uint32_t next : tables_[f.fid].succ[x]) edges.push_back(next);
    }
    return false;
  }

  // A branch after the last event: the one successor that leads to the
  // stop without a witness (trace_regen.h TraceStop).
  bool TowardStop(Frame& f) {
    const int relation = StopRelation();
    if (relation == 0) return Truncated();
    const std::vector<uint32_t> exit{kExitBlock};
    const std::vector<uint32_t>& targets =
        relation == 1 ? from_.stop.blocks : exit;
    int64_t only = -1;
    for (uint32_t e : tables_[f.fid].succ[f.pc]) {
      if (!ReachesWithoutWitness(f, e, targets)) continue;
      if (only >= 0) return Truncated();
      only = e;
    }
    if (only < 0) return Truncated();
    return Take(f, static_cast<uint32_t>(only));
  }

  // A computed goto: to the block whose block witness comes next.
  bool Dispatch(Frame& f) {
    if (f.pending == kNoWitness && !ReadWitness(&f.pending)) return false;
    const TracePlan& p = plan(f);
    const std::vector<uint32_t>& to = tables_[f.fid].targets[f.pc];
    const size_t k = static_cast<size_t>(f.pending);
    if (k < p.witness_edges.size() ||
        std::find(to.begin(), to.end(),
                  p.witness_blocks[k - p.witness_edges.size()]) == to.end())
      return Fail("computed goto to a block it cannot reach");
    f.pending = kNoWitness;
    Move(f, p.witness_blocks[k - p.witness_edges.size()]);
    Confirm();
    return true;
  }

  // Takes edge e of f's function, consuming its witness if it has one,
  // then its target's block witness if that has one.
  bool Take(Frame& f, uint32_t e) {
    const uint32_t to = program_[f.fid].fn->edges[e].dst;
    const int64_t w = plan(f).witness_of_edge[e];
    const int64_t bw = BlockWitness(plan(f), to);
    if (w != kNoWitness && !Expect(f, w)) return false;
    Move(f, to);
    if (w != kNoWitness) Confirm();
    if (bw == kNoWitness) return true;
    if (!Expect(f, bw)) return false;
    Confirm();
    return true;
  }

  // The next witness (read now unless already pending) must be w.
  bool Expect(Frame& f, int64_t w) {
    if (f.pending == kNoWitness && !ReadWitness(&f.pending)) return false;
    if (f.pending != w) return Fail("witness of another edge");
    f.pending = kNoWitness;
    return true;
  }

  void Move(Frame& f, uint32_t block) {
    f.pc = block;
    f.calls_done = false;
    Output(f);
  }

  bool ReadWitness(int64_t* w) {
    if (pos_ == events_.size()) return Truncated();
    const TraceEvent& ev = events_[pos_];
    if (ev.kind != TraceEventKind::kWitness) return Fail("expected a witness");
    const Frame& f = stack_.back();
    if (ev.id >= plan(f).witness_edges.size() + plan(f).witness_blocks.size())
      return Fail("witness id out of range");
    if (!Consume()) return false;
    *w = ev.id;
    return true;
  }

  const TracePlan& plan(const Frame& f) const { return *program_[f.fid].plan; }
  // Reads the next event, after checking the state before it against the
  // checkpoint of that event if there is one.
  bool Consume() {
    while (check_ < from_.checks.size() && from_.checks[check_].event < pos_)
      ++check_;
    if (check_ < from_.checks.size() && from_.checks[check_].event == pos_) {
      std::vector<std::pair<uint32_t, uint32_t>> live;
      for (const Frame& f : stack_) live.emplace_back(f.fid, f.pc);
      const std::string bad = CheckpointMismatch(live, from_.checks[check_]);
      if (!bad.empty()) return Fail(bad);
    }
    ++pos_, idle_ = 0;
    return true;
  }

  // The steps so far are proven by the events read.
  void Confirm() { result_.confirmed = result_.steps.size(); }
  void Output(const Frame& f) { result_.steps.push_back({f.fid, f.pc}); }

  bool Truncated() {
    result_.status = RegenStatus::kTruncated;
    return false;
  }

  bool Fail(const std::string& what) {
    return RecordFailure(program_, pos_, stack_, what, &result_);
  }

  const std::vector<TracedFunction>& program_;
  const std::vector<TraceEvent>& events_;
  const RegenStart& from_;
  size_t check_ = 0;  // the next of from_.checks
  std::vector<Tables> tables_;
  std::vector<Frame> stack_;
  RegenResult result_;
  size_t pos_ = 0;
  size_t idle_ = 0;
  size_t idle_limit_ = 2;
};

// mode=trace-naive: the stream names every block (trace_regen.h).
class NaiveDecoder {
 public:
  NaiveDecoder(const std::vector<TracedFunction>& program,
               const std::vector<TraceEvent>& events, const RegenStart& from)
      : program_(program), events_(events), from_(from) {}

  RegenResult Run() {
    if (Resume())
      while (pos_ < events_.size() && Event(events_[pos_])) ++pos_;
    if (pos_ == events_.size() && result_.status == RegenStatus::kComplete &&
        !ended_)
      result_.status = RegenStatus::kTruncated;
    result_.events_read = pos_;
    result_.confirmed = result_.steps.size();  // each step named
    return std::move(result_);
  }

 private:
  struct NFrame {
    uint32_t fid = 0;
    uint32_t pc = kEntryBlock;  // the last block named
    bool known = true;          // false: the next block is not checked
  };

  bool Resume() {
    const std::vector<TraceFrame>& frames = from_.start.frames;
    if (!frames.empty() && from_.start.event != 0)
      return Fail("the start is not the first event");
    for (size_t k = 0; k < frames.size(); ++k) {
      const TraceFrame& fr = frames[k];
      if (fr.function >= program_.size() ||
          fr.site >= program_[fr.function].fn->blocks.size())
        return Fail("checkpoint frame " + std::to_string(k) + " out of range");
      stack_.push_back({fr.function, fr.site, true});
    }
    // About to take an edge from a block the checkpoint does not name.
    if (!stack_.empty() && !events_.empty() && !from_.start.in_call &&
        events_[0].kind == TraceEventKind::kWitness)
      stack_.back().known = false;
    return true;
  }

  bool Event(const TraceEvent& ev) {
    if (ended_) return Fail("events after the thread's end");
    if (!Check()) return false;
    switch (ev.kind) {
      case TraceEventKind::kWitness: return Block(ev.id);
      case TraceEventKind::kEnter: return Enter(ev);
      case TraceEventKind::kLand: return Land(ev);
      case TraceEventKind::kEnd: break;
    }
    if (ev.depth != stack_.size())
      return Fail("the thread ends with another number of live activations");
    ended_ = true;
    return true;
  }

  bool Block(uint32_t b) {
    if (stack_.empty()) return Fail("block index outside any activation");
    NFrame& f = stack_.back();
    const Function& fn = *program_[f.fid].fn;
    if (b == kEntryBlock || b >= fn.blocks.size())
      return Fail("block index out of range");
    if (f.known && !FlowEdge(fn, f.pc, b))
      return Fail("no edge from block " + std::to_string(f.pc) + " to " +
                  std::to_string(b));
    result_.steps.push_back({f.fid, b});
    f.pc = b, f.known = true;
    if (b == kExitBlock) stack_.pop_back();
    return true;
  }

  bool Enter(const TraceEvent& ev) {
    if (ev.id >= program_.size()) return Fail("unknown function id");
    if (ev.depth != stack_.size()) return Fail("activation depth mismatch");
    stack_.push_back({ev.id, kEntryBlock, true});
    result_.steps.push_back({ev.id, kEntryBlock});
    return true;
  }

  // The landing block's own index follows (it starts the block).
  bool Land(const TraceEvent& ev) {
    if (ev.live != stack_.size())
      return Fail("thrown from an activation that is not the innermost");
    if (ev.depth >= stack_.size()) return Fail("landing in no live activation");
    stack_.resize(ev.depth + 1);
    stack_.back().known = false;
    return true;
  }

  static bool FlowEdge(const Function& fn, uint32_t from, uint32_t to) {
    for (const Edge& e : fn.edges)
      if (e.src == from && e.dst == to &&
          (IsTraceFlowEdge(e) || IsDispatchEdge(fn, e)))
        return true;
    return false;
  }

  bool Check() {
    while (check_ < from_.checks.size() && from_.checks[check_].event < pos_)
      ++check_;
    if (check_ == from_.checks.size() || from_.checks[check_].event != pos_)
      return true;
    std::vector<std::pair<uint32_t, uint32_t>> live;
    for (const NFrame& f : stack_) live.emplace_back(f.fid, f.pc);
    const std::string bad = CheckpointMismatch(live, from_.checks[check_]);
    return bad.empty() || Fail(bad);
  }

  bool Fail(const std::string& what) {
    return RecordFailure(program_, pos_, stack_, what, &result_);
  }

  const std::vector<TracedFunction>& program_;
  const std::vector<TraceEvent>& events_;
  const RegenStart& from_;
  std::vector<NFrame> stack_;
  RegenResult result_;
  size_t pos_ = 0;
  size_t check_ = 0;
  bool ended_ = false;
};

}  // namespace

RegenResult RegenerateTrace(const std::vector<TracedFunction>& program,
                            const std::vector<TraceEvent>& events,
                            const RegenStart& from) {
  return Regenerator(program, events, from).Run();
}

RegenResult RegenerateNaiveTrace(const std::vector<TracedFunction>& program,
                                 const std::vector<TraceEvent>& events,
                                 const RegenStart& from) {
  return NaiveDecoder(program, events, from).Run();
}

}  // namespace ballarus
