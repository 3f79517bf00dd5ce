// keep_regs_test.cc — the trampoline of keep_regs.h, called the way
// instrumented code calls it (an asm that steps over the red zone and
// pushes two words): the C function gets the words, every register the
// caller holds survives, and an unwinder started inside sees through the
// asm's stack adjustment to the caller's callers.
#include <execinfo.h>

#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/keep_regs.h"

#if defined(__x86_64__) && defined(__LP64__)

namespace {

// Volatile: GCC cannot see that the asm reaches keep_regs_test_nc.
volatile uint64_t g_args[2];
volatile bool g_unwind;  // the C side takes a backtrace
void* g_frames[32];
volatile int g_depth;

}  // namespace

extern "C" {
// Hidden, as the runtime's C sides: reached from the entry below only.
__attribute__((visibility("hidden"))) void* keep_regs_test_nc(void* a,
                                                               void* b);
void* keep_regs_test_nc(void* a, void* b) {
  g_args[0] = reinterpret_cast<uint64_t>(a);
  g_args[1] = reinterpret_cast<uint64_t>(b);
  if (g_unwind) g_depth = backtrace(g_frames, 32);
  return nullptr;
}
}

__asm__(".text\n" KEEP_REGS_ENTRY("keep_regs_test_rs", "keep_regs_test_nc",
                                  2));

namespace {

// Where Middle returns to in its caller, seen from inside Middle.
void* g_return_to_outer;

// The instrumented code's shape: a value live in a caller-saved register
// across the asm, which clobbers rax only.
__attribute__((noinline)) uint64_t Middle(uint64_t x) {
  g_return_to_outer = __builtin_return_address(0);
  uint64_t kept = x * 3;
  __asm__ volatile(
      "leaq -128(%%rsp), %%rsp\n\t"
      "pushq $22\n\t"
      "pushq $11\n\t"
      "call keep_regs_test_rs\n\t"
      "leaq 128(%%rsp), %%rsp"
      : "+c"(kept)
      :
      : "rax", "memory", "cc");
  return kept + 1;
}

__attribute__((noinline)) uint64_t Outer(uint64_t x) {
  uint64_t r = Middle(x);
  __asm__ volatile("" ::: "memory");  // not a tail call
  return r;
}

TEST(KeepRegs, ArgumentsArriveAndRegistersSurvive) {
  EXPECT_EQ(Outer(5), 16u);
  EXPECT_EQ(g_args[0], 11u);
  EXPECT_EQ(g_args[1], 22u);
}

TEST(KeepRegs, UnwindingSeesThroughTheAsm) {
  g_depth = 0;
  g_unwind = true;
  Outer(1);
  g_unwind = false;
  ASSERT_GT(g_depth, 0);
  bool found = false;
  for (int i = 0; i < g_depth; i++)
    if (g_frames[i] == g_return_to_outer) found = true;
  EXPECT_TRUE(found) << "no frame returns into Outer: the unwinder lost "
                        "the caller's stack pointer at the asm";
}

}  // namespace

#endif
