// combined_profile.h — a combined profile: the statistics of every block,
// edge, source line, Ball–Larus path and function entry count of a program
// over N observations (runs, or named tests), so that what varies between
// inputs stays visible (Preuss, "Implementation of Path Profiling in LLVM",
// §3.5).  Each quantity keeps one CombinedStats (core/combined_stats.h): n,
// exact sum and sum of squares, min, max and a histogram over fixed log2
// bins.
//
// Observations are profiles read and solved (core/profile_reader.h): the
// statistics are over derived quantities — each observation's flow is
// solved first, and its block, edge, line (gcov's per-function line counts,
// core/gcov_lines.h), path and entry counts are added — not over raw
// counters (a mean is linear, a variance or a histogram is not).  A
// quantity an observation did not touch (a TU or function it never ran, a
// path it never took) is an observation of 0.
//
// Identity: a TU build is its stamp (runtime/ballarus_format.h), a function
// its index in that build's metadata, a block or an edge its index in the
// function, a line (TU file index, line), a path its number in the
// function's numbering (as `paths` reports it).  COMDAT copies are kept per
// TU build, as gcov keeps them per object.
//
// Everything is exact integer arithmetic and the file form is canonical, so
// combining is associative and commutative byte for byte: a combined
// profile of 2 observations combined with one of 3 writes the same bytes as
// one combined profile of the 5 (labels are kept sorted).
//
// File format: docs/DESIGN.md, "Combined profile format".  GCC-free.
#ifndef BALLARUS_CORE_COMBINED_PROFILE_H_
#define BALLARUS_CORE_COMBINED_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/combined_stats.h"
#include "core/model.h"
#include "core/profile_reader.h"

namespace ballarus {

// 8 bytes, no NUL stored; distinct from a profile's "BLRSPROF".
inline constexpr char kCombinedMagic[] = "BLRSCOMB";
inline constexpr uint32_t kCombinedVersion = 1;

// One function of one TU build.  Until some observation gives one of its
// quantities a non-zero count, `blocks` and `edges` are empty (and every
// quantity is 0 in every observation).
struct CombinedFunction {
  CombinedStats entry;                // entry count (ENTRY's real edges)
  std::vector<CombinedStats> blocks;  // parallel to Function::blocks
  std::vector<CombinedStats> edges;   // parallel to Function::edges
  // gcov's line counts of the function, by (TU file index, line).
  std::map<std::pair<uint32_t, uint32_t>, CombinedStats> lines;
  // Paths with a non-zero count in some observation, by path number.
  std::map<uint64_t, CombinedStats> paths;

  bool touched() const { return !blocks.empty(); }
};

// One TU build (stamp), with the metadata blob that describes it.
struct CombinedTu {
  uint64_t stamp = 0;
  // Sum of its records' runs over the observations (saturating).
  uint64_t runs = 0;
  std::vector<uint8_t> metadata;  // the whole blob, header included
  TranslationUnit tu;             // `metadata` decoded
  std::vector<CombinedFunction> functions;  // parallel to tu.functions
};

class CombinedProfile {
 public:
  // `bins` in [kMinBins, kMaxBins] (clamped).
  explicit CombinedProfile(unsigned bins = kDefaultBins);

  unsigned bins() const { return bins_; }
  uint64_t n() const { return n_; }  // observations
  // One per observation (an input's name or a test's), sorted bytewise.
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<CombinedTu>& tus() const { return tus_; }  // by stamp

  // Adds one observation: every TU of `obs` (decoded and solved) counts as
  // observed once; everything else is 0 in it.  False with *error (one
  // line, e.g. "a.c: function 'f': block 3: count unknown") when a count
  // cannot be determined or N would exceed 2^64 - 1; *this is then
  // unusable.
  bool AddObservation(const ProfileRecords& obs, const std::string& label,
                      std::string* error);

  // Adds the observations of `other` (same bins, else false with *error).
  bool Combine(const CombinedProfile& other, std::string* error);

  // Completes every statistic with the observations of 0 it has not seen
  // (AddZeros), so that each one's n() equals n().  Done by Serialize;
  // the reader API below assumes it.
  void Finalize();

  // A statistic of N observations of 0 (for quantities never touched).
  const CombinedStats& zero() const { return zero_; }
  // The statistic of block / edge `i` of `f`, or zero() when untouched.
  const CombinedStats& Block(const CombinedFunction& f, size_t i) const {
    return f.touched() ? f.blocks[i] : zero_;
  }
  const CombinedStats& Edge(const CombinedFunction& f, size_t i) const {
    return f.touched() ? f.edges[i] : zero_;
  }

  // The canonical file form (Finalize()s first).
  std::string Serialize();
  // Parses a whole file's bytes into *out (fresh).  False with *error, one
  // line without the file name, e.g. "offset 48: truncated: ..." .
  static bool Parse(const std::string& bytes, CombinedProfile* out,
                    std::string* error);

 private:
  friend class CombinedParser;
  CombinedTu* FindOrAddTu(uint64_t stamp, const uint8_t* blob,
                          size_t blob_size, const TranslationUnit& tu);
  bool AddCopy(const Function& fn, const FunctionCopy& copy,
               CombinedFunction* cf, std::string* error);

  unsigned bins_;
  uint64_t n_ = 0;
  std::vector<std::string> labels_;
  std::vector<CombinedTu> tus_;
  CombinedStats zero_;
};

// True when `bytes` start with kCombinedMagic (a combined profile, as
// opposed to a .bprof profile).
bool LooksCombined(const std::string& bytes);
bool FileLooksCombined(const std::string& path);

// Reads and parses the file `path` (size bounded by the file system, read
// whole); false with *error = "PATH: problem".
bool ReadCombinedProfile(const std::string& path, CombinedProfile* out,
                         std::string* error);

// A profile of the rounded means (round half up), as if one average run had
// produced them: one record per TU build (runs 1, borrowing `c`'s
// metadata, which must outlive *out), each function copy's flow the rounded
// mean edge and block counts (known, so every consumer of solved counts —
// the gcda export — reads them).  Paths are left out.
bool MeanProfile(const CombinedProfile& c, ProfileRecords* out,
                 std::string* error);

}  // namespace ballarus

#endif  // BALLARUS_CORE_COMBINED_PROFILE_H_
