// source_text.cc — see source_text.h.
#include "reconstruct/source_text.h"

#include "reconstruct/gcov_writer.h"

namespace ballarus {

const std::vector<std::string>* SourceCache::Lines(uint32_t file) {
  auto it = files_.find(file);
  if (it != files_.end()) return it->second.get();
  auto lines = std::make_unique<std::vector<std::string>>();
  if (!gcov::ReadSourceLines(filter_.AbsolutePath(file), lines.get()) &&
      !gcov::ReadSourceLines(r_.files[file], lines.get()))
    lines.reset();
  return (files_[file] = std::move(lines)).get();
}

const std::string* SourceCache::Line(uint32_t file, uint32_t line) {
  const std::vector<std::string>* lines = Lines(file);
  if (!lines || line == 0 || line > lines->size()) return nullptr;
  return &(*lines)[line - 1];
}

}  // namespace ballarus
