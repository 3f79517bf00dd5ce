// profile_test_util.h — hand-made profiles for the tests of the profile
// codec (profile_io_test.cc, profile_named_test.cc): metadata blobs,
// records, serialisation, and the resealing of edited bytes with
// ballarus_format.h's checks written out independently of the codec.
#ifndef BALLARUS_RUNTIME_PROFILE_TEST_UTIL_H_
#define BALLARUS_RUNTIME_PROFILE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/profile_io.h"

namespace ballarus_test {

// A metadata blob of the TU whose profile path is `profile` (its identity),
// with an arbitrary body after the names block.
inline std::vector<uint8_t> Blob(const std::string& profile, const std::string& body,
                          uint64_t n_counters,
                          uint32_t version = BALLARUS_META_VERSION) {
  const std::string names = profile + '\0' + profile + ".o" + '\0' + "src.c" +
                            '\0' + "/w" + '\0';
  const std::string all = names + body;
  ballarus_meta_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, BALLARUS_META_MAGIC, 8);
  h.version = version;
  h.header_size = BALLARUS_META_HEADER_SIZE;
  h.stamp = ballarus_hash64(all.data(), all.size());
  h.size = BALLARUS_META_HEADER_SIZE + all.size();
  h.n_counters = n_counters;
  h.identity = ballarus_tu_identity(profile.c_str(), "/w", "src.c");
  h.flags = BALLARUS_META_F_NAIVE;
  h.names_size = static_cast<uint32_t>(names.size());
  std::vector<uint8_t> out(sizeof h + all.size());
  memcpy(out.data(), &h, sizeof h);
  memcpy(out.data() + sizeof h, all.data(), all.size());
  return out;
}

inline uint64_t IdentityOf(const std::string& profile) {
  return ballarus_hash64(profile.data(), profile.size());
}

template <typename T>
T* Dup(const std::vector<T>& v) {
  T* p = static_cast<T*>(malloc(v.size() * sizeof(T) + 1));
  if (!v.empty()) memcpy(p, v.data(), v.size() * sizeof(T));
  return p;
}

// Appends a record (malloc'd, so ballarus_profile_free owns it).
inline void Add(ballarus_profile* p, const std::vector<uint8_t>& blob,
         const std::vector<uint64_t>& counters, uint64_t runs,
         const std::vector<ballarus_sparse_entry>& sparse = {}) {
  ballarus_meta_header h;
  memcpy(&h, blob.data(), sizeof h);
  ASSERT_EQ(h.n_counters, counters.size());
  p->records = static_cast<ballarus_profile_record*>(
      realloc(p->records, (p->n_records + 1) * sizeof *p->records));
  ballarus_profile_record& r = p->records[p->n_records++];
  memset(&r, 0, sizeof r);
  r.stamp = h.stamp;
  r.identity = h.identity;
  r.runs = runs;
  r.metadata = Dup(blob);
  r.meta_size = blob.size();
  r.counters = Dup(counters);
  r.n_counters = counters.size();
  r.sparse = Dup(sparse);
  r.n_sparse = sparse.size();
}

inline ballarus_profile Empty(uint64_t runs) {
  ballarus_profile p;
  memset(&p, 0, sizeof p);
  p.runs = runs;
  return p;
}

inline std::vector<uint8_t> Bytes(const ballarus_profile& p) {
  unsigned char* buf = nullptr;
  uint64_t size = 0;
  char err[256] = "";
  EXPECT_EQ(ballarus_profile_serialize(&p, &buf, &size, err, sizeof err), 0)
      << err;
  std::vector<uint8_t> out(buf, buf + size);
  free(buf);
  return out;
}

inline const std::vector<uint8_t> kA = Blob("/w/a.bprof", "function alpha", 3);
inline const std::vector<uint8_t> kB = Blob("/w/b.bprof", "function beta, eight+", 1);
// Another build of A's TU: same identity, other body.
inline const std::vector<uint8_t> kA2 = Blob("/w/a.bprof", "function alpha v2", 3);

inline uint64_t StampOf(const std::vector<uint8_t>& blob) {
  ballarus_meta_header h;
  memcpy(&h, blob.data(), sizeof h);
  return h.stamp;
}

// Two records, one with sparse entries: the small valid file of the
// truncation and bit-flip tests.
inline ballarus_profile Sample() {
  ballarus_profile p = Empty(4);
  Add(&p, kA, {1, 2, 3}, 4);
  Add(&p, kB, {UINT64_MAX}, 2, {{1, 7, 70}, {2, 0, 5}});
  return p;
}

inline const ballarus_profile_record* Find(const ballarus_profile& p,
                                    uint64_t stamp) {
  for (uint32_t i = 0; i < p.n_records; i++)
    if (p.records[i].stamp == stamp) return &p.records[i];
  return nullptr;
}

inline std::vector<uint64_t> Counters(const ballarus_profile_record* r) {
  return std::vector<uint64_t>(r->counters, r->counters + r->n_counters);
}

inline void Write(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), b.size());
}

// Parses and expects failure with an "offset N: " prefix, N <= limit.
inline std::string ExpectRejected(const std::vector<uint8_t>& bytes, uint64_t limit) {
  ballarus_profile p;
  char err[512] = "";
  EXPECT_EQ(ballarus_profile_parse(bytes.data(), bytes.size(), &p, err,
                                   sizeof err),
            -1);
  std::string e = err;
  EXPECT_EQ(e.rfind("offset ", 0), 0u) << e;
  unsigned long long off = strtoull(e.c_str() + 7, nullptr, 10);
  EXPECT_LE(off, limit) << e;
  EXPECT_NE(e.find(": ", 7), std::string::npos) << e;
  return e;
}

// Rewrites the header check after editing header fields, so the check
// under test (not the header check) is what fires.
inline void Reseal(std::vector<uint8_t>* b) {
  uint64_t h = ballarus_hash64(b->data(), 32);
  memcpy(b->data() + 32, &h, 8);
}

// One step of ballarus_hash64 (ballarus_format.h).
inline uint64_t HashWord(uint64_t h, uint64_t w) {
  h = (h ^ w) * BALLARUS_HASH_MUL;
  return h ^ (h >> 32);
}

// The counters' part of a version 4 record check, from h: per chunk of 512
// counters (the last shorter) four lanes, counter i into lane i % 4 (lane
// j from BALLARUS_HASH_INIT ^ j), folded in order from BALLARUS_HASH_INIT;
// each chunk's result folded into h.
inline uint64_t HashCountersByChunk(uint64_t h, const uint8_t* counters,
                                    uint64_t n) {
  for (uint64_t lo = 0; lo < n; lo += 512) {
    uint64_t lane[4];
    for (uint64_t j = 0; j < 4; j++) lane[j] = BALLARUS_HASH_INIT ^ j;
    for (uint64_t i = lo; i < n && i < lo + 512; i++) {
      uint64_t w;
      memcpy(&w, counters + 8 * i, 8);
      lane[(i - lo) % 4] = HashWord(lane[(i - lo) % 4], w);
    }
    uint64_t c = BALLARUS_HASH_INIT;
    for (uint64_t j = 0; j < 4; j++) c = HashWord(c, lane[j]);
    h = HashWord(h, c);
  }
  return h;
}

// Rewrites every record's check, the file check and the header check of a
// structurally sound file (ballarus_format.h's definitions; the record
// checks of its version: 2 and 3 word by word, 4 and 5 by chunk).
inline void ResealAll(std::vector<uint8_t>* b) {
  uint32_t version;
  memcpy(&version, b->data() + 8, 4);
  uint32_t n;
  memcpy(&n, b->data() + 12, 4);
  size_t off = 40;
  uint64_t file = BALLARUS_HASH_INIT;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t stamp, meta, nc, ns;
    memcpy(&stamp, b->data() + off + 8, 8);
    memcpy(&meta, b->data() + off + 16, 8);
    memcpy(&nc, b->data() + off + 24, 8);
    memcpy(&ns, b->data() + off + 32, 8);
    const size_t m = off + 56, c = m + (meta + 7) / 8 * 8, sp = c + 8 * nc;
    uint64_t check = ballarus_hash64(b->data() + off, 48);
    check = ballarus_hash64_update(check, b->data() + m, 56);
    if (version >= 4) {
      check = HashCountersByChunk(check, b->data() + c, nc);
      check = ballarus_hash64_update(check, b->data() + sp, 24 * ns);
    } else {
      check = ballarus_hash64_update(check, b->data() + c, 8 * nc + 24 * ns);
    }
    memcpy(b->data() + off + 48, &check, 8);
    unsigned char cs[16];
    memcpy(cs, &check, 8);
    memcpy(cs + 8, &stamp, 8);
    file = ballarus_hash64_update(file, cs, 16);
    off = sp + 24 * ns;
  }
  memcpy(b->data() + 24, &file, 8);
  Reseal(b);
}

}  // namespace ballarus_test

#endif  // BALLARUS_RUNTIME_PROFILE_TEST_UTIL_H_
