// cmd_combine.cc — `ballarus-reconstruct combine`: a combined profile
// (core/combined_profile.h) of observations.
//
//   ballarus-reconstruct combine [-o OUT] [--json FILE] [--bins B]
//                                [--per-test] [--skip-bad] INPUT...
//
// Each INPUT is one observation: a profile file, or a directory whose
// *.bprof are merged into one (reconstruct/profile_inputs.h), read, solved
// and added.  With --per-test the profile inputs are merged into one and
// each test named in it (BALLARUS_TEST, core/profile_reader.h TestNames)
// is one observation instead.  An INPUT that is a combined profile adds its
// observations (CombinedProfile::Combine).  Streams: one input (or one
// test) is held at a time besides the combined statistics, so memory grows
// with the program's size, not with the number of observations (but
// --per-test holds the merged profile of its inputs).
//
// -o writes the combined profile (atomically, output_file.h); --json
// writes its JSON report (reconstruct/combined_json.h; "-" is stdout).
#include "reconstruct/cmd_combine.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/combined_profile.h"
#include "core/profile_reader.h"
#include "reconstruct/combined_json.h"
#include "reconstruct/commands.h"
#include "reconstruct/output_file.h"
#include "reconstruct/profile_inputs.h"

namespace ballarus {
namespace {

// One profile input (file or directory) merged, read and solved; a single
// file is read once, not merged (which reads it too) and decoded again.
void ReadInput(const std::string& arg, bool skip_bad, ProfileRecords* out) {
  const std::vector<std::string> files = ExpandProfileInputs({arg});
  std::string err;
  if (files.size() == 1) {
    if (!ReadProfile(files[0], out, &err)) Fail(files[0], err);
    return;
  }
  ballarus_profile merged{};
  MergeProfileFiles(files, skip_bad, &merged, nullptr);
  if (!ReadProfileFrom(&merged, out, &err)) Fail(arg, err);
}

void AddTests(const std::vector<std::string>& args, bool skip_bad,
              CombinedProfile* c) {
  ballarus_profile merged{};
  struct Free {
    ballarus_profile* p;
    ~Free() { ballarus_profile_free(p); }
  } free_merged{&merged};
  std::vector<std::string> files = ExpandProfileInputs(args);
  MergeProfileFiles(files, skip_bad, &merged, nullptr);
  ProfileRecords all;
  std::string err;
  const std::string label = InputsLabel(args);
  if (!ReadProfileFrom(&merged, &all, &err)) Fail(label, err);
  const std::vector<std::string> names = TestNames(all);
  if (names.empty())
    Fail(label, "--per-test: no named runs (BALLARUS_TEST) in the profiles");
  for (const std::string& name : names) {
    ProfileRecords test;
    if (!ReadNamedRun(all, name, &test, &err) ||
        !c->AddObservation(test, name, &err))
      Fail(label, "test '" + name + "': " + err);
  }
}

void AddInputs(const CombineArgs& args, CombinedProfile* c) {
  std::vector<std::string> profiles;
  for (const std::string& arg : args.inputs) {
    std::string err;
    if (!FileLooksCombined(arg)) {
      if (args.per_test) {
        profiles.push_back(arg);
        continue;
      }
      ProfileRecords obs;
      ReadInput(arg, args.skip_bad, &obs);
      if (!c->AddObservation(obs, arg, &err)) Fail(arg, err);
      continue;
    }
    CombinedProfile other;
    if (!ReadCombinedProfile(arg, &other, &err) || !c->Combine(other, &err))
      Fail("", err.rfind(arg, 0) == 0 ? err : arg + ": " + err);
  }
  if (!profiles.empty()) AddTests(profiles, args.skip_bad, c);
}

void WriteJson(const std::string& path, const CombinedProfile& c) {
  if (path == "-") {
    WriteCombinedJson(c, stdout);
    std::fflush(stdout);
    return;
  }
  std::FILE* tmp = std::tmpfile();
  if (!tmp) Fail(path, "cannot create a temporary file");
  WriteCombinedJson(c, tmp);
  std::string bytes(static_cast<size_t>(std::ftell(tmp)), '\0');
  std::rewind(tmp);
  const size_t got = std::fread(bytes.data(), 1, bytes.size(), tmp);
  std::fclose(tmp);
  if (got != bytes.size()) Fail(path, "cannot read back the report");
  WriteOutputFileOrFail(path, bytes);
}

// Without --bins: the bins of the first combined-profile input (so that
// combining more into a profile made with --bins needs no option), else
// the default.
unsigned ResolveBins(const CombineArgs& args) {
  if (args.bins != 0) return args.bins;
  for (const std::string& arg : args.inputs) {
    if (!FileLooksCombined(arg)) continue;
    std::ifstream in(arg, std::ios::binary);
    char header[16];
    uint32_t bins = 0;
    if (in.read(header, sizeof header)) std::memcpy(&bins, header + 12, 4);
    return bins;  // out of range: clamped, and the reader refuses the file
  }
  return kDefaultBins;
}

}  // namespace

CLI::App* AddCombineCommand(CLI::App* app, CombineArgs* args) {
  CLI::App* c = app->add_subcommand(
      "combine",
      "Combine observations (profiles, directories, named tests or "
      "combined profiles) into a combined profile: per block, edge, line "
      "and path the mean, variance, min, max and a histogram.");
  c->add_option("INPUT", args->inputs,
                "each one observation: a profile, a directory of *.bprof "
                "(merged), or a combined profile (its observations)")
      ->required();
  c->add_option("-o,--output", args->out,
                "combined profile to write (atomically)")
      ->type_name("FILE");
  c->add_option("--json", args->json,
                "write the JSON report of the result (- for stdout)")
      ->type_name("FILE");
  c->add_option("--bins", args->bins,
                "histogram bins (2..65, default 15, or those of the first "
                "combined-profile input; bin 0 holds zeros, the others "
                "split log2 of the counts evenly; 65: one per power of two)")
      ->check(CLI::Range(2, 65))
      ->type_name("B");
  c->add_flag("--per-test", args->per_test,
              "each test named in the profile inputs (BALLARUS_TEST) is one "
              "observation, instead of each input");
  c->add_flag("--skip-bad", args->skip_bad,
              "name unusable .bprof files on stderr and go on without them");
  return c;
}

int RunCombine(const CombineArgs& args) {
  if (args.out.empty() && args.json.empty())
    Fail("", "combine: give -o FILE, --json FILE, or both");
  CombinedProfile c(ResolveBins(args));
  AddInputs(args, &c);
  const std::string bytes = c.Serialize();  // also completes the zeros
  if (!args.out.empty()) {
    OutputFile::Options options;
    options.fsync = true;  // often the only copy of many runs
    std::string error;
    if (!WriteOutputFile(args.out, std::string_view(bytes), options, &error))
      Fail(args.out, error);
  }
  if (!args.json.empty()) WriteJson(args.json, c);
  return 0;
}

}  // namespace ballarus
