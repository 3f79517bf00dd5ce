// combined_stats.cc — exact per-counter statistics over observations; the
// design (why the integers and bins compose) is in combined_stats.h.
#include "core/combined_stats.h"

#include <algorithm>

namespace ballarus {
namespace {

constexpr uint64_t kMaxN = ~static_cast<uint64_t>(0);

mpz_class U128ToMpz(u128 v) {
  mpz_class hi = static_cast<unsigned long>(static_cast<uint64_t>(v >> 64));
  mpz_class lo = static_cast<unsigned long>(static_cast<uint64_t>(v));
  return (hi << 64) + lo;
}

U192 Square(uint64_t v) {
  U192 s;
  s.lo = static_cast<u128>(v) * v;
  return s;
}

unsigned ClampBins(unsigned bins) {
  return std::min(std::max(bins, kMinBins), kMaxBins);
}

}  // namespace

void PutVarint(u128 v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(static_cast<uint8_t>(v)));
}

// Reads a canonical LEB128 varint of at most `bits` bits.
bool GetVarint(const std::string& data, size_t* pos, unsigned bits, u128* v,
               const char* what, std::string* error) {
  u128 value = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (*pos >= data.size()) {
      *error = std::string("truncated record: ") + what + " cut short";
      return false;
    }
    uint8_t byte = static_cast<uint8_t>(data[(*pos)++]);
    u128 part = byte & 0x7f;
    bool too_wide =
        shift >= bits || (bits - shift < 7 && (part >> (bits - shift)) != 0);
    if (too_wide) {
      *error = std::string("damaged record: ") + what + " exceeds " +
               std::to_string(bits) + " bits";
      return false;
    }
    value |= part << shift;
    if (!(byte & 0x80)) {
      if (byte == 0 && shift > 0) {
        *error = std::string("damaged record: ") + what +
                 " has a non-canonical encoding";
        return false;
      }
      *v = value;
      return true;
    }
  }
}

bool GetU64(const std::string& data, size_t* pos, uint64_t* v,
            const char* what, std::string* error) {
  u128 wide;
  if (!GetVarint(data, pos, 64, &wide, what, error)) return false;
  *v = static_cast<uint64_t>(wide);
  return true;
}

uint8_t Crc8(const char* data, size_t size) {
  uint8_t crc = 0;
  for (size_t i = 0; i < size; ++i) {
    crc ^= static_cast<uint8_t>(data[i]);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint8_t>(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
    }
  }
  return crc;
}

void U192::Add(const U192& other) {
  u128 s = lo + other.lo;
  hi += other.hi + (s < lo ? 1 : 0);
  lo = s;
}

mpz_class U192::ToMpz() const {
  mpz_class h = static_cast<unsigned long>(hi);
  return (h << 128) + U128ToMpz(lo);
}

unsigned BinOf(uint64_t value, unsigned bins) {
  if (value == 0) return 0;
  unsigned log2 = 63 - static_cast<unsigned>(__builtin_clzll(value));
  return 1 + log2 * (bins - 1) / 64;
}

uint64_t BinLowerBound(unsigned k, unsigned bins) {
  unsigned e = (64 * (k - 1) + bins - 2) / (bins - 1);
  return static_cast<uint64_t>(1) << e;
}

CombinedStats::CombinedStats(unsigned bins) : hist_(ClampBins(bins), 0) {}

bool CombinedStats::Add(uint64_t value) {
  if (n_ == kMaxN) return false;
  min_ = n_ == 0 ? value : std::min(min_, value);
  max_ = n_ == 0 ? value : std::max(max_, value);
  ++n_;
  sum_ += value;
  sum_sq_.Add(Square(value));
  ++hist_[BinOf(value, bins())];
  return true;
}

bool CombinedStats::AddZeros(uint64_t count) {
  if (count > kMaxN - n_) return false;
  if (count == 0) return true;
  max_ = n_ == 0 ? 0 : max_;
  min_ = 0;
  n_ += count;
  hist_[0] += count;
  return true;
}

bool CombinedStats::Combine(const CombinedStats& other, std::string* error) {
  if (other.bins() != bins()) {
    *error = "cannot combine statistics of " + std::to_string(bins()) +
             " and " + std::to_string(other.bins()) + " bins";
    return false;
  }
  if (other.n_ > kMaxN - n_) {
    *error = "more than 2^64 - 1 observations";
    return false;
  }
  if (other.n_ == 0) return true;
  min_ = n_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = n_ == 0 ? other.max_ : std::max(max_, other.max_);
  n_ += other.n_;
  sum_ += other.sum_;
  sum_sq_.Add(other.sum_sq_);
  for (size_t i = 0; i < hist_.size(); ++i) hist_[i] += other.hist_[i];
  return true;
}

mpq_class CombinedStats::Mean() const {
  if (n_ == 0) return 0;
  mpq_class m(U128ToMpz(sum_), mpz_class(static_cast<unsigned long>(n_)));
  m.canonicalize();
  return m;
}

mpq_class CombinedStats::Variance() const {
  if (n_ == 0) return 0;
  mpz_class n = static_cast<unsigned long>(n_);
  mpz_class s = U128ToMpz(sum_);
  mpq_class v(n * sum_sq_.ToMpz() - s * s, n * n);
  v.canonicalize();
  return v;
}

void CombinedStats::Serialize(std::string* out) const {
  size_t start = out->size();
  out->push_back(static_cast<char>(kCombinedStatsVersion));
  out->push_back(static_cast<char>(bins()));
  PutVarint(n_, out);
  SerializeBody(out);
  out->push_back(
      static_cast<char>(Crc8(out->data() + start, out->size() - start)));
}

// Empty string when the fields can come from some observations; otherwise
// what is wrong.
std::string CombinedStats::CheckConsistent() const {
  std::vector<uint64_t> zero(hist_.size(), 0);
  if (n_ == 0) {
    bool empty = min_ == 0 && max_ == 0 && sum_ == 0 && sum_sq_ == U192() &&
                 hist_ == zero;
    return empty ? "" : "no observations but non-zero statistics";
  }
  if (min_ > max_) return "min above max";
  u128 total = 0;
  for (uint64_t c : hist_) total += c;
  if (total != n_) return "histogram does not sum to the observations";
  unsigned lo = BinOf(min_, bins()), hi = BinOf(max_, bins());
  for (unsigned k = 0; k < bins(); ++k) {
    bool inside = k >= lo && k <= hi;
    if (!inside && hist_[k] != 0) return "histogram outside [min, max]";
  }
  if (hist_[lo] == 0 || hist_[hi] == 0) return "min or max in an empty bin";
  // One observation is min, one is max, the others lie between.
  u128 others = n_ - 1;
  if (sum_ < max_ + others * min_ || sum_ > min_ + others * max_) {
    return "sum impossible for n, min and max";
  }
  mpz_class n = static_cast<unsigned long>(n_);
  mpz_class s = U128ToMpz(sum_), sq = sum_sq_.ToMpz();
  mpz_class mn = static_cast<unsigned long>(min_);
  mpz_class mx = static_cast<unsigned long>(max_);
  mpz_class rest = n - 1;
  if (sq < mx * mx + rest * mn * mn || sq > mn * mn + rest * mx * mx) {
    return "sum of squares impossible for n, min and max";
  }
  if (s * s > n * sq) return "sum of squares below sum^2 / n";
  return "";
}

bool CombinedStats::Parse(const std::string& data, size_t* pos,
                          CombinedStats* out, std::string* error) {
  size_t p = *pos;
  if (p > data.size() || data.size() - p < 2) {
    *error = "truncated record: no version and bin count";
    return false;
  }
  uint8_t version = static_cast<uint8_t>(data[p]);
  uint8_t bins = static_cast<uint8_t>(data[p + 1]);
  p += 2;
  if (version != kCombinedStatsVersion) {
    *error = "unknown combined statistics version " + std::to_string(version);
    return false;
  }
  if (bins < kMinBins || bins > kMaxBins) {
    *error = "damaged record: " + std::to_string(bins) + " bins";
    return false;
  }
  CombinedStats s(bins);
  if (!GetU64(data, &p, &s.n_, "n", error) ||
      !s.ParseFields(data, &p, error)) {
    return false;
  }
  if (p >= data.size()) {
    *error = "truncated record: no checksum";
    return false;
  }
  if (static_cast<uint8_t>(data[p]) != Crc8(data.data() + *pos, p - *pos)) {
    *error = "damaged record: checksum mismatch";
    return false;
  }
  ++p;
  std::string wrong = s.CheckConsistent();
  if (!wrong.empty()) {
    *error = "damaged record: " + wrong;
    return false;
  }
  *out = std::move(s);
  *pos = p;
  return true;
}

void CombinedStats::SerializeBody(std::string* out) const {
  PutVarint(min_, out);
  PutVarint(max_, out);
  PutVarint(sum_, out);
  PutVarint(sum_sq_.lo, out);
  PutVarint(sum_sq_.hi, out);
  for (uint64_t c : hist_) PutVarint(c, out);
}

bool CombinedStats::ParseFields(const std::string& data, size_t* pos,
                                std::string* error) {
  uint64_t sq_hi = 0;
  if (!GetU64(data, pos, &min_, "min", error) ||
      !GetU64(data, pos, &max_, "max", error) ||
      !GetVarint(data, pos, 128, &sum_, "sum", error) ||
      !GetVarint(data, pos, 128, &sum_sq_.lo, "sum of squares", error) ||
      !GetU64(data, pos, &sq_hi, "sum of squares", error)) {
    return false;
  }
  sum_sq_.hi = sq_hi;
  for (uint64_t& c : hist_) {
    if (!GetU64(data, pos, &c, "histogram bin", error)) return false;
  }
  return true;
}

bool CombinedStats::ParseBody(const std::string& data, size_t* pos,
                              uint64_t n, unsigned bins, CombinedStats* out,
                              std::string* error) {
  size_t p = *pos;
  CombinedStats s(bins);
  s.n_ = n;
  if (!s.ParseFields(data, &p, error)) return false;
  std::string wrong = s.CheckConsistent();
  if (!wrong.empty()) {
    *error = "damaged record: " + wrong;
    return false;
  }
  *out = std::move(s);
  *pos = p;
  return true;
}

bool CombinedStats::ParseAll(const std::string& data, CombinedStats* out,
                             std::string* error) {
  size_t pos = 0;
  CombinedStats s;
  if (!Parse(data, &pos, &s, error)) return false;
  if (pos != data.size()) {
    *error = "damaged record: " + std::to_string(data.size() - pos) +
             " trailing bytes";
    return false;
  }
  *out = std::move(s);
  return true;
}

bool CombinedStats::operator==(const CombinedStats& o) const {
  return n_ == o.n_ && sum_ == o.sum_ && sum_sq_ == o.sum_sq_ &&
         min_ == o.min_ && max_ == o.max_ && hist_ == o.hist_;
}

}  // namespace ballarus
