// output_file.h — every file ballarus-reconstruct writes (reports, .gcov
// files, .gcda files, merged profiles) is created through this one helper,
// which rests on runtime/safe_file.h:
//   * the directories of the path are walked without following a symbolic
//     link of another user (a planted link in a directory component is
//     refused with one line naming it);
//   * the content goes to a new temporary file NAME.tmp.<pid>.<n> beside
//     NAME, created O_EXCL | O_NOFOLLOW with its final mode from the start,
//     then renamed over NAME: a symbolic link planted at NAME is replaced,
//     never followed, and readers see the old file or the new one;
//   * the final mode is 0666 less the umask, narrowed to the mode of the
//     regular file it replaces (a report kept 0600 stays 0600);
//   * temporary files left by writers that died are removed first.
#ifndef BALLARUS_RECONSTRUCT_OUTPUT_FILE_H_
#define BALLARUS_RECONSTRUCT_OUTPUT_FILE_H_

#include <string>
#include <string_view>

namespace ballarus {

// One file being written: Open, write to fd(), Commit.  Destroyed without
// a Commit (an error, an exception), the temporary file is removed and the
// old file stays.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  struct Options {
    bool mkdir = false;  // create missing directories of the path
    bool fsync = false;  // the file and its directory made durable
  };
  // false with the reason in *error (it names the component or file).
  bool Open(const std::string& path, const Options& options,
            std::string* error);
  int fd() const { return fd_; }
  // Closes the file and renames it over the path; false with the reason.
  bool Commit(std::string* error);

 private:
  void Abort();

  int dirfd_ = -1, fd_ = -1;
  unsigned flags_ = 0;
  std::string name_, tmp_;
};

// `bytes` written to `path` as above; false with the reason in *error.
bool WriteOutputFile(const std::string& path, std::string_view bytes,
                     const OutputFile::Options& options, std::string* error);

// The same; an error is a Fail (commands.h) naming `path`.
void WriteOutputFileOrFail(const std::string& path, std::string_view bytes);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_OUTPUT_FILE_H_
