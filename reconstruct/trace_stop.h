// trace_stop.h — where a thread whose stream was cut stood when its trace
// file was written, for the regeneration's stop (core/trace_regen.h
// TraceStop): from the thread's POSITION record (its live activations; the
// innermost's last call block) and, for the thread that crashed, its FAULT
// record (runtime/trace_format.h): the source line of the faulting
// instruction (trace_source.h).
//
//   - The line is in blocks of the innermost activation's function: the
//     walk stops at the first of them it reaches.  Proven: the thread was
//     there, so every step up to it ran.
//   - The line is elsewhere, or without a line the symbol holding the
//     instruction is another function's (a library's, an untraced one):
//     the thread was inside the innermost's last call; the walk stops at
//     that call block.  Proven too.
//   - No fault (a thread parked, or running, when another crashed or the
//     process exited), or a line that cannot be found (no debug
//     information): the walk stops at the innermost's last call block if
//     it reaches it: the thread was in that call or past it, the steps
//     after the last event stay unconfirmed.  A fault without a line says
//     why in a note.
#ifndef BALLARUS_RECONSTRUCT_TRACE_STOP_H_
#define BALLARUS_RECONSTRUCT_TRACE_STOP_H_

#include <cstdint>
#include <string>

#include "core/trace_regen.h"
#include "reconstruct/trace_program.h"
#include "reconstruct/trace_source.h"
#include "reconstruct/trace_thread.h"

namespace ballarus {

struct ThreadStop {
  TraceStop stop;        // empty frames: none
  bool proven = false;   // the steps up to the stop ran (see above)
  bool at_fault_line = false;
  bool has_line = false;
  SourceLine line;       // the fault's, when has_line (function: also
                         // without a line, when the symbols name it)
  std::string note;      // a fault's line not found: why (one line)
};

ThreadStop StopFor(const TraceProgram& p, const ThreadInput& in);

// "SIGSEGV", or "signal N".
std::string SignalName(uint32_t signo);

// "SIGSEGV (SEGV_MAPERR, address 0x0)": the signal and how it came.
std::string FaultText(const TraceFault& f);

// "MODULE+0xOFFSET", or "pc 0x..." when the module is not known.
std::string FaultWhere(const TraceFault& f);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_STOP_H_
