// named_lines — what the end-to-end tests of named runs (tests/named/)
// compare: the source lines that profiles say were executed, per named test
// or by the sum, and a profile's sum without its named runs.
//
//   named_lines tests PROFILE...  "TEST<tab>FILE:LINE", every line each named
//                                 test of the profiles executed
//   named_lines sum PROFILE...    "FILE:LINE", every line the sum executed
//   named_lines strip IN OUT      IN's records without its named section,
//                                 serialised (a profile without named runs
//                                 is written as before named runs existed)
//
// A line is executed when its gcov line count (core/gcov_lines.h, over the
// TU's functions as gcov's reports count them) is non-zero; FILE is the
// source as compiled, under the TU's compilation directory when relative.
// Lines are sorted and listed once over all the profiles given.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/gcov_arcs.h"
#include "core/gcov_lines.h"
#include "core/profile_reader.h"
#include "runtime/profile_io.h"

namespace ballarus {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "named_lines: %s\n", what.c_str());
  std::exit(1);
}

// Adds "FILE:LINE" of every line `records` executed to *lines.
void ExecutedLines(const ProfileRecords& records,
                   std::set<std::string>* lines) {
  for (const LoadedTu& lt : records.tus) {
    std::vector<GcovFunctionInput> inputs;
    for (size_t i = 0; i < lt.tu.functions.size(); ++i)
      if (!IsProfileUseOnly(lt.tu.functions[i]))
        inputs.push_back(GcovFunctionInput{&lt.tu.functions[i],
                                           &lt.copies[i].flow.edges,
                                           &lt.copies[i].flow.blocks});
    for (const GcovLine& l : GcovLineCounts(inputs)) {
      if (l.count == 0) continue;
      const std::string& f = lt.tu.files[l.file];
      std::string file = !f.empty() && f[0] == '/' ? f : lt.tu.cwd + "/" + f;
      lines->insert(file + ":" + std::to_string(l.line));
    }
  }
}

void Read(const std::string& path, ProfileRecords* out) {
  std::string error;
  if (!ReadProfile(path, out, &error)) Die(path + ": " + error);
}

int Sum(const std::vector<std::string>& paths) {
  std::set<std::string> lines;
  for (const std::string& path : paths) {
    ProfileRecords records;
    Read(path, &records);
    ExecutedLines(records, &lines);
  }
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
  return 0;
}

int Tests(const std::vector<std::string>& paths) {
  std::set<std::pair<std::string, std::string>> rows;
  for (const std::string& path : paths) {
    ProfileRecords all;
    Read(path, &all);
    for (const std::string& name : TestNames(all)) {
      ProfileRecords one;
      std::string error;
      if (!ReadNamedRun(all, name, &one, &error))
        Die(path + ": test '" + name + "': " + error);
      std::set<std::string> lines;
      ExecutedLines(one, &lines);
      for (const std::string& l : lines) rows.emplace(name, l);
    }
  }
  for (const auto& [name, line] : rows)
    std::printf("%s\t%s\n", name.c_str(), line.c_str());
  return 0;
}

int Strip(const std::string& in, const std::string& out) {
  ballarus_profile p{};
  char err[512];
  if (ballarus_profile_read_file(in.c_str(), &p, err, sizeof err) != 0)
    Die(in + ": " + err);
  const uint64_t n_named = p.n_named;
  p.n_named = 0;  // serialise the records alone; restored for the free
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  const int rc = ballarus_profile_serialize(&p, &buf, &size, err, sizeof err);
  p.n_named = n_named;
  ballarus_profile_free(&p);
  if (rc != 0) Die(in + ": " + err);
  FILE* f = std::fopen(out.c_str(), "wb");
  const bool ok = f != nullptr && std::fwrite(buf, 1, size, f) == size &&
                  std::fclose(f) == 0;
  std::free(buf);
  if (!ok) Die("cannot write " + out);
  return 0;
}

}  // namespace
}  // namespace ballarus

int main(int argc, char** argv) {
  const std::string usage =
      "usage: named_lines tests|sum PROFILE... | named_lines strip IN OUT";
  if (argc < 3) ballarus::Die(usage);
  const std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "tests") return ballarus::Tests(args);
  if (cmd == "sum") return ballarus::Sum(args);
  if (cmd == "strip" && args.size() == 2)
    return ballarus::Strip(args[0], args[1]);
  ballarus::Die(usage);
}
