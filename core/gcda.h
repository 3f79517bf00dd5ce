// gcda.h — GCC 12's .gcda (gcov data) file: encoding, decoding, and the
// rules GCC uses to name it.  GCC-free.
//
// Layout (gcc/gcov-io.h; libgcc/libgcov-driver.c write_one_data of GCC 12;
// every word a little-endian uint32 on x86-64, a counter two words, low
// first; record lengths in BYTES since GCC 12):
//
//   file      := "gcda" magic  version  stamp  checksum
//                summary  function*  0
//   summary   := 0xa1000000  8  runs  sum_max          (both uint32)
//   function  := 0x01000000  12  ident  lineno_checksum  cfg_checksum
//                0x01a10000  length  counter*           (arc counters)
//              | 0x01000000  0      (present in the object, not in this
//                                    program: libgcov's COMDAT non-key copy)
//   length    = 8 * n_counters, or -(8 * n_counters) as uint32 with no
//               counters following when they are all zero
//
// What -fprofile-use (gcc/coverage.cc read_counts_file, get_coverage_counts)
// checks: magic and version (else a warning and no profile); per function
// the ident, the cfg_checksum and the number of counters (else
// -Wcoverage-mismatch and the function is compiled without profile), the
// lineno_checksum (else a -Wcoverage-mismatch warning, profile still used).
// The stamp is only mixed into the stamp of a .gcno written by the same
// compile and the checksum is read and ignored: neither changes the code
// (checked: a .gcda with another stamp and checksum gives a byte-identical
// object).  libgcov, merging a run into an existing .gcda, overwrites the
// file when the stamp differs from its object's ("overwriting an existing
// profile data with a different timestamp").
//
// The summary: libgcov adds 1 to runs and this run's largest arc counter
// over the whole module (executable or shared object) to sum_max, at each
// process exit, into every .gcda of the module; sum_max is stored modulo
// 2^32.  -fprofile-use reads it as profile_info: sum_max / param
// hot-bb-count-fraction is the hot-block threshold, runs bounds what counts
// as never executed.
#ifndef BALLARUS_CORE_GCDA_H_
#define BALLARUS_CORE_GCDA_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ballarus {

inline constexpr uint32_t kGcdaMagic = 0x67636461;  // "gcda"
inline constexpr uint32_t kGcovTagFunction = 0x01000000;
inline constexpr uint32_t kGcovTagArcs = 0x01a10000;
inline constexpr uint32_t kGcovTagObjectSummary = 0xa1000000;

struct GcdaFunction {
  uint32_t ident = 0;
  uint32_t lineno_checksum = 0;
  uint32_t cfg_checksum = 0;
  // false: written as an empty FUNCTION record (no data for it here).
  bool present = true;
  std::vector<uint64_t> arcs;  // arc counters, in gcov's counter order
};

struct GcdaFile {
  uint32_t version = 0;   // GCOV_VERSION, e.g. GcovVersionWord(12, 2, '*')
  uint32_t stamp = 0;
  uint32_t checksum = 0;  // GcovObjectChecksum of the object's functions
  uint32_t runs = 0;
  uint64_t sum_max = 0;   // written modulo 2^32
  std::vector<GcdaFunction> functions;
};

std::vector<uint8_t> EncodeGcda(const GcdaFile& file);

// Parses a .gcda with arc counters only (what -fprofile-arcs writes).  On
// failure returns false with *error = "offset N: problem".
bool DecodeGcda(const uint8_t* data, size_t size, GcdaFile* file,
                std::string* error);

// GCC's crc32_unsigned (gcc/tree.cc crc32_unsigned_n, 4 bytes).
uint32_t GcovCrc32Unsigned(uint32_t chksum, uint32_t value);

// coverage.cc coverage_finish: the crc32 chain over (ident,
// lineno_checksum, cfg_checksum) of every function with counters, in
// order.  Empty records (present == false) never occur in a compile's own
// list and are skipped.
uint32_t GcovObjectChecksum(const std::vector<GcdaFunction>& functions);

// The GCOV_VERSION word of GCC major.minor (gcc/gcov-iov.cc): 'A' + major
// / 10, '0' + major % 10, '0' + minor, then '*' for a release, 'e' for an
// experimental, 'p' for a prerelease build; stored so that the file's
// first bytes read "adcg" then the version backwards ("*22B" for 12.2).
uint32_t GcovVersionWord(unsigned major, unsigned minor, char phase);
// "B22*" for GcovVersionWord(12, 2, '*').
std::string GcovVersionString(uint32_t version);

// mangle_path (gcc/gcov-io.cc): '/' becomes '#', a ".." component '^'
// (core/paths.h MangleGcovPath).
std::string MangleProfilePath(const std::string& path);

// coverage_init's da_file_name: where a compile whose aux_base_name (the
// output name without its extension) is `aux_base_name`, in working
// directory `pwd`, reads and -fprofile-arcs writes the .gcda:
//   * aux_base_name absolute: [PROFILE_DIR/]AUX.gcda;
//   * relative, no profile dir: PWD/AUX.gcda;
//   * relative, with -fprofile-dir=PROFILE_DIR (also -fprofile-use=DIR):
//     PROFILE_DIR/MANGLED.gcda, MANGLED = mangle_path(PWD/AUX) after
//     removing a leading `prefix_path` (-fprofile-prefix-path) and the
//     slashes after it; when PWD/AUX does not start with prefix_path GCC
//     warns and keeps it whole (*warning set).
// Computed by core/paths.h GcovDataBase, as the .bprof's name is (an empty
// profile_dir counts as none), so the two can never disagree.
std::string GcdaFileName(const std::string& aux_base_name,
                         const std::string& pwd,
                         const std::optional<std::string>& profile_dir,
                         const std::string& prefix_path,
                         std::string* warning = nullptr);

}  // namespace ballarus

#endif  // BALLARUS_CORE_GCDA_H_
