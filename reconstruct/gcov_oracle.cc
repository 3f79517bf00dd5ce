// gcov_oracle.cc — GCC 12 .gcno/.gcda reader and arc-count solver; see
// gcov_oracle.h for why it exists and which GCC sources define the format.
//
// The solver is the classic one of Knuth (TAOCP vol. 1, 2.3.4.1, ex. 27)
// and Ball & Larus (TOPLAS'94 sec. 3.3): every arc off the spanning tree was
// measured; on the closed graph (the CFG plus a virtual arc EXIT->ENTRY) each
// block conserves flow, so a block with a single unknown incident arc
// determines it.  Repeating that until nothing changes recovers every tree
// arc, because the spanning tree is a tree (some leaf always has one unknown
// arc).  gcov's own solve_flow_graph does the same with worklists; this is a
// deliberately simple fixpoint loop, independent of both gcov and ballarus.
#include "reconstruct/gcov_oracle.h"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace gcov_oracle {
namespace {

constexpr uint32_t kNoteMagic = 0x67636e6f;  // "gcno"
constexpr uint32_t kDataMagic = 0x67636461;  // "gcda"
constexpr uint32_t kTagFunction = 0x01000000;
constexpr uint32_t kTagBlocks = 0x01410000;
constexpr uint32_t kTagArcs = 0x01430000;
constexpr uint32_t kTagLines = 0x01450000;
constexpr uint32_t kTagArcCounters = 0x01a10000;  // GCOV_TAG_FOR_COUNTER(0)
constexpr uint32_t kTagObjectSummary = 0xa1000000;

// A bounds-checked little-endian cursor that remembers the first error.
class Reader {
 public:
  Reader(const std::string& path, const std::vector<uint8_t>& bytes)
      : path_(path), bytes_(bytes) {}

  size_t pos() const { return pos_; }
  size_t size() const { return bytes_.size(); }
  bool at_end() const { return pos_ >= bytes_.size(); }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void Fail(size_t offset, const std::string& what) {
    if (error_.empty())
      error_ = path_ + ": offset " + std::to_string(offset) + ": " + what;
  }

  uint32_t U32(const char* what) {
    if (failed()) return 0;
    if (bytes_.size() - pos_ < 4) {
      Fail(pos_, std::string("truncated: file ends inside ") + what);
      return 0;
    }
    uint32_t v = uint32_t(bytes_[pos_]) | uint32_t(bytes_[pos_ + 1]) << 8 |
                 uint32_t(bytes_[pos_ + 2]) << 16 |
                 uint32_t(bytes_[pos_ + 3]) << 24;
    pos_ += 4;
    return v;
  }

  uint64_t U64(const char* what) {
    uint64_t lo = U32(what);
    uint64_t hi = U32(what);
    return lo | hi << 32;
  }

  // gcov_read_string: u32 byte length (0 = null string), bytes incl. NUL.
  // Returns false for the null string.
  bool String(const char* what, std::string* out) {
    size_t at = pos_;
    uint32_t len = U32(what);
    if (failed() || len == 0) return false;
    if (bytes_.size() - pos_ < len) {
      Fail(at, std::string(what) + ": string of " + std::to_string(len) +
                   " bytes runs past the end of the file");
      return false;
    }
    const char* p = reinterpret_cast<const char*>(bytes_.data() + pos_);
    out->assign(p, strnlen(p, len));
    pos_ += len;
    return true;
  }

  void Seek(size_t pos) { pos_ = pos; }

 private:
  std::string path_;
  const std::vector<uint8_t>& bytes_;
  size_t pos_ = 0;
  std::string error_;
};

bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes,
              std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  return true;
}

std::string Hex(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

size_t Function::n_counters() const {
  size_t n = 0;
  for (const Arc& a : arcs)
    if (!a.on_tree()) n++;
  return n;
}

namespace {

void ReadFunctionRecord(Reader& r, Function* fn) {
  fn->ident = r.U32("function ident");
  fn->lineno_checksum = r.U32("lineno_checksum");
  fn->cfg_checksum = r.U32("cfg_checksum");
  r.String("function name", &fn->name);
  fn->artificial = r.U32("artificial") != 0;
  r.String("function file", &fn->file);
  fn->start_line = r.U32("start line");
  fn->start_column = r.U32("start column");
  fn->end_line = r.U32("end line");
  fn->end_column = r.U32("end column");
}

// The BLOCKS record at `rec` (payload at `base`); false on an error.
bool ReadBlocksRecord(Reader& r, Function* fn, size_t rec, size_t base) {
  if (!fn) {
    r.Fail(rec, "BLOCKS record outside a function");
    return false;
  }
  if (fn->n_blocks) {
    r.Fail(rec, "second BLOCKS record for '" + fn->name + "'");
    return false;
  }
  fn->n_blocks = r.U32("block count");
  if (fn->n_blocks < 2 || fn->n_blocks > (1u << 24)) {
    r.Fail(base, "function '" + fn->name + "' has " +
                     std::to_string(fn->n_blocks) + " blocks");
    return false;
  }
  fn->block_lines.assign(fn->n_blocks, {});
  return true;
}

// An ARCS record of `length` bytes; false on an error that ends parsing.
bool ReadArcsRecord(Reader& r, Function* fn, size_t rec, size_t base,
                    uint32_t length) {
  if (!fn || !fn->n_blocks) {
    r.Fail(rec, "ARCS record before BLOCKS");
    return false;
  }
  if (length < 4 || (length - 4) % 8 != 0) {
    r.Fail(rec, "ARCS record length " + std::to_string(length) +
                    " is not 4 + 8k");
    return false;
  }
  uint32_t src = r.U32("arc source");
  if (src >= fn->n_blocks || src == 1) {
    r.Fail(base, "arc source block " + std::to_string(src) + " of '" +
                     fn->name + "' is out of range or EXIT");
    return false;
  }
  for (const Arc& a : fn->arcs)
    if (a.src == src) {
      r.Fail(base, "second ARCS record for block " + std::to_string(src) +
                       " of '" + fn->name + "'");
      break;
    }
  for (uint32_t i = 0, n = (length - 4) / 8; i < n && !r.failed(); i++) {
    Arc a;
    a.src = src;
    size_t at = r.pos();
    a.dst = r.U32("arc destination");
    a.flags = r.U32("arc flags");
    if (a.dst >= fn->n_blocks || a.dst == 0)
      r.Fail(at, "arc " + std::to_string(src) + "->" + std::to_string(a.dst) +
                     " of '" + fn->name +
                     "' leaves the block range or enters ENTRY");
    fn->arcs.push_back(a);
  }
  return true;
}

// A LINES record; `current_file` persists across records.
bool ReadLinesRecord(Reader& r, Function* fn, size_t rec, size_t base,
                     uint32_t length, std::string* current_file) {
  if (!fn || !fn->n_blocks) {
    r.Fail(rec, "LINES record before BLOCKS");
    return false;
  }
  uint32_t block = r.U32("lines block");
  if (block >= fn->n_blocks) {
    r.Fail(base, "LINES for block " + std::to_string(block) + " of " +
                     std::to_string(fn->n_blocks));
    return false;
  }
  auto& runs = fn->block_lines[block];
  while (!r.failed() && r.pos() < base + length) {
    uint32_t line = r.U32("line number");
    if (line) {
      if (runs.empty()) runs.push_back({*current_file, {}});
      runs.back().lines.push_back(line);
      continue;
    }
    std::string file;
    if (!r.String("line file", &file)) break;  // end of the block
    *current_file = file;
    runs.push_back({file, {}});
  }
  return true;
}

}  // namespace

bool ParseGcno(const std::string& path, const std::vector<uint8_t>& bytes,
               Unit* unit, std::string* error) {
  Reader r(path, bytes);
  *unit = Unit();
  unit->gcno_path = path;
  if (r.U32("magic") != kNoteMagic && !r.failed())
    r.Fail(0, "not a gcov notes file (bad magic)");
  unit->version = r.U32("version");
  unit->stamp = r.U32("stamp");
  r.U32("checksum");
  r.String("cwd", &unit->cwd);
  r.U32("has_unexecuted_blocks");

  Function* fn = nullptr;
  std::string current_file;  // LINES: the file persists across records
  while (!r.failed() && !r.at_end()) {
    size_t rec = r.pos();
    uint32_t tag = r.U32("record tag");
    if (tag == 0) break;
    uint32_t length = r.U32("record length");
    if (r.failed()) break;
    size_t base = r.pos();
    if (length > r.size() - base) {
      r.Fail(rec, "record " + Hex(tag) + " of " + std::to_string(length) +
                      " bytes runs past the end of the file");
      break;
    }
    bool ok = true;
    if (tag == kTagFunction) {
      unit->functions.emplace_back();
      fn = &unit->functions.back();
      ReadFunctionRecord(r, fn);
    } else if (tag == kTagBlocks) {
      ok = ReadBlocksRecord(r, fn, rec, base);
    } else if (tag == kTagArcs) {
      ok = ReadArcsRecord(r, fn, rec, base, length);
    } else if (tag == kTagLines) {
      ok = ReadLinesRecord(r, fn, rec, base, length, &current_file);
    } else {
      fn = nullptr;  // an unknown top-level record ends the function
    }
    if (!ok || r.failed()) break;
    if (r.pos() > base + length) {
      r.Fail(rec, "record " + Hex(tag) + " overruns its length " +
                      std::to_string(length));
      break;
    }
    r.Seek(base + length);
  }
  if (r.failed()) {
    *error = r.error();
    return false;
  }
  // gcov's counter order: blocks in index order; within a block, .gcno
  // order.  profile.cc writes ENTRY first and then blocks in index order, so
  // this stable sort is normally the identity.
  for (Function& f : unit->functions)
    std::stable_sort(f.arcs.begin(), f.arcs.end(),
                     [](const Arc& a, const Arc& b) { return a.src < b.src; });
  return true;
}

bool ParseGcda(const std::string& path, const std::vector<uint8_t>& bytes,
               Unit* unit, std::string* error) {
  Reader r(path, bytes);
  unit->gcda_path = path;
  if (r.U32("magic") != kDataMagic && !r.failed())
    r.Fail(0, "not a gcov data file (bad magic)");
  uint32_t version = r.U32("version");
  if (!r.failed() && version != unit->version)
    r.Fail(4, "version " + Hex(version) + " differs from the notes' " +
                  Hex(unit->version));
  uint32_t stamp = r.U32("stamp");
  if (!r.failed() && stamp != unit->stamp)
    r.Fail(8, "stamp " + Hex(stamp) + " differs from the notes' " +
                  Hex(unit->stamp) + " (stale data file)");
  r.U32("checksum");

  std::map<uint32_t, Function*> by_ident;
  for (Function& f : unit->functions) by_ident[f.ident] = &f;
  Function* fn = nullptr;
  while (!r.failed() && !r.at_end()) {
    size_t rec = r.pos();
    uint32_t tag = r.U32("record tag");
    if (tag == 0) break;
    uint32_t raw_length = r.U32("record length");
    if (r.failed()) break;
    // A negative length means "that many bytes of counters, all zero, not
    // stored" (GCC 12's compressed zero counters).
    bool zeros = int32_t(raw_length) < 0;
    uint32_t length = zeros ? uint32_t(-int32_t(raw_length)) : raw_length;
    size_t stored = zeros ? 0 : length;
    size_t base = r.pos();
    if (stored > r.size() - base) {
      r.Fail(rec, "record " + Hex(tag) + " of " + std::to_string(stored) +
                      " bytes runs past the end of the file");
      break;
    }
    if (tag == kTagObjectSummary) {
      unit->runs = r.U32("summary runs");
    } else if (tag == kTagFunction && length == 0) {
      fn = nullptr;  // placeholder
    } else if (tag == kTagFunction) {
      uint32_t ident = r.U32("function ident");
      uint32_t lineno = r.U32("lineno_checksum");
      uint32_t cfg = r.U32("cfg_checksum");
      auto it = by_ident.find(ident);
      fn = it == by_ident.end() ? nullptr : it->second;
      if (!fn) {
        r.Fail(rec, "function ident " + std::to_string(ident) +
                        " is not in the notes file");
      } else if (fn->lineno_checksum != lineno || fn->cfg_checksum != cfg) {
        r.Fail(rec, "checksums of '" + fn->name + "' differ from the notes'");
      }
    } else if (tag == kTagArcCounters) {
      if (!fn) {
        r.Fail(rec, "arc counters outside a function");
        break;
      }
      size_t n = fn->n_counters();
      if (length != n * 8) {
        r.Fail(rec, "'" + fn->name + "' has " + std::to_string(length / 8) +
                        " arc counters, the notes say " + std::to_string(n));
        break;
      }
      fn->has_data = true;
      for (Arc& a : fn->arcs)
        if (!a.on_tree()) a.count = zeros ? 0 : int64_t(r.U64("arc counter"));
    }
    if (r.failed()) break;
    if (r.pos() > base + stored) {
      r.Fail(rec, "record " + Hex(tag) + " overruns its length");
      break;
    }
    r.Seek(base + stored);
  }
  if (r.failed()) {
    *error = r.error();
    return false;
  }
  for (Function& f : unit->functions) {
    std::string e;
    if (!SolveArcs(&f, &e)) {
      *error = path + ": " + e;
      return false;
    }
  }
  return true;
}

bool SolveArcs(Function* fn, std::string* error) {
  if (fn->n_blocks < 2) {
    *error = "function '" + fn->name + "' has no BLOCKS record";
    return false;
  }
  const size_t n_arcs = fn->arcs.size();
  // A thunk (profile.cc, branch_prob (thunk)): checksums 0, every arc but
  // ENTRY's dropped, each of those counted.  Not a flow graph to solve:
  // its count is its entry arcs'.
  bool thunk = fn->artificial && fn->cfg_checksum == 0 && n_arcs > 0;
  for (const Arc& a : fn->arcs) thunk = thunk && a.src == 0 && !a.on_tree();
  if (thunk) {
    fn->block_counts.assign(fn->n_blocks, 0);
    fn->negative_arcs = 0;
    for (const Arc& a : fn->arcs) {
      fn->block_counts[0] += a.count;
      if (a.dst < fn->n_blocks) fn->block_counts[a.dst] += a.count;
    }
    fn->execution_count = fn->block_counts[0];
    return true;
  }
  const size_t kVirtual = n_arcs;  // EXIT -> ENTRY
  std::vector<bool> known(n_arcs + 1, false);
  std::vector<__int128> value(n_arcs + 1, 0);
  std::vector<std::vector<size_t>> in(fn->n_blocks), out(fn->n_blocks);
  for (size_t i = 0; i < n_arcs; i++) {
    const Arc& a = fn->arcs[i];
    out[a.src].push_back(i);
    in[a.dst].push_back(i);
    if (!a.on_tree()) {
      known[i] = true;
      value[i] = a.count;
    }
  }
  out[1].push_back(kVirtual);
  in[0].push_back(kVirtual);

  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t b = 0; b < fn->n_blocks; b++) {
      size_t unknown = SIZE_MAX, n_unknown = 0;
      __int128 balance = 0;  // sum(in) - sum(out) over known arcs
      for (size_t i : in[b]) {
        if (known[i]) balance += value[i];
        else n_unknown++, unknown = i;
      }
      for (size_t i : out[b]) {
        if (known[i]) balance -= value[i];
        else n_unknown++, unknown = i;
      }
      if (n_unknown != 1) continue;
      bool is_in = std::find(in[b].begin(), in[b].end(), unknown) != in[b].end();
      value[unknown] = is_in ? -balance : balance;
      known[unknown] = true;
      progress = true;
    }
  }
  for (size_t i = 0; i < n_arcs; i++) {
    if (!known[i]) {
      *error = "function '" + fn->name + "': arc " +
               std::to_string(fn->arcs[i].src) + "->" +
               std::to_string(fn->arcs[i].dst) + " is not determined";
      return false;
    }
    if (value[i] < 0) fn->negative_arcs++;
    fn->arcs[i].count = int64_t(value[i]);
  }
  fn->block_counts.assign(fn->n_blocks, 0);
  fn->negative_arcs = 0;
  for (uint32_t b = 0; b < fn->n_blocks; b++) {
    __int128 sum_in = 0, sum_out = 0;
    for (size_t i : in[b]) sum_in += value[i];
    for (size_t i : out[b]) sum_out += value[i];
    if (!known[kVirtual] || sum_in != sum_out) {
      *error = "function '" + fn->name + "': block " + std::to_string(b) +
               " does not conserve flow";
      return false;
    }
    fn->block_counts[b] = int64_t(b == 0 ? sum_out : sum_in);
  }
  fn->execution_count = fn->block_counts[0];
  return true;
}

bool ReadGcno(const std::string& path, Unit* unit, std::string* error) {
  std::vector<uint8_t> bytes;
  return ReadFile(path, &bytes, error) && ParseGcno(path, bytes, unit, error);
}

bool ReadGcda(const std::string& path, Unit* unit, std::string* error) {
  std::vector<uint8_t> bytes;
  return ReadFile(path, &bytes, error) && ParseGcda(path, bytes, unit, error);
}

}  // namespace gcov_oracle
