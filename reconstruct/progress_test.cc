// progress_test.cc — the progress line on a made-up clock: silent in the
// first second, redrawn in place on a terminal at most ten times a second,
// plain lines every ten seconds otherwise, nothing with quiet.
#include "reconstruct/progress.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace ballarus {
namespace {

using Clock = Progress::Clock;

Clock::time_point fake_now;
Clock::time_point Now() { return fake_now; }
void Advance(int ms) { fake_now += std::chrono::milliseconds(ms); }

// What `run` printed through a Progress writing to a temporary file.
template <typename Run>
std::string Output(bool tty, bool quiet, Run run) {
  std::FILE* f = std::tmpfile();
  {
    Progress p("tool: stage", 10, quiet, f, tty, &Now);
    run(&p);
  }
  std::string out;
  std::rewind(f);
  int c;
  while ((c = std::fgetc(f)) != EOF) out += static_cast<char>(c);
  std::fclose(f);
  return out;
}

TEST(Progress, QuickStageIsSilent) {
  EXPECT_EQ(Output(true, false, [](Progress* p) {
              for (int i = 1; i <= 10; ++i) {
                Advance(90);
                p->Step(i);
              }
            }),
            "");
}

TEST(Progress, TerminalLineIsRewrittenAndEnds) {
  const std::string out = Output(true, false, [](Progress* p) {
    Advance(1000);
    p->Step(3);   // printed: the first second is over
    Advance(50);
    p->Step(4);   // too soon after the last
    Advance(60);
    p->Step(5);   // printed
    p->Done();
  });
  EXPECT_EQ(out,
            "\rtool: stage 3/10\033[K"
            "\rtool: stage 5/10\033[K"
            "\rtool: stage 5/10, done\033[K\n");
}

TEST(Progress, LogGetsALineEveryTenSeconds) {
  const std::string out = Output(false, false, [](Progress* p) {
    Advance(1500);
    p->Step(1);
    Advance(5000);
    p->Step(2);
    Advance(5000);
    p->Step(7);
  });  // Done by the destructor
  EXPECT_EQ(out, "tool: stage 1/10\ntool: stage 7/10\ntool: stage 7/10, done\n");
}

TEST(Progress, QuietPrintsNothing) {
  EXPECT_EQ(Output(true, true, [](Progress* p) {
              Advance(30000);
              p->Step(10);
              p->Done();
            }),
            "");
}

}  // namespace
}  // namespace ballarus
