// trace_thread.h — one thread's records of a trace file
// (runtime/trace_format.h) turned into a regeneration (core/trace_regen.h):
// the events from the first record whose starting state is known, that
// state, and the later checkpoints the walk must agree with.
//
// A record's words always start at an event (the runtime never splits
// one), so records decode one by one.  A CHECKPOINT record gives the
// state at the first word of the thread's next record: D, then D frames
// (TU function index, TU stamp, site) outermost first; D = 0xffffffff
// means the runtime did not keep the state (deeper than it tracks); a fork
// child's first one was taken at the fork (ThreadRecords::fork_child).  The
// regeneration starts at the first record that begins the thread's stream
// (word 0, no checkpoint needed) or follows a known checkpoint; the words
// before it were not kept (a ring's overwritten chunks) or cannot be
// placed.
#ifndef BALLARUS_RECONSTRUCT_TRACE_THREAD_H_
#define BALLARUS_RECONSTRUCT_TRACE_THREAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace_plan.h"
#include "core/trace_regen.h"
#include "reconstruct/trace_program.h"

namespace ballarus {

inline constexpr uint32_t kTraceCheckpointKind = 4;  // trace_format.h
inline constexpr uint32_t kTraceMetadataKind = 5;    // a TU's blob
inline constexpr uint32_t kTracePositionKind = 6;
inline constexpr uint32_t kTraceFaultKind = 7;
inline constexpr uint32_t kTraceUnknownDepth = 0xffffffffu;

// A record as trace_read hands it over.
struct TraceRecord {
  uint32_t kind = 0;  // BALLARUS_TRACE_CHUNK, _END, _RING, or a checkpoint
  uint32_t seq = 0;
  uint64_t total = 0;  // the thread's words up to this record's end
  std::vector<uint32_t> words;
};

struct ThreadRecords {
  uint32_t tid = 0;
  std::vector<TraceRecord> records;  // in the file's order
  // A full-mode fork child's file: a CHECKPOINT at word 0 (seq 0) was
  // taken at the fork, the innermost activation inside its call to fork
  // (TraceCheckpoint::in_call), not at the next word as a ring chunk's.
  bool fork_child = false;
};

// A FAULT record (trace_format.h): the fatal signal the thread got.
struct TraceFault {
  uint32_t signo = 0;
  int32_t code = 0;  // si_code
  uint64_t address = 0, pc = 0;
  std::string module;   // the file holding pc, empty if not known
  uint64_t offset = 0;  // pc's offset in that file
};

struct ThreadInput {
  std::vector<TraceEvent> events;
  RegenStart from;
  bool cut = false;    // the last record ends inside an event
  bool known = true;   // false: no record starts at a known state
  bool from_checkpoint = false;  // starts at a checkpoint, not word 0
  uint64_t words_not_kept = 0;   // before the first record in the file
  uint64_t words_skipped = 0;    // then kept, but before a known state
  // Where the thread was when the file was written (its POSITION record):
  // its live activations, the innermost's site its last call block.
  bool has_position = false;
  std::vector<TraceFrame> position;  // empty with has_position: depth 0
  bool position_known = false;       // false: deeper than the runtime kept
  bool has_fault = false;
  TraceFault fault;
};

// Fills *in from the thread's records; a one-line problem ("record S:
// ...") or empty.
std::string PrepareThread(const TraceProgram& p, const ThreadRecords& t,
                          ThreadInput* in);

// Regenerates (naive or witness stream, by the program's plans).
RegenResult RegenerateThread(const TraceProgram& p, const ThreadInput& in);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_THREAD_H_
