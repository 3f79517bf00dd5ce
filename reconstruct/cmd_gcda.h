// cmd_gcda.h — `ballarus-reconstruct gcda`: write the .gcda files GCC 12's
// -fprofile-use reads, from ballarus profiles (reconstruct/gcda_export.h).
//
//   ballarus-reconstruct gcda (--in-place | -o DIR) PROFILE...
//
// --in-place writes each TU's .gcda where its instrumented compile put
// gcov's (beside the object, or under the compile's -fprofile-dir); -o DIR
// writes them where `gcc -fprofile-use=DIR` looks (DIR/mangled-path.gcda).
// Files are replaced atomically (temporary file + rename), directories made
// as needed.  Prints one line per file written; notes (functions left out
// and why, merged-runs summary) go to stderr.  Exit 0, or 2 with one line
// `ballarus-reconstruct: FILE: problem` on bad usage or input.
#ifndef BALLARUS_RECONSTRUCT_CMD_GCDA_H_
#define BALLARUS_RECONSTRUCT_CMD_GCDA_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ballarus {

struct GcdaArgs {
  std::vector<std::string> profiles;
  std::string dir;
  bool in_place = false;
  bool skip_bad = false;
};

CLI::App* AddGcdaCommand(CLI::App* app, GcdaArgs* args);
int RunGcda(const GcdaArgs& args);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_CMD_GCDA_H_
