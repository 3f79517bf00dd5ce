// mt_cxx.cc — mt.c's C++ scenarios (linked into the C++ build only).
//
//   thread_local_dtor  4 std::threads, each with a thread_local object
//                      whose destructor runs work_n(.., N_WORK): C++'s
//                      thread-exit destructors run before the runtime
//                      folds the thread's counters.  work: 4 x 2 x N_WORK.
//   exceptions         4 threads each throw and catch 1000 exceptions
//                      through thrower() (thrower: 4000, work: 4000).
//   static_join        main returns while 4 std::threads wait; a static
//                      object's destructor lets them count and joins them.
//                      work: 4 x N_WORK.
#include <semaphore.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#define NOIPA __attribute__((noipa))
#define N_WORK 20000

NOIPA unsigned long work(unsigned long x);
NOIPA unsigned long work_n(unsigned long seed, unsigned long n);

namespace {

std::mutex out_lock;
unsigned long total;

struct AtThreadExit {
  unsigned long seed = 0;
  ~AtThreadExit() {
    unsigned long s = work_n(seed, N_WORK);
    std::lock_guard<std::mutex> g(out_lock);
    total += s;
  }
};
thread_local AtThreadExit at_exit_of_thread;

int ThreadLocalDtor() {
  std::vector<std::thread> ts;
  for (unsigned long i = 0; i < 4; i++)
    ts.emplace_back([i] {
      at_exit_of_thread.seed = i * 13;
      unsigned long s = work_n(i, N_WORK);
      std::lock_guard<std::mutex> g(out_lock);
      total += s;
    });
  for (auto& t : ts) t.join();
  std::printf("thread_local %lu\n", total);
  return 0;
}

NOIPA void thrower(unsigned long i) {
  if (work(i) != 0) throw std::runtime_error("odd");
}

int Exceptions() {
  std::vector<std::thread> ts;
  unsigned long caught[4] = {0, 0, 0, 0};
  for (unsigned long k = 0; k < 4; k++)
    ts.emplace_back([k, &caught] {
      for (unsigned long i = 0; i < 1000; i++) {
        try {
          thrower(i + 1);
        } catch (const std::runtime_error&) {
          caught[k]++;
        }
      }
    });
  for (auto& t : ts) t.join();
  std::printf("caught %lu\n", caught[0] + caught[1] + caught[2] + caught[3]);
  return 0;
}

// Start() returns once the 4 threads are all blocked in cv.wait (the
// predicate checked once, false), so the counts do not depend on when they
// got there: the 4th posts a semaphore holding m, which it releases only
// inside the wait, and Start then takes m once.  (A waiting loop in Start
// would iterate a number of times that depends on timing.)
struct LateThreads {
  std::mutex m;
  std::condition_variable cv;
  sem_t all_waiting;
  bool go = false;
  int waiting = 0;
  unsigned long sums[4] = {0, 0, 0, 0};
  std::vector<std::thread> ts;
  void Start() {
    sem_init(&all_waiting, 0, 0);
    for (unsigned long i = 0; i < 4; i++)
      ts.emplace_back([this, i] {
        {
          std::unique_lock<std::mutex> l(m);
          if (++waiting == 4) sem_post(&all_waiting);
          cv.wait(l, [this] { return go; });
        }
        sums[i] = work_n(i * 5, N_WORK);
      });
    while (sem_wait(&all_waiting) != 0) {
    }
    std::lock_guard<std::mutex> l(m);
  }
  ~LateThreads() {
    if (ts.empty()) return;
    {
      std::lock_guard<std::mutex> l(m);
      go = true;
    }
    cv.notify_all();
    for (auto& t : ts) t.join();
    std::printf("static_join %lu\n", sums[0] + sums[1] + sums[2] + sums[3]);
    std::fflush(stdout);
  }
};
LateThreads late_threads;

}  // namespace

int cxx_scenario(const char* name) {
  if (std::strcmp(name, "thread_local_dtor") == 0) return ThreadLocalDtor();
  if (std::strcmp(name, "exceptions") == 0) return Exceptions();
  if (std::strcmp(name, "static_join") == 0) {
    late_threads.Start();
    return 0;
  }
  return -1;
}
