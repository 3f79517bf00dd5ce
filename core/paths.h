// paths.h — GCC-free path rules: lexical normalisation, and where gcov puts
// a translation unit's .gcda (so that ballarus puts its .bprof there).
//
// The plugin (plugin/profile_location.cc) feeds these functions GCC's own
// values (aux_base_name, getpwd(), -fprofile-dir, -fprofile-prefix-path)
// and the driver's options (COLLECT_GCC_OPTIONS); everything here is plain
// string work so it can be tested without GCC (core/paths_test.cc) and
// reused by reconstruct for absolute source names.
#ifndef BALLARUS_CORE_PATHS_H_
#define BALLARUS_CORE_PATHS_H_

#include <string>
#include <vector>

namespace ballarus {

// Lexical normalisation, no file system access: repeated and trailing
// slashes and "." components are dropped, "x/.." pairs cancel, ".." at the
// root is the root.  Relative paths stay relative (leading ".." kept); ""
// and "." become ".".  Symbolic links are not resolved: "l/.." is "." even
// when l is a link (the same rule for every reader of a profile).
std::string NormalizePath(const std::string& path);

// `path` made absolute against `base` (itself absolute), then normalised.
std::string AbsolutePath(const std::string& base, const std::string& path);

// A source name as a TU spells it (its file table, core/model.h), made
// absolute against the TU's compilation directory `cwd` and normalised:
// what reports call the file ("test/../src/os.cc" in /p is "/p/src/os.cc").
// Relative (normalised) only when `cwd` is empty.
std::string SourcePath(const std::string& cwd, const std::string& name);

// gcov's mangle_path (gcc/gcov-io.cc): '/' -> '#', a ".." component ->
// '^'.  Used for -fprofile-dir, where the whole path of the object goes
// into one file name.
std::string MangleGcovPath(const std::string& path);

// What coverage_init (gcc/coverage.cc, GCC 12) knows when it names the
// .gcda file.
struct GcovNameInputs {
  std::string aux_base;     // aux_base_name: "obj/a", "prog-a", "/abs/x"
  std::string pwd;          // getpwd(): the compilation directory
  std::string profile_dir;  // -fprofile-dir= / -fprofile-generate=DIR as
                            // given ("" when neither was)
  std::string prefix_path;  // -fprofile-prefix-path= ("" when not given)
};

// gcov's data file name without its ".gcda" suffix, exactly as GCC 12
// computes it (not normalised; relative when gcov's is, i.e. only for a
// relative -fprofile-dir).  The one computation of the data-file stem:
// ProfilePathFor (the .bprof) and core/gcda.h GcdaFileName (the .gcda that
// `ballarus-reconstruct gcda` writes and the plugin names) both call it.
// When PWD/AUX does not start with prefix_path GCC warns and keeps the
// whole path: *warning (may be null) gets GCC's text, else is cleared.
std::string GcovDataBase(const GcovNameInputs& in,
                         std::string* warning = nullptr);

// The TU's profile file: GcovDataBase + ".bprof", made absolute against
// the compilation directory and normalised.  (gcov resolves a relative
// -fprofile-dir against the working directory at run time; ballarus fixes
// it at compile time, like every other profile location.)
std::string ProfilePathFor(const GcovNameInputs& in);

// Splits the driver's COLLECT_GCC_OPTIONS ('-c' '-o' 'obj/a.o' ...; a
// quote inside a word is written '\'') into words.  Returns false on text
// of another shape.
bool ParseCollectGccOptions(const std::string& text,
                            std::vector<std::string>* words);

// The object file a compile writes, from the driver's options: with -c,
// the -o argument, else the source's base name with its suffix replaced by
// ".o" (in the working directory); absolute and normalised against `pwd`.
// "" when there is none to name: no -c (compile and link in one command:
// the object is a temporary), -S, -E, or a source read from stdin without
// -o.
std::string ObjectFileFor(const std::vector<std::string>& driver_options,
                          const std::string& source, const std::string& pwd);

}  // namespace ballarus

#endif  // BALLARUS_CORE_PATHS_H_
