// lambdas.cc — C++ lambdas: GCC marks their operator() DECL_ARTIFICIAL,
// but gcov counts them (coverage.cc: artificial = DECL_ARTIFICIAL and not
// versioned and not a lambda), so their lines must have counts, not "-".
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

template <typename F>
static int apply_n(int n, F f) {
  int s = 0;
  for (int i = 0; i < n; i++) s += f(i);
  return s;
}

int main() {
  std::vector<int> v = {5, 3, 9, 1, 7, 2};
  int calls = 0;
  std::sort(v.begin(), v.end(), [&calls](int a, int b) {
    calls++;  // how often depends on libstdc++'s sort: compared with gcov
    return a < b;
  });
  long big = std::count_if(v.begin(), v.end(), [](int x) {
    return x > 4; /* count(6) */
  });
  int odd = 0;
  std::for_each(v.begin(), v.end(), [&odd](int x) {
    if (x % 2) /* count(6) */
      odd++;   /* count(5) */
  });
  auto square = [](auto x) {
    return x * x; /* count(7) */
  };
  int sq = apply_n(5, square) + static_cast<int>(square(1.5)) + square(3);
  std::function<int(int)> twice = [&](int x) {
    return 2 * x; /* count(10) */
  };
  int tw = apply_n(10, twice);
  std::printf("sorted=%d,%d calls>0=%d big=%ld odd=%d sq=%d tw=%d\n",
              v.front(), v.back(), calls > 0, big, odd, sq, tw);
  return 0;
}
