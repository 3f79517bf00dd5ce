#include <iostream>
#include <map>
#include <string>

#include "shapes.h"

int main(int argc, char** argv) {
  std::map<std::string, int> counts;
  for (int i = 1; i < argc; ++i) {
    if (shape_known(argv[i])) continue;
    ++counts[argv[i]];
  }
  for (const auto& [word, n] : counts) std::cout << word << ' ' << n << '\n';
  return 0;
}
