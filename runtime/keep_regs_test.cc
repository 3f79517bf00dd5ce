// keep_regs_test.cc — the trampoline of keep_regs.h, called the way
// instrumented code calls it (an asm that steps over the red zone and
// pushes two words): the C function gets the words and runs with
// cancellation disabled, every register the caller holds survives, and an
// unwinder started inside sees through the asm's stack adjustment to the
// caller's callers.
#include <execinfo.h>
#include <pthread.h>

#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/keep_regs.h"

#if defined(__x86_64__) && defined(__LP64__)

namespace {

// Volatile: GCC cannot see that the asm reaches keep_regs_test_kr.
volatile uint64_t g_args[2];
volatile bool g_unwind;  // the C side takes a backtrace
void* g_frames[32];
volatile int g_depth;
volatile int g_cancel_state = -1;  // as the C side found it

}  // namespace

extern "C" {
// Hidden, as the runtime's C sides: reached from the entry below only.
__attribute__((visibility("hidden"))) keep_regs_fn keep_regs_test_kr;
uint64_t keep_regs_test_kr(uint64_t a, uint64_t b) {
  g_args[0] = a;
  g_args[1] = b;
  int state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
  pthread_setcancelstate(state, &state);
  g_cancel_state = state;
  if (g_unwind) g_depth = backtrace(g_frames, 32);
  return 0;
}
}

__asm__(".text\n" KEEP_REGS_ENTRY("keep_regs_test_rs", "keep_regs_test_kr",
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

TEST(KeepRegs, TheCFunctionRunsWithCancellationDisabled) {
  int before;
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &before);
  g_cancel_state = -1;
  Outer(2);
  int after;
  pthread_setcancelstate(before, &after);
  EXPECT_EQ(g_cancel_state, PTHREAD_CANCEL_DISABLE);
  EXPECT_EQ(after, PTHREAD_CANCEL_ENABLE) << "the caller's state not restored";
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
