// html_cfg.cc — CFG pictures for the HTML report (see html_cfg.h).
#include "reconstruct/html_cfg.h"

#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reconstruct/commands.h"

extern char** environ;

namespace ballarus {

namespace {

using report::FunctionReport;
using report::PathReport;

// Edges above which a CFG is laid out the fast way.
constexpr size_t kLargeGraphEdges = 150;

// Heat of count c among counts up to max: a colour from pale yellow to red
// on a log scale; grey for 0.
std::string Heat(long double c, long double max) {
  if (!(c > 0)) return "#eeeeee";
  const double t = max > 1 ? std::log1p(static_cast<double>(c)) /
                                 std::log1p(static_cast<double>(max))
                           : 1.0;
  const int g = static_cast<int>(235 - 180 * t);
  const int b = static_cast<int>(180 - 170 * t);
  return fmt::format("#ff{:02x}{:02x}", std::max(g, 0), std::max(b, 0));
}

long double CountOf(const Count& c) {
  return c ? static_cast<long double>(*c) : 0;
}

std::string CountText(long double c) {
  return fmt::format("{:.0f}", static_cast<double>(c));
}

// The blocks of the hottest path as (src, dst) pairs of CFG edges: the
// function's most executed Ball–Larus path, else the heaviest-edge walk
// from ENTRY.  *from_paths says which.
std::set<std::pair<uint32_t, uint32_t>> HottestPath(const FunctionReport& f,
                                                    bool* from_paths) {
  std::set<std::pair<uint32_t, uint32_t>> on;
  *from_paths = f.paths && !f.paths->executed.empty();
  if (*from_paths) {
    const PathReport& p = f.paths->executed[0];
    for (size_t i = 1; i < p.blocks.size(); ++i)
      on.insert({p.blocks[i - 1], p.blocks[i]});
    if ((p.end == PathReport::kBackEdge || p.end == PathReport::kLoopEntry) &&
        !p.blocks.empty())
      on.insert({p.blocks.back(), p.target});
    return on;
  }
  std::set<uint32_t> seen;
  uint32_t b = kEntryBlock;
  while (b != kExitBlock && seen.insert(b).second) {
    const report::EdgeReport* best = nullptr;
    for (const report::EdgeReport& e : f.edges)
      if (e.src == b && e.count && *e.count > 0 &&
          (!best || *e.count > *best->count))
        best = &e;
    if (!best) break;
    on.insert({best->src, best->dst});
    b = best->dst;
  }
  return on;
}

// A dot string of `lines`, one label line each (Printable, quoted).
std::string DotQuote(const std::vector<std::string>& lines) {
  std::string out = "\"";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\\n";
    for (char c : Printable(lines[i])) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}
std::string DotQuote(const std::string& s) {
  return DotQuote(std::vector<std::string>{s});
}

}  // namespace

std::string CfgDot(const FunctionReport& f, size_t index) {
  bool from_paths = false;
  const std::set<std::pair<uint32_t, uint32_t>> hot = HottestPath(f, &from_paths);
  long double max_block = 0, max_edge = 0;
  for (const report::BlockReport& b : f.blocks)
    max_block = std::max(max_block, CountOf(b.count));
  for (const report::EdgeReport& e : f.edges)
    max_edge = std::max(max_edge, CountOf(e.count));
  std::string d = fmt::format(
      "digraph fn{} {{\n graph [fontname=\"monospace\",fontsize=10,label={},"
      "labelloc=t];\n node [shape=box,style=\"rounded,filled\","
      "fontname=\"monospace\",fontsize=10];\n edge [fontname=\"monospace\","
      "fontsize=9];\n",
      index,
      DotQuote(f.display_name() + (from_paths ? "  (red: hottest path)"
                                              : "  (red: heaviest-edge walk; "
                                                "no path profile)")));
  // dot's layout time grows steeply with the graph: a large one is laid
  // out with fewer ranking and crossing-reduction passes and straight
  // edges (docs/performance.md, "HTML report").
  if (f.edges.size() > kLargeGraphEdges)
    d += " graph [nslimit=1,mclimit=0.3,searchsize=5,splines=line];\n";
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    const report::BlockReport& br = f.blocks[b];
    std::string lines;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const report::SourceLine& l : br.lines)
      if (l.file == f.file) {
        lo = std::min(lo, l.line);
        hi = std::max(hi, l.line);
      }
    if (lo != UINT32_MAX)
      lines = lo == hi ? fmt::format(" L{}", lo) : fmt::format(" L{}-{}", lo, hi);
    const std::string name = b == kEntryBlock  ? "ENTRY"
                             : b == kExitBlock ? "EXIT"
                                               : fmt::format("{}{}", b, lines);
    d += fmt::format(" b{} [label={},fillcolor=\"{}\",tooltip={}];\n", b,
                     DotQuote({name, br.count ? CountText(CountOf(br.count))
                                              : std::string("?")}),
                     Heat(CountOf(br.count), max_block),
                     DotQuote(fmt::format("block {}", b)));
  }
  for (const report::EdgeReport& e : f.edges) {
    const bool on = hot.count({e.src, e.dst}) != 0;
    const long double c = CountOf(e.count);
    const double width =
        max_edge > 0 ? 1.0 + 4.0 * static_cast<double>(c / max_edge) : 1.0;
    d += fmt::format(
        " b{} -> b{} [label={},penwidth={:.2f},color=\"{}\"{}];\n", e.src,
        e.dst, DotQuote(e.count ? CountText(c) : std::string("?")),
        on ? std::max(width, 3.0) : width, on ? "#d00000" : "#555555",
        (e.flags & kEdgeFake) ? ",style=dashed" : "");
  }
  return d + "}\n";
}


namespace {

using Clock = std::chrono::steady_clock;

// The whole content of the file open as `fd`, from its start.
std::string ReadFromStart(int fd) {
  std::string all;
  char buf[65536];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) all.append(buf, static_cast<size_t>(n));
  return all;
}

// One dot process drawing one graph.  Its input and output are anonymous
// memory files (memfd_create): no name in any directory that another user
// could plant a link at or swap.
struct Drawing {
  size_t graph = 0;
  pid_t pid = -1;
  int in = -1, out = -1;

  // Starts `dot -Tsvg` on `text`; returns 0 or the errno of the failure.
  int Start(const std::string& dot, const std::string& text) {
    in = memfd_create("ballarus-cfg.gv", MFD_CLOEXEC);
    out = memfd_create("ballarus-cfg.svg", MFD_CLOEXEC);
    if (in < 0 || out < 0) return errno;
    if (write(in, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        lseek(in, 0, SEEK_SET) != 0)
      return errno ? errno : EIO;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv = {const_cast<char*>(dot.c_str()),
                               const_cast<char*>("-Tsvg"), nullptr};
    const int err = posix_spawnp(&pid, dot.c_str(), &actions, nullptr,
                                 argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) pid = -1;
    return err;
  }

  // True once the process has ended; *picture then holds its result.
  bool Finished(CfgPicture* picture) {
    int status = 0;
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == 0 || (got < 0 && errno == EINTR)) return false;
    pid = -1;
    picture->status = CfgPicture::kFailed;
    if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      const std::string all = ReadFromStart(out);
      const size_t at = all.find("<svg");
      const size_t end = at == std::string::npos ? at : all.find("</svg>", at);
      if (end != std::string::npos) {
        picture->svg = all.substr(at, end + 6 - at);
        picture->status = CfgPicture::kDrawn;
      }
    }
    return true;
  }

  void Kill() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
  }

  void Close() {
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    in = out = -1;
  }
};

void SleepBriefly() {
  const struct timespec ts = {0, 5 * 1000 * 1000};  // 5 ms
  nanosleep(&ts, nullptr);
}

}  // namespace

size_t UsableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<size_t>(n) : 1;
}

std::vector<CfgPicture> DrawCfgPictures(const std::vector<std::string>& graphs,
                                        const CfgDrawOptions& o) {
  std::vector<CfgPicture> pictures(graphs.size());
  if (graphs.empty()) return pictures;
  const size_t jobs = std::min(o.jobs ? o.jobs : UsableCpus(), graphs.size());
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o.time_limit));
  Progress progress(std::string(kProg) + ": html: drawing CFG pictures",
                    graphs.size(), o.quiet);
  // Smallest graph first: the most pictures within the limit, and a huge
  // graph delays none of the others.
  std::vector<size_t> order(graphs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return graphs[a].size() < graphs[b].size();
  });
  std::vector<Drawing> running;
  size_t next = 0, finished = 0;
  int spawn_error = 0;
  while (finished < graphs.size()) {
    const bool late = o.time_limit > 0 && Clock::now() >= deadline;
    while (!late && spawn_error == 0 && running.size() < jobs &&
           next < graphs.size()) {
      Drawing d;
      d.graph = order[next++];
      spawn_error = d.Start(o.dot, graphs[d.graph]);
      if (spawn_error != 0) {
        d.Close();
        pictures[d.graph].status = CfgPicture::kNotRun;
        ++finished;
      } else {
        running.push_back(d);
      }
    }
    for (size_t k = 0; k < running.size();) {
      if (late) {
        running[k].Kill();
        pictures[running[k].graph].status = CfgPicture::kTimedOut;
      } else if (!running[k].Finished(&pictures[running[k].graph])) {
        ++k;
        continue;
      }
      running[k].Close();
      running.erase(running.begin() + static_cast<ptrdiff_t>(k));
      ++finished;
    }
    if (late || spawn_error != 0) {
      // Nothing more starts: the rest is not drawn.
      for (; next < graphs.size(); ++next, ++finished)
        pictures[order[next]].status =
            late ? CfgPicture::kTimedOut : CfgPicture::kNotRun;
      if (spawn_error != 0 && running.empty()) break;
    }
    progress.Step(finished);
    if (!running.empty()) SleepBriefly();
  }
  progress.Done();
  if (spawn_error != 0)
    std::fprintf(stderr, "%s: %s: cannot run it (%s); %s\n", kProg,
                 Printable(o.dot).c_str(), std::strerror(spawn_error),
                 std::any_of(pictures.begin(), pictures.end(),
                             [](const CfgPicture& p) {
                               return p.status == CfgPicture::kDrawn;
                             })
                     ? "some CFG pictures are missing"
                     : "the report has no CFG pictures");
  return pictures;
}

}  // namespace ballarus
