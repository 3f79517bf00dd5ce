// metadata_function.cc — decoding one function of a metadata body (the
// `function` rule of the grammar in metadata.cc), every field checked
// against the TU decoded so far.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/entry_calls.h"
#include "core/metadata.h"
#include "core/metadata_wire.h"
#include "core/model.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace metadata_wire {
namespace {

// u32 file  u32 line  u32 end_line  u32 cfg_checksum  u32 lineno_checksum
// u32 flags (version 4: end_line from line).  `fn` names the function in
// errors.
bool DecodeFunctionFields(Reader* r, const TranslationUnit& tu,
                          const std::string& fn, const DeltaState& d,
                          Function* f) {
  size_t at = r->pos();
  if (!r->U32(&f->file, "function file")) return false;
  if (f->file >= tu.files.size())
    return r->Fail(at, fn + ": file index " + std::to_string(f->file) +
                           " out of range (" + std::to_string(tu.files.size()) +
                           " files)");
  if (!r->U32(&f->line, "function line") ||
      !r->U32From(&f->end_line, "function end line", f->line, d) ||
      !r->U32(&f->cfg_checksum, "cfg checksum") ||
      !r->U32(&f->lineno_checksum, "lineno checksum"))
    return false;
  at = r->pos();
  if (!r->U32(&f->flags, "function flags")) return false;
  if (f->flags & ~kKnownFunctionFlags)
    return r->Fail(at, fn + ": unknown function flags " + Hex(f->flags));
  return true;
}

// [block] blocks, at least ENTRY and EXIT, each with its line locations
// (version 4: each line from the one before, the first from the
// function's).
bool DecodeBlocks(Reader* r, const TranslationUnit& tu, const std::string& fn,
                  const DeltaState& d, Function* f) {
  uint64_t n_blocks;
  size_t at = r->pos();
  if (!r->Count(&n_blocks, "block count", 1)) return false;
  if (n_blocks < 2)
    return r->Fail(at, fn + ": " + std::to_string(n_blocks) +
                           " blocks, ENTRY and EXIT are required");
  f->blocks.resize(n_blocks);
  uint32_t prev_line = f->line;
  for (uint64_t b = 0; b < n_blocks; ++b) {
    uint64_t n_lines;
    if (!r->Count(&n_lines, "line count", 2)) return false;
    f->blocks[b].lines.resize(n_lines);
    for (Location& loc : f->blocks[b].lines) {
      at = r->pos();
      if (!r->U32(&loc.file, "line file")) return false;
      if (loc.file >= tu.files.size())
        return r->Fail(at, fn + ": block " + std::to_string(b) +
                               ": file index " + std::to_string(loc.file) +
                               " out of range (" +
                               std::to_string(tu.files.size()) + " files)");
      if (!r->U32From(&loc.line, "line", prev_line, d)) return false;
      prev_line = loc.line;
    }
  }
  return true;
}

// The counter of edge i: u counter_plus_1, or in version 4 u counter_code
// (0: none; else the zigzag difference to d->next_counter, plus 1), into
// *counter (kNoCounter for none), checked against the TU's n_counters.
bool DecodeCounter(Reader* r, const std::string& fn, uint64_t i,
                   uint64_t n_counters, DeltaState* d, int64_t* counter) {
  const size_t at = r->pos();
  uint64_t c;
  if (!r->U(&c, "edge counter")) return false;
  *counter = kNoCounter;
  if (c == 0) return true;
  // (In 128 bits: the sum cannot overflow.)
  const __int128 x = d->on ? d->next_counter + static_cast<__int128>(
                                                   UnZigZag(c - 1))
                           : static_cast<__int128>(c - 1);
  if (x < 0 || x >= static_cast<__int128>(n_counters))
    return r->Fail(at, fn + ": edge " + std::to_string(i) + ": counter " +
                           (x < 0 ? "-" + std::to_string(-static_cast<int64_t>(x))
                                  : std::to_string(static_cast<uint64_t>(x))) +
                           " out of range (" + std::to_string(n_counters) +
                           " counters)");
  *counter = static_cast<int64_t>(x);
  d->next_counter = *counter + 1;
  return true;
}

// Edge i: u32 src  u32 dst  u32 flags  u counter (version 4: src from the
// previous edge's, dst from src).  Edges are grouped by source (*prev_src:
// the previous edge's); a counter is in range, used once in the TU
// (counter_used) and never on an edge that cannot hold one.
bool DecodeEdge(Reader* r, const TranslationUnit& tu, const std::string& fn,
                uint64_t i, uint64_t n_blocks, uint32_t* prev_src,
                std::unordered_set<uint64_t>* counter_used, DeltaState* d,
                Edge* e) {
  // Built only for an error message: it is the hot loop of a profile's
  // decoding.
  auto en = [&] { return fn + ": edge " + std::to_string(i); };
  size_t at = r->pos();
  if (!r->U32From(&e->src, "edge source", *prev_src, *d)) return false;
  if (e->src >= n_blocks)
    return r->Fail(at, en() + " leaves block " + std::to_string(e->src) +
                           " of " + std::to_string(n_blocks));
  if (e->src == kExitBlock) return r->Fail(at, en() + " leaves EXIT");
  if (e->src < *prev_src)
    return r->Fail(at, en() + " leaves block " + std::to_string(e->src) +
                           " after an edge of block " +
                           std::to_string(*prev_src) +
                           " (edges must be grouped by source in order)");
  *prev_src = e->src;
  at = r->pos();
  if (!r->U32From(&e->dst, "edge target", e->src, *d)) return false;
  if (e->dst >= n_blocks)
    return r->Fail(at, en() + " names block " + std::to_string(e->dst) +
                           " of " + std::to_string(n_blocks));
  if (e->dst == kEntryBlock) return r->Fail(at, en() + " enters ENTRY");
  at = r->pos();
  if (!r->U32(&e->flags, "edge flags")) return false;
  if (e->flags & ~kKnownEdgeFlags)
    return r->Fail(at, en() + ": unknown edge flags " + Hex(e->flags));
  if ((e->flags & kEdgeReentry) && e->src != kEntryBlock)
    return r->Fail(at, en() + ": re-entry edge does not leave ENTRY");
  at = r->pos();
  if (!DecodeCounter(r, fn, i, tu.n_counters, d, &e->counter)) return false;
  if (e->counter == kNoCounter) return true;
  const uint64_t idx = static_cast<uint64_t>(e->counter);
  if (counter_used->count(idx) != 0)
    return r->Fail(at, en() + ": counter " + std::to_string(idx) +
                           " already used by another edge");
  if (e->flags & kNoCounterEdgeFlags)
    return r->Fail(at, en() + ": abnormal/fake/ignored edge has a counter");
  counter_used->insert(idx);
  return true;
}

bool DecodeEdges(Reader* r, const TranslationUnit& tu, const std::string& fn,
                 std::unordered_set<uint64_t>* counter_used, DeltaState* d,
                 Function* f) {
  const uint64_t n_blocks = f->blocks.size();
  uint64_t n_edges;
  if (!r->Count(&n_edges, "edge count", 4)) return false;
  f->edges.resize(n_edges);
  uint32_t prev_src = 0;
  for (uint64_t i = 0; i < n_edges; ++i)
    if (!DecodeEdge(r, tu, fn, i, n_blocks, &prev_src, counter_used, d,
                    &f->edges[i]))
      return false;
  return true;
}

// A gcov report extension: decodable, and its dropped edges fake edges of
// the function.  Errors at `at`, where the extension starts.
bool CheckGcovReportExtension(Reader* r, size_t at, const std::string& fn,
                              const Function& f, const Extension& x) {
  GcovReportInfo info;
  std::string err;
  if (!DecodeGcovReportInfo(x.bytes, &info, &err))
    return r->Fail(at, fn + ": " + err);
  for (uint32_t e : info.dropped_edges)
    if (e >= f.edges.size() || !(f.edges[e].flags & kEdgeFake))
      return r->Fail(at, fn + ": gcov-dropped edge " + std::to_string(e) +
                             " is not a fake edge of the function");
  return true;
}

// A path extension: decodable, naming edges and blocks of the function,
// and with counters the TU has.  Errors at `at`, where the extension starts.
bool CheckPathExtension(Reader* r, size_t at, const TranslationUnit& tu,
                        const std::string& fn, const Function& f,
                        const Extension& x) {
  const uint64_t n_blocks = f.blocks.size(), n_edges = f.edges.size();
  PathInfo info;
  std::string err;
  if (!DecodePathInfo(x.bytes, &info, &err))
    return r->Fail(at, fn + ": " + err);
  for (uint32_t e : info.cut_edges)
    if (e >= n_edges)
      return r->Fail(
          at, fn + ": path cut edge " + std::to_string(e) + " out of range");
  for (uint32_t b : info.cut_blocks)
    if (b >= n_blocks || b == kEntryBlock || b == kExitBlock)
      return r->Fail(at, fn + ": path cut block " + std::to_string(b) +
                             " is not a basic block");
  for (uint32_t e : info.precount_edges)
    if (e >= n_edges || !(f.edges[e].flags & kEdgeFake) ||
        f.edges[e].dst != kExitBlock || f.edges[e].src == kEntryBlock)
      return r->Fail(at, fn + ": path pre-count edge " + std::to_string(e) +
                             " is not a fake edge from a block to EXIT");
  for (const PathInfo::Derived& d : info.derived)
    if (d.block ? d.where >= n_blocks || d.where == kEntryBlock ||
                      d.where == kExitBlock
                : d.where >= n_edges)
      return r->Fail(at, fn + ": derived path count " + std::to_string(d.path) +
                             " names " + (d.block ? "block " : "edge ") +
                             std::to_string(d.where) +
                             ", not one of the "
                             "function's");
  for (const PathInfo::Balanced& b : info.balanced)
    if (b.start >= n_blocks || b.start == kEntryBlock || b.start == kExitBlock)
      return r->Fail(at, fn + ": balanced path " + std::to_string(b.path) +
                             " starts at block " + std::to_string(b.start) +
                             ", not one of the function's");
  if (!info.derived.empty() &&
      !(tu.flags & (BALLARUS_META_F_EDGE | BALLARUS_META_F_NAIVE)))
    return r->Fail(at, fn + ": derived path counts in a build without "
                            "edge counters");
  if (info.storage == PathInfo::kFromEdges &&
      (info.base != 0 || !info.precount_edges.empty() ||
       !info.derived.empty() || !info.balanced.empty()))
    return r->Fail(at, fn + ": a path table determined by its edge counts "
                            "has a base, pre-counts or derived counts");
  if (info.storage == PathInfo::kDense &&
      (info.base > tu.n_counters ||
       info.n_paths + 1 > tu.n_counters - info.base))
    return r->Fail(at, fn + ": path counters [" + std::to_string(info.base) +
                           ", +" + std::to_string(info.n_paths + 1) +
                           ") exceed the " + std::to_string(tu.n_counters) +
                           " counters");
  return true;
}

// An entry-calls extension: decodable, naming the function's real ENTRY
// edge, which holds no counter, in a build with edge counters on chords.
// The calls are checked across the TU (CheckEntryBalances).  Errors at
// `at`, where the extension starts.
bool CheckEntryCallsExtension(Reader* r, size_t at, const TranslationUnit& tu,
                              const std::string& fn, const Function& f,
                              const Extension& x) {
  EntryCalls info;
  std::string err;
  if (!DecodeEntryCalls(x.bytes, &info, &err))
    return r->Fail(at, fn + ": " + err);
  if (static_cast<int64_t>(info.edge) != RealEntryEdge(f))
    return r->Fail(at, fn + ": entry calls: edge " + std::to_string(info.edge) +
                           " is not the function's one real ENTRY edge");
  if (f.edges[info.edge].counter != kNoCounter)
    return r->Fail(at, fn + ": entry calls: edge " + std::to_string(info.edge) +
                           " has a counter");
  if (!(tu.flags & BALLARUS_META_F_EDGE))
    return r->Fail(at, fn + ": entry calls in a build without edge mode");
  return true;
}

// [extension] extensions: kept as bytes; the known tags are checked, the
// others skipped.
bool DecodeExtensions(Reader* r, const TranslationUnit& tu,
                      const std::string& fn, Function* f) {
  uint64_t n_ext;
  if (!r->Count(&n_ext, "extension count", 2)) return false;
  f->extensions.resize(n_ext);
  for (Extension& x : f->extensions) {
    const size_t at = r->pos();
    if (!r->U32(&x.tag, "extension tag") ||
        !r->Bytes(&x.bytes, "extension bytes"))
      return false;
    if (x.tag == kGcovReportExtensionTag) {
      if (!CheckGcovReportExtension(r, at, fn, *f, x)) return false;
    } else if (x.tag == kPathExtensionTag) {
      if (!CheckPathExtension(r, at, tu, fn, *f, x)) return false;
    } else if (x.tag == kEntryCallsExtensionTag) {
      if (!CheckEntryCallsExtension(r, at, tu, fn, *f, x)) return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeFunction(Reader* r, const TranslationUnit& tu,
                    std::unordered_set<uint64_t>* counter_used,
                    DeltaState* delta, Function* f) {
  if (!r->Str(&f->name, "function name") ||
      !r->Str(&f->demangled, "demangled name"))
    return false;
  const std::string fn = "function " + Quote(f->name);
  return DecodeFunctionFields(r, tu, fn, *delta, f) &&
         DecodeBlocks(r, tu, fn, *delta, f) &&
         DecodeEdges(r, tu, fn, counter_used, delta, f) &&
         DecodeExtensions(r, tu, fn, f);
}

}  // namespace metadata_wire
}  // namespace ballarus
