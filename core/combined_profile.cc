// combined_profile.cc — building a combined profile from observations and
// other combined profiles; see combined_profile.h.  The file form is in
// combined_profile_io.cc.
#include "core/combined_profile.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/gcov_lines.h"
#include "runtime/ballarus_format.h"

namespace ballarus {
namespace {

constexpr uint64_t kMaxN = ~static_cast<uint64_t>(0);

// ENTRY's count through its real edges (ballarus' re-entry edges, which
// also leave ENTRY, subtracted), as report_model's execution count; unset
// when unknown.
Count EntryCount(const Function& fn, const FlowResult& flow) {
  Count c = flow.blocks[kEntryBlock];
  for (size_t i = 0; i < fn.edges.size() && c; ++i) {
    if (!(fn.edges[i].flags & kEdgeReentry)) continue;
    if (!flow.edges[i]) return std::nullopt;
    *c -= *flow.edges[i];
  }
  return c;
}

// The function's gcov line counts by (file, line), summed over entries of
// one line.
std::map<std::pair<uint32_t, uint32_t>, uint64_t> LineCounts(
    const Function& fn, const FlowResult& flow) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> out;
  for (const GcovLine& l :
       GcovLineCounts({GcovFunctionInput{&fn, &flow.edges, &flow.blocks}})) {
    if (l.count > 0) out[{l.file, l.line}] += static_cast<uint64_t>(l.count);
  }
  return out;
}

// Index of the first unknown count in `counts`, or counts.size().
size_t FirstUnknown(const std::vector<Count>& counts) {
  for (size_t i = 0; i < counts.size(); ++i)
    if (!counts[i]) return i;
  return counts.size();
}

bool AnyNonZero(const std::vector<Count>& counts) {
  for (const Count& c : counts)
    if (*c != 0) return true;
  return false;
}

void AddNonZero(const std::vector<Count>& counts,
                std::vector<CombinedStats>* stats) {
  for (size_t i = 0; i < counts.size(); ++i)
    if (*counts[i] != 0) (*stats)[i].Add(*counts[i]);
}

template <typename Key>
bool CombineMap(const std::map<Key, CombinedStats>& from, unsigned bins,
                std::map<Key, CombinedStats>* into, std::string* error) {
  for (const auto& [key, s] : from) {
    auto it = into->try_emplace(key, bins).first;
    if (!it->second.Combine(s, error)) return false;
  }
  return true;
}

void CompleteAll(uint64_t n, std::vector<CombinedStats>* v) {
  for (CombinedStats& s : *v) s.AddZeros(n - s.n());
}

template <typename Key>
void CompleteMap(uint64_t n, std::map<Key, CombinedStats>* m) {
  for (auto& [key, s] : *m) s.AddZeros(n - s.n());
}

void Touch(const Function& fn, unsigned bins, CombinedFunction* cf) {
  if (cf->touched()) return;
  cf->blocks.assign(fn.blocks.size(), CombinedStats(bins));
  cf->edges.assign(fn.edges.size(), CombinedStats(bins));
}

}  // namespace

CombinedProfile::CombinedProfile(unsigned bins)
    : bins_(CombinedStats(bins).bins()), zero_(bins_) {}

CombinedTu* CombinedProfile::FindOrAddTu(uint64_t stamp, const uint8_t* blob,
                                         size_t blob_size,
                                         const TranslationUnit& tu) {
  auto it = std::lower_bound(
      tus_.begin(), tus_.end(), stamp,
      [](const CombinedTu& t, uint64_t s) { return t.stamp < s; });
  if (it != tus_.end() && it->stamp == stamp) return &*it;
  CombinedTu ct;
  ct.stamp = stamp;
  ct.metadata.assign(blob, blob + blob_size);
  ct.tu = tu;
  ct.functions.resize(tu.functions.size(), CombinedFunction{
                                               CombinedStats(bins_), {}, {},
                                               {}, {}});
  return &*tus_.insert(it, std::move(ct));
}

bool CombinedProfile::AddCopy(const Function& fn, const FunctionCopy& copy,
                              CombinedFunction* cf, std::string* error) {
  const FlowResult& flow = copy.flow;
  size_t b = FirstUnknown(flow.blocks), e = FirstUnknown(flow.edges);
  const Count entry = EntryCount(fn, flow);
  if (b < flow.blocks.size() || e < flow.edges.size() || !entry) {
    *error = b < flow.blocks.size()
                 ? "block " + std::to_string(b) + ": count unknown"
                 : e < flow.edges.size()
                       ? "edge " + std::to_string(e) + ": count unknown"
                       : std::string("entry count unknown");
    return false;
  }
  const bool paths = copy.paths && !copy.paths->counts.empty();
  if (!AnyNonZero(flow.blocks) && !AnyNonZero(flow.edges) && !paths &&
      *entry == 0)
    return true;  // 0 everywhere: Finalize adds the zeros
  Touch(fn, bins_, cf);
  AddNonZero(flow.blocks, &cf->blocks);
  AddNonZero(flow.edges, &cf->edges);
  if (*entry != 0) cf->entry.Add(*entry);
  for (const auto& [key, count] : LineCounts(fn, flow))
    cf->lines.try_emplace(key, bins_).first->second.Add(count);
  if (copy.paths) {
    for (const auto& [number, count] : copy.paths->counts)
      cf->paths.try_emplace(number, bins_).first->second.Add(count);
  }
  return true;
}

bool CombinedProfile::AddObservation(const ProfileRecords& obs,
                                     const std::string& label,
                                     std::string* error) {
  if (n_ == kMaxN) {
    *error = "more than 2^64 - 1 observations";
    return false;
  }
  for (const LoadedTu& lt : obs.tus) {
    const ballarus_profile_record& rec = *lt.record;
    CombinedTu* ct = FindOrAddTu(rec.stamp, rec.metadata, rec.meta_size, lt.tu);
    ct->runs = ballarus_sat_add(ct->runs, rec.runs);
    for (size_t i = 0; i < lt.tu.functions.size(); ++i) {
      const Function& fn = lt.tu.functions[i];
      if (!AddCopy(fn, lt.copies[i], &ct->functions[i], error)) {
        *error = lt.tu.source + ": function '" + fn.name + "': " + *error;
        return false;
      }
    }
  }
  ++n_;
  labels_.insert(std::upper_bound(labels_.begin(), labels_.end(), label),
                 label);
  return true;
}

bool CombinedProfile::Combine(const CombinedProfile& other,
                              std::string* error) {
  if (other.bins_ != bins_) {
    *error = "combined profiles with " + std::to_string(other.bins_) +
             " and " + std::to_string(bins_) + " bins cannot be combined";
    return false;
  }
  if (other.n_ > kMaxN - n_) {
    *error = "more than 2^64 - 1 observations";
    return false;
  }
  for (const CombinedTu& ot : other.tus_) {
    CombinedTu* ct = FindOrAddTu(ot.stamp, ot.metadata.data(),
                                 ot.metadata.size(), ot.tu);
    ct->runs = ballarus_sat_add(ct->runs, ot.runs);
    for (size_t i = 0; i < ot.functions.size(); ++i) {
      const CombinedFunction& of = ot.functions[i];
      CombinedFunction& cf = ct->functions[i];
      if (!of.touched()) continue;
      Touch(ot.tu.functions[i], bins_, &cf);
      for (size_t b = 0; b < of.blocks.size(); ++b)
        if (!cf.blocks[b].Combine(of.blocks[b], error)) return false;
      for (size_t e = 0; e < of.edges.size(); ++e)
        if (!cf.edges[e].Combine(of.edges[e], error)) return false;
      if (!cf.entry.Combine(of.entry, error) ||
          !CombineMap(of.lines, bins_, &cf.lines, error) ||
          !CombineMap(of.paths, bins_, &cf.paths, error))
        return false;
    }
  }
  n_ += other.n_;
  std::vector<std::string> labels;
  std::merge(labels_.begin(), labels_.end(), other.labels_.begin(),
             other.labels_.end(), std::back_inserter(labels));
  labels_ = std::move(labels);
  return true;
}

void CombinedProfile::Finalize() {
  zero_ = CombinedStats(bins_);
  zero_.AddZeros(n_);
  for (CombinedTu& ct : tus_) {
    for (CombinedFunction& cf : ct.functions) {
      if (!cf.touched()) continue;
      cf.entry.AddZeros(n_ - cf.entry.n());
      CompleteAll(n_, &cf.blocks);
      CompleteAll(n_, &cf.edges);
      CompleteMap(n_, &cf.lines);
      CompleteMap(n_, &cf.paths);
    }
  }
}

namespace {

// Round half up of sum / n (0 when n == 0); the mean is at most the max,
// so it fits in 64 bits.
uint64_t RoundedMean(const CombinedStats& s) {
  if (s.n() == 0) return 0;
  mpq_class mean = s.Mean();
  mpz_class twice = 2 * mean.get_num() + mean.get_den();
  mpz_class r = twice / (2 * mean.get_den());
  return static_cast<uint64_t>(std::strtoull(r.get_str().c_str(), nullptr, 10));
}

bool MeanRecord(const CombinedTu& ct, ballarus_profile_record* r) {
  *r = ballarus_profile_record{};
  r->stamp = ct.stamp;
  ballarus_meta_header h;
  std::memcpy(&h, ct.metadata.data(), sizeof h);
  r->identity = h.identity;
  r->runs = 1;
  r->metadata = const_cast<unsigned char*>(ct.metadata.data());
  r->meta_size = ct.metadata.size();
  r->borrowed = 1;
  r->n_counters = h.n_counters;
  r->counters = static_cast<uint64_t*>(calloc(h.n_counters + 1, 8));
  return r->counters != nullptr;
}

}  // namespace

bool MeanProfile(const CombinedProfile& c, ProfileRecords* out,
                 std::string* error) {
  ballarus_profile& p = out->raw;
  p = ballarus_profile{};
  p.runs = 1;
  p.records = static_cast<ballarus_profile_record*>(
      calloc(c.tus().size() + 1, sizeof(ballarus_profile_record)));
  if (p.records == nullptr) {
    *error = "out of memory";
    return false;
  }
  for (const CombinedTu& ct : c.tus()) {
    if (!MeanRecord(ct, &p.records[p.n_records++])) {
      *error = "out of memory";
      return false;
    }
  }
  if (!DecodeProfile(out, error)) return false;
  for (size_t t = 0; t < c.tus().size(); ++t) {
    const CombinedTu& ct = c.tus()[t];
    for (size_t i = 0; i < ct.functions.size(); ++i) {
      FlowResult& flow = out->tus[t].copies[i].flow;
      for (size_t b = 0; b < flow.blocks.size(); ++b)
        flow.blocks[b] = RoundedMean(c.Block(ct.functions[i], b));
      for (size_t e = 0; e < flow.edges.size(); ++e)
        flow.edges[e] = RoundedMean(c.Edge(ct.functions[i], e));
      out->tus[t].copies[i].known = flow.edges;
    }
  }
  return true;
}

}  // namespace ballarus
