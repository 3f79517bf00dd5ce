// source_text.h — the text of the program's source files, for reports that
// show it (paths --source, the HTML report, diff --source): each file read
// once, on demand, from its absolute path (reconstruct/report_filter.h:
// relative names are relative to their TU's compile directory), else from
// its name as recorded, relative to the working directory.
#ifndef BALLARUS_RECONSTRUCT_SOURCE_TEXT_H_
#define BALLARUS_RECONSTRUCT_SOURCE_TEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reconstruct/report_filter.h"
#include "reconstruct/report_model.h"

namespace ballarus {

class SourceCache {
 public:
  SourceCache(const report::Report& r, const FileFilter& filter)
      : r_(r), filter_(filter) {}
  // The file's lines (no newlines), or nullptr when it cannot be read.
  const std::vector<std::string>* Lines(uint32_t file);
  // Line `line` (1-based), or nullptr.
  const std::string* Line(uint32_t file, uint32_t line);

 private:
  const report::Report& r_;
  const FileFilter& filter_;
  std::map<uint32_t, std::unique_ptr<std::vector<std::string>>> files_;
};

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_SOURCE_TEXT_H_
