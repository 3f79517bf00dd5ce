// profile_inputs.cc — see profile_inputs.h.
#include "reconstruct/profile_inputs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/profile_reader.h"
#include "reconstruct/commands.h"

namespace ballarus {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Every `*.bprof` under `dir` (recursively; directory links not followed).
void Walk(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (!d) Fail(dir, std::string("cannot read directory: ") + std::strerror(errno));
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
  }
  closedir(d);
  for (const std::string& name : names) {
    const std::string path =
        dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      Walk(path, out);
    } else if (EndsWith(name, ".bprof")) {
      // A link to a file is followed; a link to a directory is not.
      if (S_ISLNK(st.st_mode) &&
          (stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)))
        continue;
      out->push_back(path);
    }
  }
}

}  // namespace

std::vector<std::string> ExpandProfileInputs(
    const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    struct stat st;
    if (stat(arg.c_str(), &st) != 0)
      Fail(arg, std::string("cannot read: ") + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    Walk(arg, &found);
    if (found.empty()) Fail(arg, "no *.bprof profiles in this directory");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

void MergeProfileFiles(const std::vector<std::string>& files, bool skip_bad,
                       ballarus_profile* merged,
                       std::vector<std::string>* read) {
  char err[512];
  size_t n_read = 0;
  for (const std::string& in : files) {
    std::string problem;
    {
      ProfileRecords p;  // full validation, metadata and path data included
      if (!ReadProfile(in, &p, &problem)) {
        // kept in `problem`
      } else if (ballarus_profile_merge(merged, &p.raw, err, sizeof err) !=
                 0) {
        problem = std::string("cannot merge: ") + err;
      } else {
        ++n_read;
        if (read) read->push_back(in);
        continue;
      }
    }
    if (!skip_bad) Fail(in, problem);
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s: skipped: %s\n", kProg,
                 Printable(in).c_str(), Printable(problem).c_str());
  }
  if (n_read == 0)
    Fail(InputsLabel(files), "no profile could be read");
}

std::string InputsLabel(const std::vector<std::string>& args) {
  std::string label;
  for (const std::string& a : args) label += (label.empty() ? "" : " ") + a;
  return label;
}

}  // namespace ballarus
