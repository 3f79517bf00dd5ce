// cmd_trace.cc — `ballarus-reconstruct trace` (cmd_trace.h).
//
// Per thread of each trace file: its records (the reader checks them),
// turned into events and a starting state (trace_thread.h), regenerated
// (trace_regen.h), then shown.  Steps are numbered from 0 (the first
// block regenerated); --range, --function and --last select among them,
// in that order.  Lines: each step's block's source lines in order, a line
// repeated by consecutive blocks shown once (a `for` header spans several
// blocks).  A cut stream (no kEnd: a crash, a process still running) is
// shown as far as it determines the blocks and marked "truncated"; a
// stream that does not fit the CFGs is an error naming the thread and the
// event.  Steps after the last one the events prove (trace_regen.h
// RegenResult::confirmed) are marked "?": the thread may have stopped
// anywhere among them.  Where the file says where a thread stood
// (trace_stop.h) the walk ends there; the crashing thread's last line is
// marked with its signal, and the steps up to it are proven when the
// faulting instruction's line is known.
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/trace_regen.h"
#include "nlohmann/json.hpp"
#include "reconstruct/cmd_trace.h"
#include "reconstruct/commands.h"
#include "reconstruct/trace_program.h"
#include "reconstruct/trace_stop.h"
#include "reconstruct/trace_thread.h"
#include "runtime/trace_format.h"
#include "runtime/trace_read.h"

namespace ballarus {
namespace {

using Json = nlohmann::ordered_json;

struct TraceFile {
  std::string path;
  ballarus_trace_file_header header{};
  std::map<uint32_t, ThreadRecords> threads;  // by thread serial
  std::vector<TraceMetadata> metadata;        // its METADATA records
  const TraceFile* parent = nullptr;          // given too, by parent_pid
};

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  TraceFile& f = *static_cast<TraceFile*>(ctx);
  if (h->kind == kTraceMetadataKind) {  // the payload's bytes as they are
    const auto* bytes = reinterpret_cast<const uint8_t*>(w);
    f.metadata.push_back({f.path, std::vector<uint8_t>(bytes, bytes + h->bytes)});
    return 0;
  }
  ThreadRecords& t = f.threads[h->thread];
  t.tid = h->tid;
  t.records.push_back({h->kind, h->seq, h->total,
                       std::vector<uint32_t>(w, w + h->count)});
  return 0;
}

TraceFile ReadTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  TraceFile f;
  f.path = path;
  char err[256] = "";
  if (ballarus_trace_read(data.data(), data.size(), &f.header, Collect, &f,
                          err, sizeof err) != 0)
    Fail(path, err);
  for (auto& [serial, t] : f.threads)
    t.fork_child = f.header.mode == BALLARUS_TRACE_MODE_FULL &&
                   f.header.parent_pid != 0;
  return f;
}

// Steps FROM..TO of --range (inclusive; either side may be left out).
struct StepRange {
  uint64_t from = 0, to = UINT64_MAX;
};

StepRange ParseRange(const std::string& s) {
  StepRange r;
  if (s.empty()) return r;
  const size_t colon = s.find(':');
  auto number = [&s](const std::string& part, uint64_t* v) {
    if (part.empty()) return true;
    if (part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 18)
      return false;
    *v = std::stoull(part);
    return true;
  };
  if (colon == std::string::npos || !number(s.substr(0, colon), &r.from) ||
      !number(s.substr(colon + 1), &r.to) || r.from > r.to)
    Fail("", "bad --range " + s + " (FROM:TO, step indices, FROM <= TO)");
  return r;
}

// One shown item: a block, or a source line, of step `step`.
struct Item {
  uint64_t step = 0;
  uint32_t function = 0;
  uint32_t block = 0;
  uint32_t file = 0;  // lines: index into the function's TU's files
  uint32_t line = 0;
  uint64_t through = 0;  // the last step whose line this item shows
};

std::optional<std::regex> FunctionRegex(const TraceOptions& o) {
  std::optional<std::regex> re;
  if (o.function_regex.empty()) return re;
  try {
    re.emplace(o.function_regex);
  } catch (const std::regex_error&) {
    Fail("", "bad --function regular expression: " + o.function_regex);
  }
  return re;
}

std::vector<Item> Items(const TraceProgram& p, const RegenResult& r,
                        const TraceOptions& o) {
  const std::optional<std::regex> re = FunctionRegex(o);
  const StepRange range = ParseRange(o.range);
  std::vector<Item> items;
  for (uint64_t i = range.from; i < r.steps.size() && i <= range.to; ++i) {
    const TraceStep& s = r.steps[i];
    const Function& fn = *p.functions[s.function].fn;
    if (re && !std::regex_search(fn.name, *re) &&
        !std::regex_search(fn.demangled, *re))
      continue;
    if (o.blocks) {
      items.push_back({i, s.function, s.block, 0, 0, i});
      continue;
    }
    for (const Location& l : fn.blocks[s.block].lines) {
      Item it{i, s.function, s.block, l.file, l.line, i};
      if (!items.empty() && items.back().function == it.function &&
          items.back().file == it.file && items.back().line == it.line) {
        items.back().through = i;
        continue;
      }
      items.push_back(it);
    }
  }
  if (o.last != 0 && items.size() > o.last)
    items.erase(items.begin(), items.end() - static_cast<ptrdiff_t>(o.last));
  return items;
}

std::string FunctionName(const TraceProgram& p, uint32_t id) {
  const Function& fn = *p.functions[id].fn;
  return fn.demangled.empty() ? fn.name : fn.demangled;
}

std::string FileName(const TraceProgram& p, const Item& it) {
  const TranslationUnit& tu = *p.functions[it.function].tu;
  return it.file < tu.files.size() ? tu.files[it.file] : "?";
}

// A thread's regeneration and what the file kept of its stream.
struct ThreadResult {
  uint32_t serial = 0;
  uint32_t tid = 0;
  ThreadInput in;
  ThreadStop stop;
  RegenResult r;
};

ThreadResult Regenerate(const TraceProgram& p, const std::string& path,
                        uint32_t serial, const ThreadRecords& t) {
  const std::string where = fmt::format("thread {}: ", serial);
  ThreadResult out{serial, t.tid};
  const std::string problem = PrepareThread(p, t, &out.in);
  if (!problem.empty()) Fail(path, where + problem);
  if (!out.in.known) {
    out.r.status = RegenStatus::kTruncated;
    return out;
  }
  out.stop = StopFor(p, out.in);
  out.in.from.stop = out.stop.stop;
  out.r = RegenerateThread(p, out.in);
  if (out.r.status == RegenStatus::kError) Fail(path, where + out.r.error);
  if (out.r.stopped && out.stop.proven) out.r.confirmed = out.r.steps.size();
  if (!out.stop.note.empty())
    fmt::print(stderr, "{}: {}{}\n", Printable(path), where, out.stop.note);
  else if (out.in.has_fault && out.stop.proven && !out.r.stopped)
    fmt::print(stderr, "{}: {}{} at {}: the regenerated steps end before the "
               "crash\n", Printable(path), where,
               SignalName(out.in.fault.signo), FaultWhere(out.in.fault));
  return out;
}

const char* StatusName(const ThreadResult& t) {
  if (!t.in.known) return "unknown state";
  return t.r.status == RegenStatus::kComplete ? "complete" : "truncated";
}

uint64_t EarlierWords(const ThreadInput& in) {
  return in.words_not_kept + in.words_skipped;
}

// "killed by SIGSEGV (SEGV_MAPERR, address 0x0) at FILE:LINE" (or at
// MODULE+OFFSET when the line is not known).
std::string FaultLine(const ThreadResult& t) {
  std::string where = FaultWhere(t.in.fault);
  if (t.stop.has_line)
    where = fmt::format("{}:{}", t.stop.line.file, t.stop.line.line);
  if (!t.stop.line.function.empty()) where += " in " + t.stop.line.function;
  return fmt::format("killed by {} at {}", FaultText(t.in.fault),
                     Printable(where));
}

// Whether item `it` is the last one of the step the thread crashed in
// (known: the stop is proven).
bool CrashItem(const ThreadResult& t, const std::vector<Item>& items,
               const Item& it) {
  return t.in.has_fault && t.r.stopped && t.stop.proven &&
         &it == &items.back() &&
         it.through + 1 == t.r.steps.size();
}

// "thread K (tid T): complete, B blocks" and where it starts.
std::string ThreadLine(const ThreadResult& t) {
  std::string s = fmt::format("thread {} (tid {}): {}, {} blocks", t.serial,
                              t.tid, StatusName(t), t.r.steps.size());
  if (!t.in.known)
    return s + fmt::format("; {} words kept, none after a checkpoint with a "
                           "known state", t.in.words_skipped);
  if (t.in.from_checkpoint) s += " from a checkpoint";
  if (EarlierWords(t.in) != 0)
    s += fmt::format("; {} earlier words not kept", EarlierWords(t.in));
  if (t.r.confirmed < t.r.steps.size())
    s += fmt::format("; the last {} blocks follow from the CFG alone (marked "
                     "?: the thread may have stopped before them{})",
                     t.r.steps.size() - t.r.confirmed,
                     t.r.stopped ? ", or been inside the last one's call"
                                 : "");
  if (t.in.has_fault) s += "; " + FaultLine(t);
  return s;
}

void PrintText(const TraceProgram& p, const ThreadResult& t,
               const std::vector<Item>& items, const TraceOptions& o) {
  fmt::print("{}\n", ThreadLine(t));
  for (const Item& it : items) {
    std::string fn = Printable(FunctionName(p, it.function));
    const char* mark = it.step < t.r.confirmed ? " " : "?";
    const std::string crash =
        CrashItem(t, items, it) ? "  <- " + SignalName(t.in.fault.signo) : "";
    if (o.blocks)
      fmt::print("{} [{}] {} block {}{}\n", mark, it.step, fn, it.block,
                 crash);
    else if (o.numbered)
      fmt::print("{} [{}] {}:{}  {}{}\n", mark, it.step,
                 Printable(FileName(p, it)), it.line, fn, crash);
    else
      fmt::print("{} {}:{}  {}{}\n", mark, Printable(FileName(p, it)),
                 it.line, fn, crash);
  }
}

// The FAULT record and the line it maps to.
Json FaultJson(const ThreadResult& t) {
  const TraceFault& f = t.in.fault;
  Json j = {{"signal", SignalName(f.signo)}, {"number", f.signo},
            {"code", f.code},
            {"address", fmt::format("{:#x}", f.address)},
            {"pc", fmt::format("{:#x}", f.pc)}};
  if (!f.module.empty())
    j["module"] = f.module, j["offset"] = fmt::format("{:#x}", f.offset);
  if (!t.stop.line.function.empty()) j["function"] = t.stop.line.function;
  if (t.stop.has_line)
    j["file"] = t.stop.line.file, j["line"] = t.stop.line.line;
  j["in_traced_function"] = t.stop.at_fault_line;
  return j;
}

Json ThreadJson(const TraceProgram& p, const TraceFile& f,
                const ThreadResult& t, const std::vector<Item>& items,
                const TraceOptions& o) {
  Json steps = Json::array();
  for (const Item& it : items) {
    Json j = {{"step", it.step},
              {"confirmed", it.step < t.r.confirmed},
              {"function", FunctionName(p, it.function)}};
    if (o.blocks)
      j["block"] = it.block;
    else
      j["file"] = FileName(p, it), j["line"] = it.line;
    if (CrashItem(t, items, it)) j["signal"] = SignalName(t.in.fault.signo);
    steps.push_back(std::move(j));
  }
  Json j = {{"file", f.path},          {"pid", f.header.pid},
            {"thread", t.serial},      {"tid", t.tid},
            {"status", StatusName(t)}, {"blocks", t.r.steps.size()},
            {"confirmed_blocks", t.r.confirmed},
            {"from_checkpoint", t.in.from_checkpoint},
            {"earlier_words_not_kept", EarlierWords(t.in)}};
  if (f.header.parent_pid != 0) j["parent_pid"] = f.header.parent_pid;
  if (f.parent) j["parent_file"] = f.parent->path;
  if (t.r.stopped) j["stopped_where_written"] = true;
  if (t.in.has_fault) j["fault"] = FaultJson(t);
  j["steps"] = std::move(steps);
  return j;
}

// "process P: FILE, forked by process Q (PARENTFILE)": shown for a fork
// child's file and when several files are given.
void PrintProcess(const TraceFile& f, size_t files) {
  if (files == 1 && f.header.parent_pid == 0) return;
  std::string s = fmt::format("process {}: {}", f.header.pid,
                              Printable(f.path));
  if (f.header.parent_pid != 0)
    s += fmt::format(", forked by process {}", f.header.parent_pid);
  if (f.parent) s += fmt::format(" ({})", Printable(f.parent->path));
  fmt::print("{}\n", s);
}

// The program from the profiles and the files' METADATA records.
void LoadProgram(const TraceOptions& o, const std::vector<TraceFile>& files,
                 TraceProgram* program) {
  std::vector<TraceMetadata> metadata;
  for (const TraceFile& f : files)
    metadata.insert(metadata.end(), f.metadata.begin(), f.metadata.end());
  if (o.profiles.empty() && metadata.empty())
    Fail(o.trace_files.back(), "no METADATA records (written by an older "
         "runtime): give the program's --profile");
  std::string file, error;
  if (!LoadTraceProgram(o.profiles, program, &file, &error, metadata))
    Fail(file, error);
}

}  // namespace

int RunTrace(const TraceOptions& o) {
  ParseRange(o.range);
  FunctionRegex(o);
  std::vector<TraceFile> files;
  for (const std::string& path : o.trace_files)
    files.push_back(ReadTraceFile(path));
  TraceProgram program;
  LoadProgram(o, files, &program);
  bool has_thread = o.thread == 0;
  for (TraceFile& f : files) {
    for (const TraceFile& g : files)
      if (f.header.parent_pid != 0 && g.header.pid == f.header.parent_pid)
        f.parent = &g;
    has_thread = has_thread || f.threads.count(o.thread) != 0;
  }
  if (!has_thread)
    Fail(o.trace_files.back(), fmt::format("no thread {}", o.thread));
  // All threads regenerate before anything is printed: an error leaves
  // the output empty.
  std::vector<std::vector<ThreadResult>> results(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    for (const auto& [serial, t] : files[i].threads)
      if (o.thread == 0 || serial == o.thread)
        results[i].push_back(Regenerate(program, files[i].path, serial, t));
  Json out = Json::array();
  for (size_t i = 0; i < files.size(); ++i) {
    if (!o.json) PrintProcess(files[i], files.size());
    for (const ThreadResult& r : results[i]) {
      const std::vector<Item> items = Items(program, r.r, o);
      if (o.json)
        out.push_back(ThreadJson(program, files[i], r, items, o));
      else
        PrintText(program, r, items, o);
    }
  }
  if (o.json) fmt::print("{}\n", Json{{"threads", out}}.dump(1));
  return 0;
}

}  // namespace ballarus
