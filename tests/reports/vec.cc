// vec.cc — a program with code in system headers (std::vector), for the
// report filters in report_tools_test: by default reports show only the
// project's files; --all-files adds the headers.
#include <cstdio>
#include <vector>

static int sum(const std::vector<int>& v) {
  int s = 0;
  for (int x : v) s += x;
  return s;
}

int main() {
  std::vector<int> v;
  for (int i = 0; i < 5; ++i) v.push_back(i);
  std::printf("%d\n", sum(v));
  return 0;
}
