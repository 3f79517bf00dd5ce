// html_combined_items.h — what the combined-profile HTML report
// (reconstruct/html_combined.h) lists, read off a combined profile: its
// functions, their branches, the source lines of a Ball–Larus path, the
// text of the source files.
#ifndef BALLARUS_RECONSTRUCT_HTML_COMBINED_ITEMS_H_
#define BALLARUS_RECONSTRUCT_HTML_COMBINED_ITEMS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/combined_profile.h"
#include "core/model.h"

namespace ballarus {

// One function of one TU build.
struct ListedFunction {
  const CombinedTu* tu = nullptr;
  const Function* fn = nullptr;
  const CombinedFunction* stats = nullptr;
  const CombinedStats* entry = nullptr;  // its entry count's statistics
  bool same_name_elsewhere = false;      // another TU has a function so named
  size_t page = 0;                       // fn<page>.html (when touched)

  const std::string& name() const {
    return fn->demangled.empty() ? fn->name : fn->demangled;
  }
  // The source file as recorded (relative names: to the compile directory).
  std::string file() const;
};

// File `file` of `tu`'s file table as a path to read: absolute names as
// they are, relative ones against the TU's compile directory.
std::string SourcePath(const TranslationUnit& tu, uint32_t file);

// Every function of every TU build, in TU then metadata order.  `page`
// numbers the functions that ever ran from 0.
std::vector<ListedFunction> ListFunctions(const CombinedProfile& c);

// The branches of `fn` (see html_combined.h): edge indices, ascending.
std::vector<size_t> BranchEdges(const Function& fn);

// "line L true" style label of branch edge `e`: the source block's last
// line, how the edge leaves it (report_model.h EdgeKindName), its target.
std::string BranchLabel(const Function& fn, size_t e);

// The source lines of Ball–Larus paths ("8 9 10 12", in path order,
// consecutive duplicates dropped; lines of another file than the
// function's as FILE:LINE), each function's path DAG rebuilt once.
class PathLines {
 public:
  PathLines();
  ~PathLines();
  // "" when `fn` has no path extension or `number` does not decode.
  std::string Text(const Function& fn, const TranslationUnit& tu,
                   uint64_t number);

 private:
  struct Decoder;
  std::map<const Function*, std::unique_ptr<Decoder>> decoders_;
};

// The text of source files (SourcePath), each read once.
class SourceFiles {
 public:
  // Line `line` (1-based) of `path`, or nullptr when unreadable.
  const std::string* Line(const std::string& path, uint32_t line);

 private:
  std::map<std::string, std::unique_ptr<std::vector<std::string>>> files_;
};

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_COMBINED_ITEMS_H_
