// text_writer.cc — see text_writer.h.
#include "reconstruct/text_writer.h"

#include <fmt/format.h>

#include "reconstruct/commands.h"

namespace ballarus {

using report::PathReport;

std::string CountText(const Count& c) {
  return c ? std::to_string(*c) : std::string("?");
}

std::string BlockName(uint32_t b) {
  return b == kEntryBlock  ? "ENTRY"
         : b == kExitBlock ? "EXIT"
                           : std::to_string(b);
}

std::string EdgeText(const report::FunctionReport& f, size_t e) {
  return e == kVirtualEdge
             ? std::string("EXIT->ENTRY")
             : fmt::format("{}->{}", f.edges[e].src, f.edges[e].dst);
}

std::string PathText(const PathReport& p) {
  std::string s = p.start == PathReport::kFromEntry ? "" : "^";
  for (size_t i = 0; i < p.blocks.size(); ++i)
    s += (i ? " " : "") + BlockName(p.blocks[i]);
  switch (p.end) {
    case PathReport::kReturn:
      break;
    case PathReport::kNoReturn:
      s += " (did not return)";
      break;
    case PathReport::kAbnormal:
      s += " (abnormal jump)";
      break;
    case PathReport::kBackEdge:
      s += " -> back edge to " + BlockName(p.target);
      break;
    case PathReport::kLoopEntry:
      s += " -> loop entry to " + BlockName(p.target);
      break;
    case PathReport::kCut:
      s += " -> cut at " + BlockName(p.target);
      break;
  }
  return s;
}

std::string LinesText(const report::Report& r,
                      const std::vector<report::SourceLine>& lines) {
  std::string s;
  for (const report::SourceLine& l : lines)
    s += fmt::format("{}{}:{}", s.empty() ? "" : " ",
                     Printable(r.file_name(l.file)), l.line);
  return s;
}

}  // namespace ballarus
