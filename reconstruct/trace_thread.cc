// trace_thread.cc — see trace_thread.h.
#include "reconstruct/trace_thread.h"

#include <fmt/format.h>

#include "core/trace_ids.h"
#include "runtime/trace_format.h"

namespace ballarus {
namespace {

bool IsData(uint32_t kind) {
  return kind == BALLARUS_TRACE_CHUNK || kind == BALLARUS_TRACE_RING;
}

// A record of words with the checkpoint record before it; either may be
// missing (a checkpoint followed by no words).
struct Piece {
  const TraceRecord* checkpoint = nullptr;
  const TraceRecord* data = nullptr;
  bool known = false;  // the checkpoint gives the state
  std::vector<TraceFrame> frames;
};

std::vector<Piece> Pieces(const ThreadRecords& t) {
  std::vector<Piece> pieces;
  const TraceRecord* pending = nullptr;
  for (const TraceRecord& r : t.records) {
    if (r.kind == kTraceCheckpointKind) {
      if (pending) pieces.push_back({pending, nullptr});
      pending = &r;
    } else if (IsData(r.kind)) {
      pieces.push_back({pending, &r});
      pending = nullptr;
    }
  }
  if (pending) pieces.push_back({pending, nullptr});
  return pieces;
}

// Reads a checkpoint's (or a position's) frames into *piece; a problem
// or empty.
std::string ParseCheckpoint(const TraceProgram& p, Piece* piece) {
  const TraceRecord& r = *piece->checkpoint;
  const std::string where = fmt::format(
      "record {}: {}: ", r.seq,
      r.kind == kTracePositionKind ? "position" : "checkpoint");
  if (r.words.empty()) return where + "no depth";
  const uint32_t depth = r.words[0];
  if (depth == kTraceUnknownDepth)
    return r.words.size() == 1 ? "" : where + "words after an unknown depth";
  if (r.words.size() != 1 + 3 * uint64_t{depth})
    return where + fmt::format("{} frames in {} words", depth, r.words.size());
  for (uint32_t k = 0; k < depth; ++k) {
    const uint32_t index = r.words[1 + 3 * k], stamp = r.words[2 + 3 * k];
    const uint32_t site = r.words[3 + 3 * k];
    const int64_t id = p.Resolve(stamp, index);
    if (id < 0)
      return where + fmt::format("frame {}: function {} of a TU with stamp {} "
                                 "that no profile lists", k, index, stamp);
    const TraceProgramFunction& f = p.functions[id];
    if (!f.plan)
      return where + fmt::format("frame {}: {} has no trace plan", k, f.fn->name);
    // A position's innermost may not have called anything yet: its site
    // is then its caller's (checked where it is used).
    const bool any_site = r.kind == kTracePositionKind && k + 1 == depth;
    if (site >= f.fn->blocks.size() && !any_site)
      return where + fmt::format("frame {}: block {} of {} out of range", k,
                                 site, f.fn->name);
    piece->frames.push_back({static_cast<uint32_t>(id), site});
  }
  piece->known = true;
  return "";
}

uint64_t Start(const Piece& p) {
  return p.data ? p.data->total - p.data->words.size() : 0;
}

// Checks that each piece's words follow the previous one's; the index of
// the first piece the regeneration can start at (pieces.size(): none).
std::string Place(const std::vector<Piece>& pieces, size_t* first) {
  *first = pieces.size();
  const TraceRecord* prev = nullptr;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const TraceRecord* d = pieces[i].data;
    if (prev && d && d->total - d->words.size() != prev->total)
      return fmt::format("record {}: starts at word {} of the thread, the "
                         "previous record ends at word {}",
                         d->seq, d->total - d->words.size(), prev->total);
    if (d) prev = d;
    const bool at_zero = !pieces[i].checkpoint && d && Start(pieces[i]) == 0;
    if (*first == pieces.size() && (pieces[i].known || at_zero)) *first = i;
  }
  return "";
}

// Appends a record's events; a problem naming the record or empty.
std::string Decode(const TraceProgram& p, const TraceRecord& r, bool last,
                   ThreadInput* in) {
  uint32_t bad_index = 0, bad_stamp = 0;
  DecodedTrace d = DecodeTraceWords(
      r.words, [&](uint32_t stamp, uint32_t index) {
        bad_index = index, bad_stamp = stamp;
        return p.Resolve(stamp, index);
      });
  const size_t at = in->events.size() + d.events.size();
  in->events.insert(in->events.end(), d.events.begin(), d.events.end());
  if (!d.error.empty())
    return fmt::format("event {}: kEnter of function {} of a TU with stamp {} "
                       "that no profile lists", at, bad_index, bad_stamp);
  if (d.cut && !last)
    return fmt::format("record {}: ends inside an event", r.seq);
  in->cut = d.cut;
  return "";
}

// A FAULT record's words (trace_format.h) into *f; a problem or empty.
std::string ParseFault(const TraceRecord& r, TraceFault* f) {
  const std::vector<uint32_t>& w = r.words;
  if (w.size() < 9 || w.size() != 9 + (uint64_t{w[8]} + 3) / 4)
    return fmt::format("record {}: fault: {} words", r.seq, w.size());
  auto u64 = [&w](size_t i) { return w[i] | uint64_t{w[i + 1]} << 32; };
  f->signo = w[0];
  f->code = static_cast<int32_t>(w[1]);
  f->address = u64(2), f->pc = u64(4), f->offset = u64(6);
  f->module.clear();
  for (uint32_t i = 0; i < w[8]; ++i)
    f->module.push_back(static_cast<char>(w[9 + i / 4] >> (8 * (i % 4))));
  return "";
}

// The POSITION and FAULT records, if any, into *in.
std::string WhereItStopped(const TraceProgram& p, const ThreadRecords& t,
                           ThreadInput* in) {
  for (const TraceRecord& r : t.records) {
    if (r.kind == kTraceFaultKind) {
      in->has_fault = true;
      const std::string problem = ParseFault(r, &in->fault);
      if (!problem.empty()) return problem;
    }
    if (r.kind != kTracePositionKind) continue;
    Piece piece{&r};
    const std::string problem = ParseCheckpoint(p, &piece);
    if (!problem.empty()) return problem;
    in->has_position = true;
    in->position_known = piece.known;
    in->position = piece.frames;
  }
  return "";
}

}  // namespace

std::string PrepareThread(const TraceProgram& p, const ThreadRecords& t,
                          ThreadInput* in) {
  std::string problem = WhereItStopped(p, t, in);
  if (!problem.empty()) return problem;
  std::vector<Piece> pieces = Pieces(t);
  for (Piece& piece : pieces) {
    if (!piece.checkpoint) continue;
    const std::string problem = ParseCheckpoint(p, &piece);
    if (!problem.empty()) return problem;
  }
  size_t first = 0;
  problem = Place(pieces, &first);
  if (!problem.empty()) return problem;
  for (const Piece& piece : pieces)
    if (piece.data) {
      in->words_not_kept = Start(piece);  // overwritten or never written
      break;
    }
  for (size_t i = 0; i < first; ++i)
    if (pieces[i].data) in->words_skipped += pieces[i].data->words.size();
  if (first == pieces.size()) {
    in->known = false;
    return "";
  }
  if (pieces[first].known) {
    const TraceRecord* c = pieces[first].checkpoint;
    in->from_checkpoint = c != nullptr;
    in->from.start.frames = pieces[first].frames;
    in->from.start.in_call =
        t.fork_child && c && c->seq == 0 && c->total == 0;
  }
  for (size_t i = first; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    if (i > first && piece.known)
      in->from.checks.push_back(
          {in->events.size(), piece.frames,
           fmt::format("the checkpoint of record {}", piece.checkpoint->seq)});
    if (!piece.data) continue;
    problem = Decode(p, *piece.data, i + 1 == pieces.size(), in);
    if (!problem.empty()) return problem;
  }
  return TraceStreamProblem(p, in->events);
}

RegenResult RegenerateThread(const TraceProgram& p, const ThreadInput& in) {
  RegenResult r = p.naive ? RegenerateNaiveTrace(p.regen, in.events, in.from)
                          : RegenerateTrace(p.regen, in.events, in.from);
  if (in.cut && r.status == RegenStatus::kComplete)
    r.status = RegenStatus::kTruncated;
  return r;
}

}  // namespace ballarus
