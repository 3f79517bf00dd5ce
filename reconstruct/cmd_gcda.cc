// cmd_gcda.cc — the `gcda` subcommand; see cmd_gcda.h.
#include "reconstruct/cmd_gcda.h"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/combined_profile.h"
#include "core/gcda.h"
#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "reconstruct/gcda_export.h"
#include "reconstruct/output_file.h"

namespace ballarus {
namespace {

int Error(const std::string& line) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", kProg, Printable(line).c_str());
  return 2;
}

// A combined profile's rounded mean counts as a profile of one run; says
// so on stderr.
bool ReadMean(const std::string& path, CombinedProfile* c, ProfileRecords* p,
              std::string* error) {
  if (!ReadCombinedProfile(path, c, error)) return false;
  if (!MeanProfile(*c, p, error)) {
    *error = path + ": " + *error;
    return false;
  }
  std::fprintf(stderr,
               "%s: note: %s: combined profile of %llu observations: writing "
               "each count's mean, rounded to the nearest integer, as one "
               "run\n",
               kProg, Printable(path).c_str(),
               static_cast<unsigned long long>(c->n()));
  return true;
}

}  // namespace

CLI::App* AddGcdaCommand(CLI::App* app, GcdaArgs* args) {
  CLI::App* gcda = app->add_subcommand(
      "gcda",
      "Write the .gcda files GCC's -fprofile-use reads, so the program is "
      "optimised as with gcov's own profile.");
  gcda->add_option("PROFILE", args->profiles,
                   "profiles of one program, or directories of *.bprof "
                   "(their counts are added), or a combined profile (its "
                   "rounded means)")
      ->required();
  gcda->add_flag("--skip-bad", args->skip_bad,
                 "name unusable profiles on stderr and go on without them");
  CLI::Option* dir =
      gcda->add_option("-o,--output-dir", args->dir,
                       "write where gcc -fprofile-use=DIR looks "
                       "(DIR/mangled-object-path.gcda)")
          ->type_name("DIR");
  CLI::Option* in_place = gcda->add_flag(
      "--in-place", args->in_place,
      "write where the instrumented compile's gcov would (beside each "
      "object, or under its -fprofile-dir), for plain -fprofile-use");
  dir->excludes(in_place);
  in_place->excludes(dir);
  return gcda;
}

int RunGcda(const GcdaArgs& args) {
  if (!args.in_place && args.dir.empty())
    return Error("gcda: give --in-place or -o DIR");
  std::vector<std::unique_ptr<ProfileRecords>> read;
  std::vector<std::unique_ptr<CombinedProfile>> combined;
  std::vector<GcdaInput> profiles;
  // Directories expanded (reconstruct/profile_inputs.h); each profile
  // kept apart (its own runs' sum_max, gcda_export.h).
  for (const std::string& path : ExpandProfileInputs(args.profiles)) {
    auto p = std::make_unique<ProfileRecords>();
    std::string err;
    if (FileLooksCombined(path)) {
      combined.push_back(std::make_unique<CombinedProfile>());
      if (!ReadMean(path, combined.back().get(), p.get(), &err))
        return Error(err);
    } else if (!ReadProfile(path, p.get(), &err)) {
      if (!args.skip_bad) return Error(path + ": " + err);
      std::fprintf(stderr, "%s: %s: skipped: %s\n", kProg,
                   Printable(path).c_str(), Printable(err).c_str());
      continue;
    }
    read.push_back(std::move(p));
    profiles.push_back({path, read.back().get()});
  }
  if (profiles.empty()) return Error("gcda: no profile could be read");
  GcdaExportOptions options;
  if (!args.in_place) {
    options.where = GcdaExportOptions::kDir;
    options.dir = args.dir;
  }
  GcdaExport result;
  std::string err;
  if (!BuildGcdaFiles(profiles, options, &result, &err)) return Error(err);
  for (const std::string& note : result.notes)
    std::fprintf(stderr, "%s: note: %s\n", kProg, Printable(note).c_str());
  // Missing directories created (gcc -fprofile-use=DIR reads a tree),
  // without following another user's links (output_file.h).
  OutputFile::Options mkdir;
  mkdir.mkdir = true;
  for (const GcdaOutput& o : result.outputs) {
    const std::vector<uint8_t> bytes = EncodeGcda(o.file);
    if (!WriteOutputFile(o.path,
                         std::string_view(
                             reinterpret_cast<const char*>(bytes.data()),
                             bytes.size()),
                         mkdir, &err))
      return Error(o.path + ": " + err);
    std::printf("%s: %zu functions, runs %u, sum_max %llu\n", o.path.c_str(),
                o.file.functions.size(), o.file.runs,
                static_cast<unsigned long long>(o.file.sum_max));
  }
  return 0;
}

}  // namespace ballarus
