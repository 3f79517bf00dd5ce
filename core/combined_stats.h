// combined_stats.h — the statistics of one counter over many observations
// (runs or tests), for combined profiles (Preuss, "Implementation of Path
// Profiling in LLVM", §3.5): number of observations, exact sum and sum of
// squares, min, max, and a histogram over fixed bins.
//
// Everything is an exact integer, so Add and Combine are associative and
// commutative exactly: any tree of combines over the same observations gives
// the same value, and the same bytes from Serialize.  Preuss keeps a float
// sum of squared deviations and bins relative to the observed range; neither
// composes exactly, hence the choices here:
//   - sum < 2^128 and sum of squares < 2^192 for up to 2^64 - 1 observations
//     of 64-bit counts, so they are kept in fixed 128- and 192-bit integers
//     (no allocation per counter); Combine refuses to exceed 2^64 - 1
//     observations.  Mean and variance are derived as exact rationals (GMP).
//   - bins are fixed by the counter value alone (BinOf): bin 0 holds zero
//     counts, bins 1..B-1 split the exponents 0..63 of the counts' log2
//     evenly.  A value's bin does not depend on the other observations, so
//     histograms add bin by bin.
//
// A counter that a run did not touch is an observation of 0: a caller
// combining sparse runs must Add(0) for it, or AddZeros(k) for k such runs
// at once (else the mean would be biased).
#ifndef BALLARUS_CORE_COMBINED_STATS_H_
#define BALLARUS_CORE_COMBINED_STATS_H_

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ballarus {

using u128 = unsigned __int128;

// An unsigned 192-bit integer, enough for a sum of 2^64 squares of 64-bit
// values: lo + hi * 2^128.
struct U192 {
  u128 lo = 0;
  uint64_t hi = 0;

  void Add(const U192& other);
  bool operator==(const U192& o) const { return lo == o.lo && hi == o.hi; }
  mpz_class ToMpz() const;
};

// Default number of histogram bins (Preuss's llvm-cprof default).
inline constexpr unsigned kDefaultBins = 15;
inline constexpr unsigned kMinBins = 2;
inline constexpr unsigned kMaxBins = 65;  // one bin per power of two

// Bin of `value` among `bins` bins: 0 for 0, else
// 1 + floor(floor(log2 value) * (bins - 1) / 64).
unsigned BinOf(uint64_t value, unsigned bins);

// Smallest value in bin `k` (1 <= k < bins): 2^ceil(64 (k - 1) / (bins - 1)).
// With 15 bins: 1, 32, 1024, 16384, ... (bin 1 is [1, 32)).
uint64_t BinLowerBound(unsigned k, unsigned bins);

class CombinedStats {
 public:
  // `bins` in [kMinBins, kMaxBins]; out of range is clamped.
  explicit CombinedStats(unsigned bins = kDefaultBins);

  // One more observation.  False (and unchanged) at 2^64 - 1 observations.
  bool Add(uint64_t value);

  // `count` observations of 0, as `count` calls of Add(0).  False (and
  // unchanged) if the number would exceed 2^64 - 1.
  bool AddZeros(uint64_t count);

  // Adds the observations of `other`.  False (and unchanged) with `*error`
  // set when the bin counts differ or the number would exceed 2^64 - 1.
  bool Combine(const CombinedStats& other, std::string* error);

  uint64_t n() const { return n_; }
  u128 sum() const { return sum_; }
  const U192& sum_of_squares() const { return sum_sq_; }
  uint64_t min() const { return min_; }  // 0 when n() == 0
  uint64_t max() const { return max_; }  // 0 when n() == 0
  unsigned bins() const { return static_cast<unsigned>(hist_.size()); }
  const std::vector<uint64_t>& histogram() const { return hist_; }

  // Exact mean sum / n, and population variance (n sumsq - sum^2) / n^2
  // (Preuss's SS / n); both 0 when n() == 0.
  mpq_class Mean() const;
  mpq_class Variance() const;

  // Appends the canonical byte form (equal statistics, equal bytes):
  // version byte, bin count byte, then LEB128 varints n, min, max, sum,
  // sum of squares (low 128 bits, high 64 bits) and the bins' counts, then
  // Crc8 of all the record's bytes before it.
  void Serialize(std::string* out) const;

  // Reads one record at `*pos` in `data`, advancing `*pos`.  False with
  // `*error` set on truncated, non-canonical, damaged (checksum) or
  // inconsistent input (unknown version, bins not summing to n, min or max
  // outside the populated bins, sums impossible for n, min and max, ...);
  // `*out` and `*pos` are then unchanged.
  static bool Parse(const std::string& data, size_t* pos, CombinedStats* out,
                    std::string* error);
  // The record without what a container stores once (version, bin count,
  // n) and without the checksum (a container checks its whole bytes):
  // min, max, sum, sum of squares and the bins' counts, as LEB128 varints.
  void SerializeBody(std::string* out) const;
  // Reads SerializeBody's form for `n` observations in `bins` bins, with
  // Parse's consistency checks; `*out` and `*pos` unchanged on failure.
  static bool ParseBody(const std::string& data, size_t* pos, uint64_t n,
                        unsigned bins, CombinedStats* out, std::string* error);
  // The whole of `data` as one record (trailing bytes are an error).
  static bool ParseAll(const std::string& data, CombinedStats* out,
                       std::string* error);

  bool operator==(const CombinedStats& o) const;
  bool operator!=(const CombinedStats& o) const { return !(*this == o); }

 private:
  std::string CheckConsistent() const;
  bool ParseFields(const std::string& data, size_t* pos, std::string* error);

  uint64_t n_ = 0;
  u128 sum_ = 0;
  U192 sum_sq_;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  std::vector<uint64_t> hist_;
};

// CRC-8/SMBUS (polynomial x^8 + x^2 + x + 1, initial 0): detects every
// error burst of up to 8 bits, so every change of a single byte.
uint8_t Crc8(const char* data, size_t size);

// LEB128 varints, as the records use them.  GetVarint reads a canonical
// one of at most `bits` bits (false with *error naming `what` if it is cut
// short, too wide or non-canonical); GetU64 one of 64 bits.
void PutVarint(u128 v, std::string* out);
bool GetVarint(const std::string& data, size_t* pos, unsigned bits, u128* v,
               const char* what, std::string* error);
bool GetU64(const std::string& data, size_t* pos, uint64_t* v,
            const char* what, std::string* error);

// The serialization format version written by Serialize.
inline constexpr uint8_t kCombinedStatsVersion = 1;

}  // namespace ballarus

#endif  // BALLARUS_CORE_COMBINED_STATS_H_
