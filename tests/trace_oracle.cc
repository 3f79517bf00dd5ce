// trace_oracle.cc — see trace_oracle.h.
#include "tests/trace_oracle.h"

#include <memory>
#include <sstream>

#include "core/metadata.h"
#include "core/profile_reader.h"
#include "nlohmann/json.hpp"
#include "runtime/trace_events.h"
#include "runtime/trace_read.h"
#include "tests/harness.h"

namespace trace_oracle {
namespace {

// runtime/trace_format.h version 2's CHECKPOINT record kind.
constexpr uint32_t kCheckpointKind = 4;

int Collect(void* ctx, const ballarus_trace_record_header* h,
            const uint32_t* w) {
  // The TUs' metadata: the test takes CFGs from the profiles instead;
  // where the threads stopped: the stream alone tells the naive build's.
  if (h->kind == BALLARUS_TRACE_METADATA ||
      h->kind == BALLARUS_TRACE_POSITION || h->kind == BALLARUS_TRACE_FAULT)
    return 0;
  ThreadWords& t = static_cast<TraceFile*>(ctx)->threads[h->thread];
  t.tid = h->tid;
  if (h->kind == kCheckpointKind) {
    if (t.words.empty() && !t.has_start_checkpoint) {
      t.start_checkpoint.assign(w, w + h->count);
      t.has_start_checkpoint = true;
    }
    return 0;
  }
  t.words.insert(t.words.end(), w, w + h->count);
  if (h->kind == BALLARUS_TRACE_RING) t.ring = true, t.total = h->total;
  return 0;
}

std::string Hex(uint32_t w) {
  std::ostringstream s;
  s << "0x" << std::hex << w;
  return s.str();
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Appends a step and its lines, a line equal to the last one shown once.
void Append(const FunctionInfo& f, uint32_t block, NaiveThread* out) {
  out->steps.push_back({f.name, block});
  if (block >= f.block_lines.size()) return;
  for (const std::string& l : f.block_lines[block]) {
    std::string item = l + " " + f.name;
    if (out->lines.empty() || out->lines.back() != item)
      out->lines.push_back(item);
  }
}

using Frame = std::pair<uint32_t, uint32_t>;  // (TU stamp, index)

}  // namespace

bool ReadTraceFile(const std::string& path, TraceFile* out,
                   std::string* error) {
  std::string bytes;
  if (!harness::ReadFile(path, &bytes)) {
    *error = path + ": cannot read";
    return false;
  }
  ballarus_trace_file_header header;
  char err[256] = "";
  if (ballarus_trace_read(bytes.data(), bytes.size(), &header, Collect, out,
                          err, sizeof err) != 0) {
    *error = path + ": " + err;
    return false;
  }
  out->mode = header.mode;
  out->pid = header.pid;
  out->parent_pid = header.parent_pid;
  return true;
}

bool LoadFunctionNames(const std::vector<std::string>& profiles,
                       FunctionNames* out, std::string* error) {
  for (const std::string& path : profiles) {
    ballarus::ProfileRecords records;
    if (!ballarus::ReadProfile(path, &records, error)) {
      *error = path + ": " + *error;
      return false;
    }
    for (const ballarus::LoadedTu& t : records.tus) {
      const uint32_t stamp = static_cast<uint32_t>(ballarus::TuIdentity(t.tu));
      for (uint32_t i = 0; i < t.tu.functions.size(); ++i) {
        const ballarus::Function& fn = t.tu.functions[i];
        FunctionInfo info;
        info.name = fn.demangled.empty() ? fn.name : fn.demangled;
        for (const ballarus::Block& b : fn.blocks) {
          info.block_lines.emplace_back();
          for (const ballarus::Location& l : b.lines)
            info.block_lines.back().push_back(
                (l.file < t.tu.files.size() ? Basename(t.tu.files[l.file])
                                            : "?") +
                ":" + std::to_string(l.line));
        }
        (*out)[{stamp, i}] = std::move(info);
      }
    }
  }
  return true;
}

bool DecodeNaive(const ThreadWords& t, const FunctionNames& names,
                 NaiveThread* out, std::string* error) {
  std::vector<Frame> stack;
  auto fail = [&](size_t i, const std::string& what) {
    *error = "word " + std::to_string(i) + ": " + what;
    return false;
  };
  auto info = [&](const Frame& f) -> const FunctionInfo* {
    auto it = names.find(f);
    return it == names.end() ? nullptr : &it->second;
  };
  if (t.has_start_checkpoint) {
    const std::vector<uint32_t>& c = t.start_checkpoint;
    if (c.empty() || c[0] == 0xffffffffu || c.size() != 1 + 3 * size_t{c[0]})
      return fail(0, "start CHECKPOINT of " + std::to_string(c.size()) +
                         " words does not give the frames");
    for (uint32_t k = 0; k < c[0]; ++k)
      stack.push_back({c[2 + 3 * k], c[1 + 3 * k] & ~BALLARUS_TRACE_EVENT_TAG});
  }
  const std::vector<uint32_t>& w = t.words;
  for (size_t i = 0; i < w.size();) {
    const uint32_t x = w[i];
    if (x == BALLARUS_TRACE_EVENT_END) {
      if (i + BALLARUS_TRACE_END_WORDS > w.size()) break;  // cut
      out->complete = true;
      if (i + BALLARUS_TRACE_END_WORDS != w.size())
        return fail(i, "words after kEnd");
      break;
    }
    if (x == BALLARUS_TRACE_EVENT_LAND) {
      if (i + BALLARUS_TRACE_LAND_WORDS > w.size()) break;
      const uint32_t depth = w[i + 2];
      if (size_t{depth} + 1 > stack.size())
        return fail(i, "kLand at depth " + std::to_string(depth) +
                           " with " + std::to_string(stack.size()) +
                           " activations");
      stack.resize(depth + 1);
      i += BALLARUS_TRACE_LAND_WORDS;
      continue;
    }
    if (x & BALLARUS_TRACE_EVENT_TAG) {
      if (i + BALLARUS_TRACE_ENTER_WORDS > w.size()) break;
      const Frame f{w[i + 1], x & ~BALLARUS_TRACE_EVENT_TAG};
      const FunctionInfo* fi = info(f);
      if (fi == nullptr)
        return fail(i, "kEnter of function " + std::to_string(f.second) +
                           " of TU stamp " + Hex(f.first) +
                           " that no profile lists");
      if (w[i + 2] != stack.size())
        return fail(i, "kEnter of " + fi->name + " at depth " +
                           std::to_string(w[i + 2]) + " with " +
                           std::to_string(stack.size()) + " activations");
      stack.push_back(f);
      Append(*fi, 0, out);
      i += BALLARUS_TRACE_ENTER_WORDS;
      continue;
    }
    if (stack.empty()) return fail(i, "block " + std::to_string(x) +
                                          " with no activation");
    const FunctionInfo* fi = info(stack.back());
    if (fi == nullptr) return fail(i, "frame of an unknown function");
    if (x >= fi->block_lines.size())
      return fail(i, "block " + std::to_string(x) + " of " + fi->name +
                         ", which has " +
                         std::to_string(fi->block_lines.size()));
    Append(*fi, x, out);
    ++out->block_words;
    if (x == 1) stack.pop_back();
    ++i;
  }
  return true;
}

uint64_t WitnessWords(const std::vector<uint32_t>& w) {
  uint64_t n = 0;
  for (size_t i = 0; i < w.size();) {
    if (w[i] == BALLARUS_TRACE_EVENT_END)
      i += BALLARUS_TRACE_END_WORDS;
    else if (w[i] == BALLARUS_TRACE_EVENT_LAND)
      i += BALLARUS_TRACE_LAND_WORDS;
    else if (w[i] & BALLARUS_TRACE_EVENT_TAG)
      i += BALLARUS_TRACE_ENTER_WORDS;
    else
      ++n, ++i;
  }
  return n;
}

bool ParseShown(const std::string& text, std::map<uint32_t, ShownThread>* out,
                std::string* error) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    for (const nlohmann::json& t : j.at("threads")) {
      ShownThread& s = (*out)[t.at("thread").get<uint32_t>()];
      s.status = t.at("status").get<std::string>();
      s.blocks = t.at("blocks").get<uint64_t>();
      for (const nlohmann::json& step : t.at("steps")) {
        const std::string fn = step.at("function").get<std::string>();
        if (step.contains("block"))
          s.steps.push_back({fn, step.at("block").get<uint32_t>()});
        else
          s.lines.push_back(Basename(step.at("file").get<std::string>()) +
                            ":" + std::to_string(step.at("line").get<int>()) +
                            " " + fn);
      }
    }
  } catch (const std::exception& e) {
    *error = std::string("trace --json output: ") + e.what();
    return false;
  }
  return true;
}

namespace {

template <typename T, typename Show>
std::string Difference(const std::vector<T>& want, const std::vector<T>& got,
                       Show show) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  std::ostringstream s;
  s << "naive " << want.size() << " elements, regenerated " << got.size()
    << "; first difference at " << i << "\n";
  const size_t from = i < 5 ? 0 : i - 5;
  for (size_t k = from; k < i + 5; ++k) {
    s << "  [" << k << "] naive "
      << (k < want.size() ? show(want[k]) : std::string("-"))
      << " | regenerated "
      << (k < got.size() ? show(got[k]) : std::string("-")) << "\n";
  }
  return s.str();
}

}  // namespace

std::string FirstDifference(const std::vector<Step>& want,
                            const std::vector<Step>& got) {
  return Difference(want, got, [](const Step& s) {
    return s.function + " " + std::to_string(s.block);
  });
}

std::string FirstDifference(const std::vector<std::string>& want,
                            const std::vector<std::string>& got) {
  return Difference(want, got, [](const std::string& s) { return s; });
}

}  // namespace trace_oracle
