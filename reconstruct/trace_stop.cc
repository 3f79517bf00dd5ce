// trace_stop.cc — see trace_stop.h.
#include "reconstruct/trace_stop.h"

#include <csignal>

#include <fmt/format.h>

namespace ballarus {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The blocks of function `id` holding `line` (its file by base name).
std::vector<uint32_t> BlocksOfLine(const TraceProgram& p, uint32_t id,
                                   const SourceLine& line) {
  const TraceProgramFunction& f = p.functions[id];
  const std::string base = Basename(line.file);
  std::vector<uint32_t> blocks;
  for (uint32_t b = 0; b < f.fn->blocks.size(); ++b)
    for (const Location& l : f.fn->blocks[b].lines)
      if (static_cast<int>(l.line) == line.line && l.file < f.tu->files.size() &&
          Basename(f.tu->files[l.file]) == base) {
        blocks.push_back(b);
        break;
      }
  return blocks;
}

// The innermost activation's last call block, if it is one of its
// function's call blocks (an activation that has called nothing yet holds
// its caller's).
bool SiteStop(const TraceProgram& p, const TraceFrame& innermost,
              ThreadStop* out) {
  const TraceProgramFunction& f = p.functions[innermost.function];
  if (!f.plan || innermost.site >= f.plan->call_block.size() ||
      !f.plan->call_block[innermost.site])
    return false;
  out->stop.blocks = {innermost.site};
  return true;
}

// Whether ELF symbol `symbol` is function `fn`'s code (GCC's clones of it
// are named fn.constprop.0, fn.isra.0, fn.part.0, fn.cold).
bool SameFunction(const std::string& symbol, const Function& fn) {
  return symbol == fn.name ||
         (symbol.size() > fn.name.size() && symbol[fn.name.size()] == '.' &&
          symbol.compare(0, fn.name.size(), fn.name) == 0);
}

}  // namespace

std::string SignalName(uint32_t signo) {
  switch (signo) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return fmt::format("signal {}", signo);
  }
}

std::string FaultText(const TraceFault& f) {
  std::string how = fmt::format("si_code {}", f.code);
  if (f.signo == SIGSEGV && f.code == SEGV_MAPERR) how = "SEGV_MAPERR";
  if (f.signo == SIGSEGV && f.code == SEGV_ACCERR) how = "SEGV_ACCERR";
  if (f.code == SI_USER) how = "sent by kill";
  if (f.code == SI_TKILL) how = "sent by the thread: raise, abort";
  if (f.code <= 0) return fmt::format("{} ({})", SignalName(f.signo), how);
  return fmt::format("{} ({}, address {:#x})", SignalName(f.signo), how,
                     f.address);
}

std::string FaultWhere(const TraceFault& f) {
  if (f.module.empty()) return fmt::format("pc {:#x}", f.pc);
  return fmt::format("{}+{:#x}", f.module, f.offset);
}

ThreadStop StopFor(const TraceProgram& p, const ThreadInput& in) {
  ThreadStop out;
  if (!in.has_position || !in.position_known || in.position.empty())
    return out;
  const TraceFrame& innermost = in.position.back();
  std::string why = "the instruction is in no file";
  if (in.has_fault && !in.fault.module.empty())
    out.has_line = SourceLineAt(in.fault.module, in.fault.offset, &out.line,
                                &why);
  out.stop.frames = in.position;
  const Function& fn = *p.functions[innermost.function].fn;
  if (out.has_line) {
    out.stop.blocks = BlocksOfLine(p, innermost.function, out.line);
    out.at_fault_line = !out.stop.blocks.empty();
    out.proven = true;  // at that line, or inside the last call
    if (out.at_fault_line) return out;
  } else if (!out.line.function.empty() &&
             !SameFunction(out.line.function, fn)) {
    out.proven = true;  // in another function: inside the last call
  } else if (in.has_fault) {
    out.note = fmt::format(
        "{} at {}: {}; its lines stop at the innermost activation's last "
        "call, the crash may be past it",
        SignalName(in.fault.signo), FaultWhere(in.fault), why);
  }
  if (!SiteStop(p, innermost, &out)) {
    out.stop.frames.clear();
    out.proven = false;
  }
  return out;
}

}  // namespace ballarus
