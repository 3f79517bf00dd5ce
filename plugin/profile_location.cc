// profile_location.cc — the TU's profile path and object name from GCC's
// own state (see profile_location.h).
//
// gcov's rule (coverage_init, gcc/coverage.cc, GCC 12): the data file is
// aux_base_name + ".gcda", where the driver has already folded -o, -dumpdir
// and -dumpbase into aux_base_name ("obj/a" for `-c src/a.c -o obj/a.o`,
// "prog-a" for `-o prog a.c b.c`); a relative name is taken against the
// compilation directory, unless -fprofile-dir=DIR (or -fprofile-generate=
// DIR) is given: then the whole absolute path is mangled into one file name
// in DIR ('/' -> '#', after -fprofile-prefix-path= is stripped).  The
// string work is core/paths.cc; this file only reads GCC's globals.
//
// profile_data_prefix holds -fprofile-dir's value, or, when it was not
// given and the aux name is relative, coverage_init's getpwd() (it assigns
// the pointer getpwd() returns, which libiberty caches): the pointer
// comparison below tells the two apart exactly as coverage_init's own
// state would.
//
// The object file is not known to cc1 (the driver passes it only a
// temporary assembler output); the driver exports its options in
// COLLECT_GCC_OPTIONS, from which core/paths.cc derives it.
#include "plugin/profile_location.h"

#include <string>
#include <vector>

#include "core/model.h"
#include "core/paths.h"

#include "plugin/gcc_compat.h"

namespace ballarus_plugin {

void SetProfileLocation(ballarus::TranslationUnit* tu) {
  const char* pwd = getpwd();
  ballarus::GcovNameInputs in;
  in.pwd = pwd != NULL ? pwd : tu->cwd;
  in.aux_base = aux_base_name != NULL ? aux_base_name : "gccaux";
  if (profile_data_prefix != NULL && profile_data_prefix != pwd)
    in.profile_dir = profile_data_prefix;
  if (profile_prefix_path != NULL) in.prefix_path = profile_prefix_path;
  tu->profile = ballarus::ProfilePathFor(in);

  tu->object.clear();
  const char* opts = getenv("COLLECT_GCC_OPTIONS");
  std::vector<std::string> words;
  if (opts != NULL && ballarus::ParseCollectGccOptions(opts, &words))
    tu->object = ballarus::ObjectFileFor(words, tu->source, in.pwd);
}

}  // namespace ballarus_plugin
