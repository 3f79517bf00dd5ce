// progress.h — a progress line on stderr for reports that take a while.
//
// A Progress names one stage of a command ("drawing CFG pictures") with the
// number of steps it has; the command calls Step() as it goes and Done()
// at the end.  Nothing is printed for a stage that ends within its first
// second, so quick reports stay silent.  After that:
//   * stderr a terminal: one line, rewritten in place at most ten times a
//     second ("ballarus-reconstruct: html: drawing CFG pictures 12/50"),
//     and left on screen with its final count by Done();
//   * otherwise (a log, a CI job): a plain line every ten seconds and one
//     at the end, the way genhtml prints its stages into a build log.
// A Progress made with `quiet` (the commands' --quiet) prints nothing.
#ifndef BALLARUS_RECONSTRUCT_PROGRESS_H_
#define BALLARUS_RECONSTRUCT_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace ballarus {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `what`: the line's text before the count ("ballarus-reconstruct: html:
  // drawing CFG pictures"); `total`: the number of steps (0: unknown).
  Progress(std::string what, size_t total, bool quiet);
  // For tests: writes to `out`, a terminal or not as `tty` says, and reads
  // time from `now` instead of the clock.
  Progress(std::string what, size_t total, bool quiet, std::FILE* out,
           bool tty, Clock::time_point (*now)());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` steps of `total` are finished.
  void Step(size_t done);
  // The stage is over: the last line, if any line was printed.
  void Done();

 private:
  void Print(bool final);

  std::string what_;
  size_t total_ = 0, done_ = 0;
  bool quiet_ = false, tty_ = false, printed_ = false, finished_ = false;
  std::FILE* out_ = nullptr;
  Clock::time_point (*now_)() = nullptr;
  Clock::time_point start_, last_;
};

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_PROGRESS_H_
