// exceptions.cc — a C++ exception thrown four frames below its handler,
// with objects whose destructors run during unwinding, and a rethrow.
#include <cstdio>
#include <stdexcept>
#include <string>

static int destroyed = 0;
static int constructed = 0;

struct Guard {
  explicit Guard(int v) : v(v) { constructed++; }
  ~Guard() { destroyed += v; }
  int v;
};

static int level3(int x) {
  Guard g(3);
  if (x % 3 == 0)
    throw std::runtime_error("multiple of three: " + std::to_string(x)); /* count(4) */
  return x + g.v; /* count(6) */
}

static int level2(int x) {
  Guard g(2);
  return level3(x) * 2;
}

static int level1(int x) {
  Guard g(1);
  try {
    return level2(x);
  } catch (const std::logic_error&) {
    return -1; /* count(0) */
  }
}

static int rethrower(int x) {
  try {
    return level1(x);
  } catch (...) {
    destroyed += 1000; /* count(4) */
    throw;
  }
}

int main() {
  long sum = 0;
  int caught = 0;
  std::string last;
  for (int i = 0; i < 10; i++) {
    try {
      sum += rethrower(i);
    } catch (const std::exception& e) {
      caught++; /* count(4) */
      last = e.what();
    }
  }
  std::printf("sum=%ld caught=%d constructed=%d destroyed=%d last=%s\n", sum,
              caught, constructed, destroyed, last.c_str());
  return 0;
}
