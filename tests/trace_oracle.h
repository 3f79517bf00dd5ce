// trace_oracle.h — the independent side of the tracing tests: a trace
// file's words per thread (runtime/trace_read.h), a mode=trace-naive
// stream decoded with a stack alone into the executed (function, block)
// sequence, and `ballarus-reconstruct trace --json` read back, so that a
// test compares the regenerated sequence of an optimised trace with the
// naive build's, element for element.
//
// Decoding a naive stream (runtime/trace_events.h): kEnter pushes its
// function and appends (function, ENTRY = 0); a block-index word b appends
// (innermost, b) and, when b is EXIT (1), pops; kLand{block, depth}
// truncates the stack to depth + 1 (the landing block's own word follows);
// kEnd ends the stream.  A fork child's stream starts from its CHECKPOINT
// record's frames.
#ifndef BALLARUS_TESTS_TRACE_ORACLE_H_
#define BALLARUS_TESTS_TRACE_ORACLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trace_oracle {

// One thread of a trace file.
struct ThreadWords {
  uint32_t tid = 0;
  std::vector<uint32_t> words;  // CHUNK / RING payloads in order
  // The first CHECKPOINT record's words when it precedes every word.
  std::vector<uint32_t> start_checkpoint;
  bool has_start_checkpoint = false;
  bool ring = false;
  uint64_t total = 0;  // the last RING record's total
};

struct TraceFile {
  uint32_t mode = 0, pid = 0, parent_pid = 0;
  std::map<uint32_t, ThreadWords> threads;  // by thread serial
};

// Reads and checks a trace file; false with a one-line *error.
bool ReadTraceFile(const std::string& path, TraceFile* out,
                   std::string* error);

// A traced function as the profiles' metadata gives it: its shown name
// (the demangled name, else the assembler name) and each block's source
// lines as "basename:line".
struct FunctionInfo {
  std::string name;
  std::vector<std::vector<std::string>> block_lines;
};
// By kEnter's (TU stamp, index in its TU).
using FunctionNames = std::map<std::pair<uint32_t, uint32_t>, FunctionInfo>;
bool LoadFunctionNames(const std::vector<std::string>& profiles,
                       FunctionNames* out, std::string* error);

struct Step {
  std::string function;
  uint32_t block = 0;
  bool operator==(const Step& o) const {
    return block == o.block && function == o.function;
  }
  bool operator<(const Step& o) const {
    return function != o.function ? function < o.function : block < o.block;
  }
};

struct NaiveThread {
  std::vector<Step> steps;
  std::vector<std::string> lines;  // the steps' lines as `trace` shows them
  bool complete = false;     // ended with kEnd
  uint64_t block_words = 0;  // block-index words of the stream
};

// Decodes one naive stream as the header says; false with *error naming
// the word when it does not decode (unknown function, kEnter at the wrong
// depth, a block word with no activation, a kLand deeper than the stack).
bool DecodeNaive(const ThreadWords& t, const FunctionNames& names,
                 NaiveThread* out, std::string* error);

// Witness words of an optimised stream (words that are not part of an
// event).
uint64_t WitnessWords(const std::vector<uint32_t>& words);

// `ballarus-reconstruct trace --json` output: per thread serial, its
// status ("complete"/"truncated") and steps — {function, block} with
// --blocks, else {function, file, line}, kept as "basename:line function"
// (two builds of one program lie in different directories).
struct ShownThread {
  std::string status;
  uint64_t blocks = 0;
  std::vector<Step> steps;
  std::vector<std::string> lines;
};
bool ParseShown(const std::string& json_text,
                std::map<uint32_t, ShownThread>* out, std::string* error);

// For failure messages: the lengths and the first difference of two
// sequences with a few elements of context.
std::string FirstDifference(const std::vector<Step>& want,
                            const std::vector<Step>& got);
std::string FirstDifference(const std::vector<std::string>& want,
                            const std::vector<std::string>& got);

}  // namespace trace_oracle

#endif  // BALLARUS_TESTS_TRACE_ORACLE_H_
