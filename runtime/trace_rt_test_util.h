// trace_rt_test_util.h — what the end-to-end tests of the trace runtime
// share (trace_rt_test.cc, trace_rt_stack_test.cc, trace_rt_read_test.cc):
// running trace_prog in fresh directories, trace files read back with
// trace_read.c, and the stack a simulated program's stream tells by itself
// against which checkpoints are checked.
#ifndef BALLARUS_RUNTIME_TRACE_RT_TEST_UTIL_H_
#define BALLARUS_RUNTIME_TRACE_RT_TEST_UTIL_H_

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/testdata/trace_seq.h"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"

namespace trace_rt_test {

inline std::string Runfile(const std::string& name) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "ballarus") +
         "/runtime/" + name;
}

inline std::string FreshDir(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/trace_" + name;
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs trace_prog PATH SPEC CMD N [T] in DIR (its files limited to fsize
// bytes if fsize >= 0); returns the wait status, its standard output in
// *out, its standard error in DIR/stderr.
inline int RunProgAt(const std::string& dir, const std::string& path,
                     const std::string& spec,
                     const std::vector<std::string>& args,
                     std::string* out = nullptr, long fsize = -1) {
  std::string prog = Runfile("trace_prog");
  std::vector<std::string> all = {prog, path, spec};
  all.insert(all.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::string o = dir + "/stdout";
    std::string e = dir + "/stderr";
    if (!freopen(o.c_str(), "w", stdout) || !freopen(e.c_str(), "w", stderr))
      _exit(126);
    if (fsize >= 0) {
      struct rlimit r = {static_cast<rlim_t>(fsize),
                         static_cast<rlim_t>(fsize)};
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &r) != 0) _exit(126);
    }
    if (chdir(dir.c_str()) != 0) _exit(126);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  if (out) *out = ReadBytes(dir + "/stdout");
  return st;
}

// RunProgAt with PATH = DIR/trace.
inline int RunProg(const std::string& dir, const std::string& spec,
                   const std::vector<std::string>& args,
                   std::string* out = nullptr, long fsize = -1) {
  return RunProgAt(dir, dir + "/trace", spec, args, out, fsize);
}

// A trace file read back: the file header and, per thread serial, its
// records' headers and words in file order: `witnesses` the stream (CHUNK
// and RING words), `checkpoints` each CHECKPOINT's words; the trailing
// POSITION and FAULT records apart (`records` leaves them out): their
// headers and words.
struct Trace {
  ballarus_trace_file_header header{};
  std::map<uint32_t, std::vector<ballarus_trace_record_header>> records;
  std::map<uint32_t, std::vector<uint32_t>> witnesses;
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> checkpoints;
  std::vector<std::string> metadata;  // the METADATA records' blobs
  std::map<uint32_t, std::pair<ballarus_trace_record_header,
                               std::vector<uint32_t>>> positions, faults;
  std::string error;
};

inline int Collect(void* ctx, const ballarus_trace_record_header* h,
                   const uint32_t* w) {
  Trace* t = static_cast<Trace*>(ctx);
  if (h->kind == BALLARUS_TRACE_POSITION || h->kind == BALLARUS_TRACE_FAULT) {
    auto& to = h->kind == BALLARUS_TRACE_POSITION ? t->positions : t->faults;
    EXPECT_EQ(to.count(h->thread), 0u) << "two of kind " << h->kind;
    to[h->thread] = {*h, std::vector<uint32_t>(w, w + h->count)};
    return 0;
  }
  t->records[h->thread].push_back(*h);
  if (h->kind == BALLARUS_TRACE_METADATA)
    t->metadata.emplace_back(reinterpret_cast<const char*>(w), h->bytes);
  else if (h->kind == BALLARUS_TRACE_CHECKPOINT)
    t->checkpoints[h->thread].emplace_back(w, w + h->count);
  else
    t->witnesses[h->thread].insert(t->witnesses[h->thread].end(), w,
                                   w + h->count);
  return 0;
}

inline Trace ReadTrace(const std::string& path) {
  Trace t;
  std::string data = ReadBytes(path);
  char err[256] = "";
  if (ballarus_trace_read(data.data(), data.size(), &t.header, Collect, &t,
                          err, sizeof err) != 0)
    t.error = err;
  return t;
}

// trace_seq(k, i) for i in [from, to).
inline std::vector<uint32_t> Seq(uint32_t k, uint32_t from, uint32_t to) {
  std::vector<uint32_t> v;
  for (uint32_t i = from; i < to; i++) v.push_back(trace_seq(k, i));
  return v;
}

inline std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (struct dirent* e = d ? readdir(d) : nullptr)
    if (e->d_name[0] != '.' && strcmp(e->d_name, "stdout") != 0 &&
        strcmp(e->d_name, "stderr") != 0)
      names.push_back(e->d_name);
  if (d) closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The stack of traced activations that a stream of trace_prog's simulated
// program tells by itself (its blocks and returns are words: see
// trace_prog.c): kEnter pushes, the word 1 pops, kLand truncates, a block
// word b sets the innermost activation's site.  Checks every event's
// depth and site fields against it.
class StackModel {
 public:
  struct Frame {
    uint32_t fn, stamp, site;
  };
  std::vector<Frame> stack;
  uint32_t root_site = 0;
  std::string error;

  // Consumes the witness or event at s[i]; returns the next position.
  size_t Step(const std::vector<uint32_t>& s, size_t i) {
    const uint32_t w = s[i];
    if (w < BALLARUS_TRACE_EVENT_TAG) {
      if (w != 1)
        Site() = w;
      else if (stack.empty())
        Fail(i, "return at depth 0");
      else
        stack.pop_back();
      return i + 1;
    }
    uint32_t n = w == BALLARUS_TRACE_EVENT_END    ? BALLARUS_TRACE_END_WORDS
                 : w == BALLARUS_TRACE_EVENT_LAND ? BALLARUS_TRACE_LAND_WORDS
                                                  : BALLARUS_TRACE_ENTER_WORDS;
    if (i + n > s.size()) return Fail(i, "cut event"), s.size();
    if (w == BALLARUS_TRACE_EVENT_END) {
      if (s[i + 1] != stack.size() || s[i + 2] != Site()) Fail(i, "kEnd");
    } else if (w == BALLARUS_TRACE_EVENT_LAND) {
      if (s[i + 3] != Site() || s[i + 4] != stack.size() ||
          s[i + 2] >= stack.size())
        Fail(i, "kLand");
      else
        stack.resize(s[i + 2] + 1);
    } else {
      if (s[i + 2] != stack.size() || s[i + 3] != Site()) Fail(i, "kEnter");
      stack.push_back({w & ~BALLARUS_TRACE_EVENT_TAG, s[i + 1], Site()});
    }
    return i + n;
  }

  // The checkpoint the runtime should write in this state.
  std::vector<uint32_t> Checkpoint() const {
    if (stack.size() > 16384) return {BALLARUS_TRACE_CHECKPOINT_UNKNOWN};
    std::vector<uint32_t> cp = {static_cast<uint32_t>(stack.size())};
    for (const Frame& f : stack) cp.insert(cp.end(), {f.fn, f.stamp, f.site});
    return cp;
  }

 private:
  uint32_t& Site() { return stack.empty() ? root_site : stack.back().site; }
  void Fail(size_t i, const char* what) {
    if (error.empty())
      error = std::string(what) + " at word " + std::to_string(i);
  }
};

struct Consistency {
  std::string error;
  int known = 0, unknown = 0;  // checkpoints compared
  bool position = false;       // the POSITION compared
};

// Checks the records of thread `serial` of t against the whole stream s
// of the same run (a full trace, or the same program traced in full):
// every CHUNK or RING is s's words at its place, starts at an event's
// first word (events never span two records), and every CHECKPOINT equals
// the stack that s tells at its place, and the POSITION, if any, the stack
// at s's end.
inline Consistency CheckStream(const Trace& t, const std::vector<uint32_t>& s,
                               uint32_t serial = 1) {
  Consistency c;
  std::map<uint64_t, std::vector<uint32_t>> cps;
  std::set<uint64_t> starts;
  size_t k = 0;
  for (const ballarus_trace_record_header& h : t.records.at(serial)) {
    if (h.kind == BALLARUS_TRACE_CHECKPOINT) {
      cps[h.total] = t.checkpoints.at(serial).at(k++);
      continue;
    }
    uint64_t from = h.total - h.count;
    if (h.count == 0) continue;
    starts.insert(from);
    if (h.total > s.size()) return c.error = "record past the stream", c;
  }
  const std::vector<uint32_t>& w = t.witnesses.at(serial);
  if (w.size() > s.size()) return c.error = "more words than the stream", c;
  uint64_t first = s.size() - w.size();
  if (!std::equal(w.begin(), w.end(), s.begin() + first))
    return c.error = "words differ from the stream's end", c;
  StackModel m;
  for (size_t i = 0; i < s.size() && m.error.empty();) {
    starts.erase(i);
    auto it = cps.find(i);
    if (it != cps.end()) {
      if (it->second != m.Checkpoint())
        return c.error = "checkpoint at word " + std::to_string(i), c;
      (it->second.size() == 1 && it->second[0] != 0 ? c.unknown : c.known)++;
      cps.erase(it);
    }
    i = m.Step(s, i);
  }
  auto pos = t.positions.find(serial);
  if (!m.error.empty())
    c.error = m.error;
  else if (pos != t.positions.end() &&
           (pos->second.first.total != s.size() ||
            pos->second.second != m.Checkpoint()))
    c.error = "the position is not the stack at the stream's end";
  else if (!starts.empty())
    c.error = "record starts inside an event at word " +
              std::to_string(*starts.begin());
  else if (!cps.empty())
    c.error = "checkpoint inside an event at word " +
              std::to_string(cps.begin()->first);
  c.position = pos != t.positions.end();
  return c;
}

// The simulated program traced in full: its whole stream.
inline std::vector<uint32_t> FullStream(const std::string& name,
                                        const std::vector<std::string>& args,
                                        int* status = nullptr) {
  std::string dir = FreshDir(name);
  int st = RunProg(dir, "full", args);
  if (status)
    *status = st;
  else
    EXPECT_EQ(st, 0) << name;
  Trace t = ReadTrace(dir + "/trace");
  EXPECT_EQ(t.error, "") << name;
  Consistency c = CheckStream(t, t.witnesses[1]);
  EXPECT_EQ(c.error, "") << name;
  return t.witnesses[1];
}

}  // namespace trace_rt_test

#endif  // BALLARUS_RUNTIME_TRACE_RT_TEST_UTIL_H_
