// progress.cc — the progress line (see progress.h).
#include "reconstruct/progress.h"

#include <unistd.h>

#include <utility>

namespace ballarus {

namespace {

// Silent for the first second; then, on a terminal, redrawn ten times a
// second, else a line every ten seconds.
constexpr std::chrono::milliseconds kQuietStart{1000};
constexpr std::chrono::milliseconds kTtyEvery{100};
constexpr std::chrono::milliseconds kLogEvery{10000};

Progress::Clock::time_point SteadyNow() { return Progress::Clock::now(); }

}  // namespace

Progress::Progress(std::string what, size_t total, bool quiet)
    : Progress(std::move(what), total, quiet, stderr, isatty(2) == 1,
               &SteadyNow) {}

Progress::Progress(std::string what, size_t total, bool quiet,
                   std::FILE* out, bool tty, Clock::time_point (*now)())
    : what_(std::move(what)),
      total_(total),
      quiet_(quiet),
      tty_(tty),
      out_(out),
      now_(now),
      start_(now()),
      last_(start_) {}

Progress::~Progress() { Done(); }

void Progress::Step(size_t done) {
  done_ = done;
  if (quiet_ || finished_) return;
  const Clock::time_point t = now_();
  if (t - start_ < kQuietStart) return;
  if (printed_ && t - last_ < (tty_ ? kTtyEvery : kLogEvery)) return;
  last_ = t;
  Print(false);
}

void Progress::Done() {
  if (finished_) return;
  finished_ = true;
  if (printed_) Print(true);
}

void Progress::Print(bool final) {
  std::string line = what_ + " " + std::to_string(done_);
  if (total_) line += "/" + std::to_string(total_);
  if (final) line += ", done";
  if (tty_)
    std::fprintf(out_, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  printed_ = true;
}

}  // namespace ballarus
