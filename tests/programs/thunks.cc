// thunks.cc — C++ thunks: calling C::g through a B* goes through a
// this-adjusting thunk (_ZThn8_N1C1gEi).  gcov instruments thunks
// (tree_profiling expands them into GIMPLE bodies; .gcno checksum 0, only
// the entry arc counted); ballarus expands and counts them too.  Thunks
// are compiler-generated, so neither reports lines for them.
#include <cstdio>

struct A {
  virtual int f(int x) { return x + 1; }
  virtual ~A() {}
};
struct B {
  virtual int g(int x) { return x * 2; }
  virtual ~B() {}
};
struct C : A, B {
  int g(int x) override {
    return x * 3; /* count(5) */
  }
};

int main() {
  C c;
  B* b = &c;
  int s = 0;
  for (int i = 0; i < 5; i++)
    s += b->g(i); /* count(5) */
  std::printf("%d\n", s);
  return 0;
}
