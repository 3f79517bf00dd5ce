// line_flags.cc — gcov's line flags: "N*" for a line that ran N times but
// holds a block that never ran, "=====" for a line never run whose blocks
// are all exceptional (reachable only when something throws), "#####" for
// one never run that is reachable normally.  ballarus' line data carries
// the same flags (show --json: unexecuted_block, exceptional).
#include <cstdio>
#include <stdexcept>

static int clamp(int x) {
  int r = x > 2 ? x : -x; /* count(5*) */
  if (x > 100) r = 100;   /* count(5*) */
  return r;               /* count(5) */
}

static int checked(int x) {
  if (x > 50) throw std::out_of_range("x"); /* count(5*) */
  return x + 1;                              /* count(5) */
}

int main() {
  int sum = 0;
  for (int i = 3; i < 8; i++) {
    try {
      sum += checked(clamp(i)); /* count(5) */
    } catch (const std::exception &e) {
      std::printf("caught %s\n", e.what()); /* count(=====) */
      sum = -1;                             /* count(=====) */
    }
  }
  if (sum < 0) std::printf("never\n"); /* count(1*) */
  if (sum > 1000)
    sum = 0; /* count(#####) */
  std::printf("sum=%d\n", sum);
  return 0;
}
