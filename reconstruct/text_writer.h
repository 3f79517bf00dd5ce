// text_writer.h — the text pieces of the report model that several
// subcommands print.
#ifndef BALLARUS_RECONSTRUCT_TEXT_WRITER_H_
#define BALLARUS_RECONSTRUCT_TEXT_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/flow.h"
#include "reconstruct/report_model.h"

namespace ballarus {

// A count, or "?" where it is unknown.
std::string CountText(const Count& c);

// "ENTRY", "EXIT" or the block's number.
std::string BlockName(uint32_t block);

// "3->7", or "EXIT->ENTRY" for kVirtualEdge.
std::string EdgeText(const report::FunctionReport& f, size_t edge);

// "^3 4 6 -> back edge to 3": "^" marks a path that began after a back
// edge or a cut; the end is a return (ends with EXIT), "(did not return)"
// (a fake edge into EXIT: exit(), longjmp, an exception), a back edge, or a
// cut (the cut block runs on the next path).
std::string PathText(const report::PathReport& p);

// "a.c:3 a.c:4 inc.h:7": the lines, space-separated.
std::string LinesText(const report::Report& r,
                      const std::vector<report::SourceLine>& lines);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_TEXT_WRITER_H_
