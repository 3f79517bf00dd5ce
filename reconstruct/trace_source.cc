// trace_source.cc — see trace_source.h.
#include "reconstruct/trace_source.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <memory>

namespace ballarus {
namespace {

struct DwflCloser {
  void operator()(Dwfl* d) const { dwfl_end(d); }
};

// The address the file's byte `offset` is loaded at (in the module's
// address space, ELF addresses plus `bias`): through the loadable segment
// holding it.  False when no segment holds it.
bool OffsetToAddress(Elf* elf, GElf_Addr bias, uint64_t offset,
                     Dwarf_Addr* addr) {
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr ||
        ph.p_type != PT_LOAD || offset < ph.p_offset ||
        offset >= ph.p_offset + ph.p_filesz)
      continue;
    *addr = ph.p_vaddr + (offset - ph.p_offset) + bias;
    return true;
  }
  return false;
}

}  // namespace

bool SourceLineAt(const std::string& module, uint64_t offset, SourceLine* out,
                  std::string* why) {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
      dwfl_offline_section_address, &debuginfo_path};
  std::unique_ptr<Dwfl, DwflCloser> dwfl(dwfl_begin(&callbacks));
  if (!dwfl) return *why = dwfl_errmsg(-1), false;
  // ET_DYN placed at its own addresses (base 0 relative to p_vaddr).
  Dwfl_Module* mod =
      dwfl_report_elf(dwfl.get(), "module", module.c_str(), -1, 0, true);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (mod == nullptr) return *why = dwfl_errmsg(-1), false;
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  Dwarf_Addr addr = 0;
  if (elf == nullptr || !OffsetToAddress(elf, bias, offset, &addr))
    return *why = "the offset is in no loadable segment", false;
  Dwfl_Line* line = dwfl_module_getsrc(mod, addr);
  const char* name = dwfl_module_addrname(mod, addr);
  out->function = name ? name : "";
  int lineno = 0;
  const char* file = line ? dwfl_lineinfo(line, nullptr, &lineno, nullptr,
                                          nullptr, nullptr)
                          : nullptr;
  if (file == nullptr || lineno <= 0)
    return *why = "no line information (no debug information found)", false;
  out->file = file;
  out->line = lineno;
  return true;
}

}  // namespace ballarus
