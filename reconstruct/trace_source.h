// trace_source.h — the source line of an instruction of a module (an
// executable or shared library file) given by its offset in the file, as a
// trace file's FAULT record names the crashing instruction
// (runtime/trace_format.h), from the module's DWARF line table (libdw of
// elfutils; separate debug files found as gdb finds them, by build ID or
// .gnu_debuglink).
#ifndef BALLARUS_RECONSTRUCT_TRACE_SOURCE_H_
#define BALLARUS_RECONSTRUCT_TRACE_SOURCE_H_

#include <cstdint>
#include <string>

namespace ballarus {

struct SourceLine {
  std::string file;  // as the line table names it (often absolute)
  int line = 0;
  std::string function;  // the ELF symbol holding the address, if any
};

// The line of the instruction at byte `offset` of `module`; false with a
// short reason in *why ("no line information", "cannot open ..."), out->
// function still set when the symbol table names it.
bool SourceLineAt(const std::string& module, uint64_t offset, SourceLine* out,
                  std::string* why);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TRACE_SOURCE_H_
