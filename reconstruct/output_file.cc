// output_file.cc — see output_file.h.
#include "reconstruct/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "reconstruct/commands.h"
#include "runtime/safe_file.h"

namespace ballarus {
namespace {

// 0666 less the umask, narrowed to the mode of the regular file now at
// `name` (never widened by it).
unsigned ModeFor(int dirfd, const char* name) {
  unsigned mode = 0666;
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISREG(st.st_mode))
    mode &= st.st_mode & 0777;
  return mode;
}

}  // namespace

OutputFile::~OutputFile() { Abort(); }

void OutputFile::Abort() {
  if (fd_ >= 0) close(fd_);
  if (dirfd_ >= 0 && !tmp_.empty()) unlinkat(dirfd_, tmp_.c_str(), 0);
  if (dirfd_ >= 0) close(dirfd_);
  fd_ = dirfd_ = -1;
  tmp_.clear();
}

bool OutputFile::Open(const std::string& path, const Options& options,
                      std::string* error) {
  Abort();
  flags_ = (options.mkdir ? BALLARUS_SF_MKDIR : 0u) |
           (options.fsync ? BALLARUS_SF_FSYNC : 0u);
  char err[512];
  const char* name = nullptr;
  dirfd_ = ballarus_sf_open_parent(path.c_str(), flags_, 0777, &name, err,
                                   sizeof err);
  if (dirfd_ < 0) {
    *error = err;
    return false;
  }
  name_ = name;
  const char* names[1] = {name_.c_str()};
  ballarus_sf_remove_orphans(dirfd_, names, 1, nullptr, nullptr);
  char made[4096];
  fd_ = ballarus_sf_create_unique(dirfd_, name_.c_str(), 1,
                                  ModeFor(dirfd_, name_.c_str()), flags_, made,
                                  sizeof made, err, sizeof err);
  if (fd_ < 0) {
    *error = err;
    Abort();
    return false;
  }
  tmp_ = made;
  return true;
}

bool OutputFile::Commit(std::string* error) {
  if (fd_ < 0) {
    *error = "not open";
    return false;
  }
  if ((flags_ & BALLARUS_SF_FSYNC) && fsync(fd_) != 0) {
    *error = "cannot fsync " + tmp_ + ": " + std::strerror(errno);
    return false;
  }
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) {
    *error = "cannot write " + tmp_ + ": " + std::strerror(errno);
    return false;
  }
  char err[512];
  // ballarus_sf_commit removes the temporary file when it fails.
  const bool ok = ballarus_sf_commit(dirfd_, tmp_.c_str(), name_.c_str(),
                                     flags_, err, sizeof err) == 0;
  tmp_.clear();
  if (!ok) *error = err;
  Abort();
  return ok;
}

bool WriteOutputFile(const std::string& path, std::string_view bytes,
                     const OutputFile::Options& options, std::string* error) {
  OutputFile out;
  if (!out.Open(path, options, error)) return false;
  if (ballarus_sf_write_all(out.fd(), bytes.data(), bytes.size()) != 0) {
    *error = std::string("cannot write: ") + std::strerror(errno);
    return false;
  }
  return out.Commit(error);
}

void WriteOutputFileOrFail(const std::string& path, std::string_view bytes) {
  std::string error;
  if (!WriteOutputFile(path, bytes, {}, &error)) Fail(path, error);
}

}  // namespace ballarus
