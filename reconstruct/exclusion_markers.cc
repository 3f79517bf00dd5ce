// exclusion_markers.cc — see exclusion_markers.h.
#include "reconstruct/exclusion_markers.h"

#include <string>
#include <vector>

namespace ballarus {
namespace {

// The markers on one line.
struct Marks {
  bool line = false, start = false, stop = false;
  bool br_line = false, br_start = false, br_stop = false;
  bool ebr_line = false, ebr_start = false, ebr_stop = false;
};

bool EndsWith(const std::string& s, size_t end, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return end >= n && s.compare(end - n, n, suffix) == 0;
}

bool StartsAt(const std::string& s, size_t at, const char* word) {
  return s.compare(at, std::char_traits<char>::length(word), word) == 0;
}

// Sets the flag of KIND (LINE, START or STOP) at `at`, if one is there.
void Kind(const std::string& s, size_t at, bool* line, bool* start, bool* stop) {
  if (StartsAt(s, at, "LINE")) *line = true;
  if (StartsAt(s, at, "START")) *start = true;
  if (StartsAt(s, at, "STOP")) *stop = true;
}

Marks MarksOf(const std::string& s) {
  Marks m;
  static const char kExcl[] = "_EXCL_";
  for (size_t p = s.find(kExcl); p != std::string::npos;
       p = s.find(kExcl, p + 1)) {
    const bool lcov = EndsWith(s, p, "LCOV");
    if (!lcov && !EndsWith(s, p, "GCOV") && !EndsWith(s, p, "GCOVR") &&
        !EndsWith(s, p, "LCOVR"))
      continue;
    const size_t at = p + sizeof(kExcl) - 1;
    if (StartsAt(s, at, "BR_"))
      Kind(s, at + 3, &m.br_line, &m.br_start, &m.br_stop);
    else if (lcov && StartsAt(s, at, "EXCEPTION_BR_"))
      Kind(s, at + 13, &m.ebr_line, &m.ebr_start, &m.ebr_stop);
    else
      Kind(s, at, &m.line, &m.start, &m.stop);
  }
  return m;
}

// geninfo's region flag: STOP clears it, else START sets it.
void Region(bool start, bool stop, bool* flag) {
  if (stop)
    *flag = false;
  else if (start)
    *flag = true;
}

void Set(std::vector<bool>* v, uint32_t line) {
  if (v->size() <= line) v->resize(line + 1, false);
  (*v)[line] = true;
}

}  // namespace

LineExclusions LineExclusions::Scan(const std::vector<std::string>& lines) {
  LineExclusions x;
  bool region = false, br_region = false, ebr_region = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const uint32_t number = static_cast<uint32_t>(i + 1);
    const Marks m = lines[i].find("_EXCL_") == std::string::npos
                        ? Marks()
                        : MarksOf(lines[i]);
    Region(m.start, m.stop, &region);
    Region(m.br_start, m.br_stop, &br_region);
    Region(m.ebr_start, m.ebr_stop, &ebr_region);
    if (m.line || region) Set(&x.lines_, number);
    if (m.br_line || br_region || m.ebr_line || ebr_region)
      Set(&x.branches_, number);
  }
  return x;
}

std::vector<uint32_t> LineExclusions::ExcludedLines() const {
  std::vector<uint32_t> out;
  for (uint32_t l = 0; l < lines_.size(); ++l)
    if (lines_[l]) out.push_back(l);
  return out;
}

}  // namespace ballarus
