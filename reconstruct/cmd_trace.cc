// cmd_trace.cc — `ballarus-reconstruct trace` (cmd_trace.h).
//
// Per thread of the trace file: its records' words in order (the reader
// checks that no CHUNK is missing), decoded into events (trace_ids.h),
// regenerated (trace_regen.h), then shown.  Lines: each step's block's
// source lines in order, a line repeated by consecutive blocks shown once
// (a `for` header spans several blocks).  A cut stream (no kEnd: a crash,
// a process still running) is shown as far as it determines the blocks
// and marked "truncated"; a stream that does not fit the CFGs is an error
// naming the thread and the event.
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/trace_ids.h"
#include "core/trace_regen.h"
#include "nlohmann/json.hpp"
#include "reconstruct/cmd_trace.h"
#include "reconstruct/commands.h"
#include "reconstruct/trace_program.h"
#include "runtime/trace_read.h"

namespace ballarus {
namespace {

using Json = nlohmann::ordered_json;

struct ThreadWords {
  uint32_t tid = 0;
  std::vector<uint32_t> words;
  uint64_t ring_total = 0;  // RING: witnesses the thread wrote in all
  bool ring = false;
};

using Threads = std::map<uint32_t, ThreadWords>;

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  ThreadWords& t = (*static_cast<Threads*>(ctx))[h->thread];
  t.tid = h->tid;
  t.words.insert(t.words.end(), w, w + h->count);
  if (h->kind == BALLARUS_TRACE_RING) t.ring = true, t.ring_total = h->total;
  return 0;
}

Threads ReadTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  ballarus_trace_file_header header;
  Threads threads;
  char err[256] = "";
  if (ballarus_trace_read(data.data(), data.size(), &header, Collect,
                          &threads, err, sizeof err) != 0)
    Fail(path, err);
  return threads;
}

// One shown item: a block, or a source line.
struct Item {
  uint32_t function = 0;
  uint32_t block = 0;
  uint32_t file = 0;  // lines: index into the function's TU's files
  uint32_t line = 0;
};

std::vector<Item> Items(const TraceProgram& p, const RegenResult& r,
                        const TraceOptions& o) {
  std::optional<std::regex> re;
  if (!o.function_regex.empty()) {
    try {
      re.emplace(o.function_regex);
    } catch (const std::regex_error&) {
      Fail("", "bad --function regular expression: " + o.function_regex);
    }
  }
  std::vector<Item> items;
  for (const TraceStep& s : r.steps) {
    const Function& fn = *p.functions[s.function].fn;
    if (re && !std::regex_search(fn.name, *re) &&
        !std::regex_search(fn.demangled, *re))
      continue;
    if (o.blocks) {
      items.push_back({s.function, s.block, 0, 0});
      continue;
    }
    for (const Location& l : fn.blocks[s.block].lines) {
      Item it{s.function, s.block, l.file, l.line};
      if (!items.empty() && items.back().function == it.function &&
          items.back().file == it.file && items.back().line == it.line)
        continue;
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

RegenResult Regenerate(const TraceProgram& p, const std::string& path,
                       uint32_t serial, const ThreadWords& t) {
  std::string where = fmt::format("thread {}: ", serial);
  if (t.ring && t.ring_total > t.words.size())
    Fail(path, where + fmt::format("ring keeps the last {} of {} words; "
                                   "regenerating a ring that starts "
                                   "mid-stream is not implemented",
                                   t.words.size(), t.ring_total));
  DecodedTrace d = DecodeTraceWords(
      t.words, [&p](uint32_t stamp, uint32_t index) {
        return p.Resolve(stamp, index);
      });
  if (!d.error.empty()) Fail(path, where + d.error);
  std::string problem = TraceStreamProblem(p, d.events);
  if (!problem.empty()) Fail(path, where + problem);
  RegenResult r = RegenerateTrace(p.regen, d.events);
  if (r.status == RegenStatus::kError) Fail(path, where + r.error);
  if (d.cut && r.status == RegenStatus::kComplete)
    r.status = RegenStatus::kTruncated;
  return r;
}

const char* StatusName(RegenStatus s) {
  return s == RegenStatus::kComplete ? "complete" : "truncated";
}

void PrintText(const TraceProgram& p, uint32_t serial, const ThreadWords& t,
               const RegenResult& r, const std::vector<Item>& items,
               const TraceOptions& o) {
  fmt::print("thread {} (tid {}): {}, {} blocks\n", serial, t.tid,
             StatusName(r.status), r.steps.size());
  for (const Item& it : items) {
    std::string fn = Printable(FunctionName(p, it.function));
    if (o.blocks)
      fmt::print("  {} block {}\n", fn, it.block);
    else
      fmt::print("  {}:{}  {}\n", Printable(FileName(p, it)), it.line, fn);
  }
}

Json ThreadJson(const TraceProgram& p, uint32_t serial, const ThreadWords& t,
                const RegenResult& r, const std::vector<Item>& items,
                const TraceOptions& o) {
  Json steps = Json::array();
  for (const Item& it : items) {
    Json j = {{"function", FunctionName(p, it.function)}};
    if (o.blocks)
      j["block"] = it.block;
    else
      j["file"] = FileName(p, it), j["line"] = it.line;
    steps.push_back(std::move(j));
  }
  return Json{{"thread", serial},        {"tid", t.tid},
              {"status", StatusName(r.status)},
              {"blocks", r.steps.size()}, {"steps", std::move(steps)}};
}

}  // namespace

int RunTrace(const TraceOptions& o) {
  if (o.profiles.empty())
    Fail("", "trace needs --profile (the CFGs and trace plans)");
  TraceProgram program;
  std::string file, error;
  if (!LoadTraceProgram(o.profiles, &program, &file, &error))
    Fail(file, error);
  Threads threads = ReadTraceFile(o.trace_file);
  if (o.thread != 0 && threads.count(o.thread) == 0)
    Fail(o.trace_file, fmt::format("no thread {}", o.thread));
  Json out = Json::array();
  for (const auto& [serial, t] : threads) {
    if (o.thread != 0 && serial != o.thread) continue;
    RegenResult r = Regenerate(program, o.trace_file, serial, t);
    std::vector<Item> items = Items(program, r, o);
    if (o.json)
      out.push_back(ThreadJson(program, serial, t, r, items, o));
    else
      PrintText(program, serial, t, r, items, o);
  }
  if (o.json) fmt::print("{}\n", Json{{"threads", out}}.dump(1));
  return 0;
}

}  // namespace ballarus
