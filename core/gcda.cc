// gcda.cc — GCC 12 .gcda encoding/decoding and naming; see gcda.h.
#include "core/gcda.h"

#include "core/paths.h"

#include <string>
#include <vector>

namespace ballarus {
namespace {

void PutWord(std::vector<uint8_t>* out, uint32_t w) {
  for (int i = 0; i < 4; ++i) out->push_back((w >> (8 * i)) & 0xff);
}

void PutCounter(std::vector<uint8_t>* out, uint64_t c) {
  PutWord(out, static_cast<uint32_t>(c));
  PutWord(out, static_cast<uint32_t>(c >> 32));
}

}  // namespace

std::vector<uint8_t> EncodeGcda(const GcdaFile& file) {
  std::vector<uint8_t> out;
  PutWord(&out, kGcdaMagic);
  PutWord(&out, file.version);
  PutWord(&out, file.stamp);
  PutWord(&out, file.checksum);
  PutWord(&out, kGcovTagObjectSummary);
  PutWord(&out, 8);
  PutWord(&out, file.runs);
  PutWord(&out, static_cast<uint32_t>(file.sum_max));
  for (const GcdaFunction& f : file.functions) {
    PutWord(&out, kGcovTagFunction);
    if (!f.present) {
      PutWord(&out, 0);
      continue;
    }
    PutWord(&out, 12);
    PutWord(&out, f.ident);
    PutWord(&out, f.lineno_checksum);
    PutWord(&out, f.cfg_checksum);
    PutWord(&out, kGcovTagArcs);
    bool all_zero = true;
    for (uint64_t c : f.arcs) all_zero &= c == 0;
    const uint32_t bytes = static_cast<uint32_t>(8 * f.arcs.size());
    if (all_zero) {
      // libgcov 12: "Do not stream when all counters are zero."
      PutWord(&out, static_cast<uint32_t>(-static_cast<int64_t>(bytes)));
      continue;
    }
    PutWord(&out, bytes);
    for (uint64_t c : f.arcs) PutCounter(&out, c);
  }
  PutWord(&out, 0);
  return out;
}

bool DecodeGcda(const uint8_t* data, size_t size, GcdaFile* file,
                std::string* error) {
  *file = GcdaFile();
  size_t pos = 0;
  auto fail = [&](size_t at, const std::string& what) {
    *error = "offset " + std::to_string(at) + ": " + what;
    return false;
  };
  auto word = [&](uint32_t* w) {
    if (size - pos < 4) return false;
    *w = static_cast<uint32_t>(data[pos]) |
         static_cast<uint32_t>(data[pos + 1]) << 8 |
         static_cast<uint32_t>(data[pos + 2]) << 16 |
         static_cast<uint32_t>(data[pos + 3]) << 24;
    pos += 4;
    return true;
  };
  uint32_t magic = 0, tag = 0, length = 0;
  if (!word(&magic) || magic != kGcdaMagic)
    return fail(0, "not a gcov data file");
  if (!word(&file->version) || !word(&file->stamp) || !word(&file->checksum))
    return fail(pos, "truncated header");
  GcdaFunction* current = nullptr;
  for (;;) {
    const size_t at = pos;
    if (!word(&tag)) return fail(at, "missing end marker");
    if (tag == 0) break;
    if (!word(&length)) return fail(at, "truncated record header");
    if (tag == kGcovTagObjectSummary) {
      uint32_t sum_max = 0;
      if (length != 8 || !word(&file->runs) || !word(&sum_max))
        return fail(at, "bad object summary");
      file->sum_max = sum_max;
    } else if (tag == kGcovTagFunction) {
      file->functions.emplace_back();
      current = &file->functions.back();
      if (length == 0) {
        current->present = false;
        current = nullptr;
        continue;
      }
      if (length != 12 || !word(&current->ident) ||
          !word(&current->lineno_checksum) || !word(&current->cfg_checksum))
        return fail(at, "bad function record");
    } else if (tag == kGcovTagArcs) {
      if (current == nullptr) return fail(at, "arc counters outside a function");
      const int32_t len = static_cast<int32_t>(length);
      const uint64_t bytes = len < 0 ? -static_cast<int64_t>(len) : len;
      if (bytes % 8 != 0) return fail(at, "arc record length not a multiple of 8");
      current->arcs.assign(bytes / 8, 0);
      if (len > 0) {
        if (size - pos < bytes) return fail(at, "truncated arc counters");
        for (uint64_t& c : current->arcs) {
          uint32_t lo = 0, hi = 0;
          word(&lo);
          word(&hi);
          c = static_cast<uint64_t>(hi) << 32 | lo;
        }
      }
    } else {
      return fail(at, "unexpected tag " + std::to_string(tag));
    }
  }
  if (pos != size) return fail(pos, "trailing bytes");
  return true;
}

uint32_t GcovCrc32Unsigned(uint32_t chksum, uint32_t value) {
  // gcc/tree.cc crc32_unsigned_n: CRC-32 (polynomial 0x04c11db7, no
  // reflection, no final xor), four bits at a time; syndromes[x] is the
  // xor of the feedback of each bit of x.
  struct Table {
    uint32_t s[16];
    Table() {
      for (uint32_t x = 0; x < 16; ++x) {
        s[x] = 0;
        for (uint32_t bit = 1; bit < 16; bit <<= 1)
          if (x & bit) s[x] ^= bit * 0x04c11db7u;
      }
    }
  };
  static const Table table;
  for (int ix = 8; ix--; value <<= 4) {
    const uint32_t feedback = table.s[((value ^ chksum) >> 28) & 0xf];
    chksum = (chksum << 4) ^ feedback;
  }
  return chksum;
}

uint32_t GcovObjectChecksum(const std::vector<GcdaFunction>& functions) {
  uint32_t sum = 0;
  for (const GcdaFunction& f : functions) {
    if (!f.present) continue;
    sum = GcovCrc32Unsigned(sum, f.ident);
    sum = GcovCrc32Unsigned(sum, f.lineno_checksum);
    sum = GcovCrc32Unsigned(sum, f.cfg_checksum);
  }
  return sum;
}

uint32_t GcovVersionWord(unsigned major, unsigned minor, char phase) {
  const uint8_t v[4] = {static_cast<uint8_t>('A' + major / 10),
                        static_cast<uint8_t>('0' + major % 10),
                        static_cast<uint8_t>('0' + minor),
                        static_cast<uint8_t>(phase)};
  return static_cast<uint32_t>(v[0]) << 24 | static_cast<uint32_t>(v[1]) << 16 |
         static_cast<uint32_t>(v[2]) << 8 | v[3];
}

std::string GcovVersionString(uint32_t version) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8)
    s.push_back(static_cast<char>((version >> shift) & 0xff));
  return s;
}

std::string MangleProfilePath(const std::string& path) {
  return MangleGcovPath(path);
}

std::string GcdaFileName(const std::string& aux_base_name,
                         const std::string& pwd,
                         const std::optional<std::string>& profile_dir,
                         const std::string& prefix_path,
                         std::string* warning) {
  GcovNameInputs in;
  in.aux_base = aux_base_name;
  in.pwd = pwd;
  in.profile_dir = profile_dir.value_or("");
  in.prefix_path = prefix_path;
  return GcovDataBase(in, warning) + ".gcda";
}

}  // namespace ballarus
