// Block maps (profile_io.h): counters that straddle pages, as a TU's array
// in .bss does, their block map derived from the pages the process touched
// (rt_pages.c) the way the dump derives it.  A merge, an owning copy and a
// write read and write none of the blocks the map marks zero, and give the
// exact sums.  The oracles: /proc/self/pagemap read by the test itself (a
// page never touched is not present), and the sums and the file computed
// from plain vectors without maps.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "runtime/ballarus_rt_internal.h"
}
#include "runtime/profile_test_util.h"

namespace {

using ballarus_test::Add;
using ballarus_test::Blob;
using ballarus_test::Bytes;
using ballarus_test::Empty;

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// Whether the page of p was ever touched: present or swapped out.
bool Present(const void* p) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  EXPECT_GE(fd, 0) << "no /proc/self/pagemap";
  uint64_t e = 0;
  EXPECT_EQ(pread(fd, &e, 8, (off_t)((uintptr_t)p / kPage * 8)), 8);
  close(fd);
  return ((e >> 62) & 3u) != 0;
}

// Counters that start kLead counters before a page boundary of a fresh
// mapping of kPages pages: page 0 holds counters [0, kLead), page k >= 1
// holds [kLead + 512 (k - 1), kLead + 512 k), the last page fewer.  Blocks
// of 64 counters straddle every boundary; a chunk of 512 lies on two pages.
constexpr uint64_t kLead = 37;
constexpr size_t kPages = 18;
constexpr uint64_t kN = kLead + 512 * 16 + 100;  // 8329: a mapped array

struct Straddling {
  unsigned char* base;
  uint64_t* c;
  Straddling() {
    void* m = mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(m, MAP_FAILED);
    base = static_cast<unsigned char*>(m);
    c = reinterpret_cast<uint64_t*>(base + kPage - kLead * 8);
  }
  ~Straddling() { munmap(base, kPages * kPage); }
  // The pages of the mapping the process touched.
  std::set<size_t> Touched() const {
    std::set<size_t> t;
    for (size_t k = 0; k < kPages; k++)
      if (Present(base + k * kPage)) t.insert(k);
    return t;
  }
};

// The counters counted: two in page 2 (blocks 9 and 15, inside the page;
// chunk 1 also covers counters 512..548 on page 1), two in page 17 (blocks
// 129 and 130, inside it; chunk 16 also covers 8192..8228 on page 16).
const std::vector<std::pair<uint64_t, uint64_t>> kCounted = {
    {600, 3}, {1000, 7}, {8300, 11}, {8328, UINT64_MAX}};

// The block map the dump derives (rt_dump.c copy_live): the touched pages'
// runs scanned, the block of each non-zero counter marked.
unsigned char* DerivedMap(const uint64_t* c, uint64_t n) {
  unsigned char* map = static_cast<unsigned char*>(
      calloc((n + BALLARUS_BLOCK_COUNTERS - 1) / BALLARUS_BLOCK_COUNTERS, 1));
  ballarus_rt_pagemap pm;
  ballarus_rt_pagemap_open(&pm);
  for (uint64_t lo = 0, hi; ballarus_rt_touched_run(&pm, c, n, &lo, &hi);
       lo = hi)
    for (uint64_t i = lo; i < hi; i++)
      if (c[i] != 0) map[i / BALLARUS_BLOCK_COUNTERS] = 1;
  ballarus_rt_pagemap_close(&pm);
  return map;
}

std::set<uint64_t> Marked(const unsigned char* map, uint64_t n) {
  std::set<uint64_t> m;
  for (uint64_t b = 0; b < (n + 63) / 64; b++)
    if (map[b]) m.insert(b);
  return m;
}

const std::vector<uint8_t> kBlob = Blob("/w/big.bprof", "function big", kN);

// A profile of one record of kN counters borrowed from c, map `map`.
ballarus_profile Borrowing(uint64_t* c, unsigned char* map) {
  ballarus_profile p = Empty(1);
  Add(&p, kBlob, std::vector<uint64_t>(kN, 0), 1);
  ballarus_profile_record& r = p.records[0];
  free(r.counters);
  r.counters = c;
  r.counters_borrowed = 1;
  r.block_map = map;
  return p;
}

TEST(BlockMaps, MergeReadsAndWritesOnlyLiveBlocksOnTouchedPages) {
  ASSERT_EQ(BALLARUS_BLOCK_COUNTERS, 64u);
  ASSERT_EQ(kPage, 4096u);
  Straddling src;
  for (auto [i, v] : kCounted) src.c[i] = v;
  ASSERT_EQ(src.Touched(), (std::set<size_t>{2, 17}));
  unsigned char* smap = DerivedMap(src.c, kN);
  EXPECT_EQ(Marked(smap, kN), (std::set<uint64_t>{9, 15, 129, 130}));
  ballarus_profile mine = Borrowing(src.c, smap);

  // The old profile's record: its own page-aligned array, counts in blocks
  // 9 and 15 (page 1 of it), its map marking them.
  ballarus_profile old = Empty(1);
  Add(&old, kBlob, std::vector<uint64_t>(kN, 0), 1);
  ballarus_profile_record& d = old.records[0];
  free(d.counters);
  d.counters = ballarus_profile_counters_alloc(kN, &d.counters_mapped);
  ASSERT_EQ(d.counters_mapped, 1);
  const unsigned char* dbase = reinterpret_cast<unsigned char*>(d.counters);
  d.counters[610] = 5;
  d.counters[1000] = UINT64_MAX;  // + 7: wraps to 6
  d.block_map = static_cast<unsigned char*>(calloc((kN + 63) / 64, 1));
  d.block_map[9] = d.block_map[15] = 1;

  ASSERT_EQ(ballarus_profile_record_add_counters(&d, &mine.records[0]), 0);
  const std::vector<uint8_t> merged = Bytes(old);

  // Nothing read nor written outside the live blocks: the source's pages
  // are still the two it counted in, the old array's the two counted in.
  EXPECT_EQ(src.Touched(), (std::set<size_t>{2, 17}));
  for (size_t k = 0; k * kPage < kN * 8; k++)
    EXPECT_EQ(Present(dbase + k * kPage), k == 1 || k == 16) << "page " << k;
  EXPECT_EQ(Marked(d.block_map, kN), (std::set<uint64_t>{9, 15, 129, 130}));

  // The exact sums, and the file of a record without maps holding them.
  std::vector<uint64_t> want(kN, 0);
  want[610] = 5;
  want[1000] = UINT64_MAX;
  for (auto [i, v] : kCounted) want[i] += v;
  EXPECT_EQ(std::vector<uint64_t>(d.counters, d.counters + kN), want);
  ballarus_profile oracle = Empty(1);
  Add(&oracle, kBlob, want, 1);
  EXPECT_EQ(merged, Bytes(oracle));
  ballarus_profile_free(&oracle);
  ballarus_profile_free(&old);
  ballarus_profile_free(&mine);
}

TEST(BlockMaps, OwningAndWritingReadOnlyLiveBlocks) {
  Straddling src;
  for (auto [i, v] : kCounted) src.c[i] = v;
  ballarus_profile mine = Borrowing(src.c, DerivedMap(src.c, kN));
  ballarus_profile_record& r = mine.records[0];

  // The file, written with holes where whole chunks are zero and the zero
  // blocks of live chunks written as zeros, never read.
  std::string dir = std::string(getenv("TEST_TMPDIR") != nullptr
                                    ? getenv("TEST_TMPDIR")
                                    : "/tmp");
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dfd, 0);
  char err[256] = "";
  unlinkat(dfd, "blocks.bprof", 0);
  ASSERT_EQ(ballarus_profile_write_at(dfd, "blocks.bprof", &mine, 0644, 0,
                                      err, sizeof err),
            0)
      << err;
  close(dfd);
  ASSERT_EQ(ballarus_profile_record_own_counters(&r), 0);
  EXPECT_EQ(r.counters_borrowed, 0);
  EXPECT_EQ(src.Touched(), (std::set<size_t>{2, 17}));
  // The copy (page-aligned) touched only where the live blocks lie.
  const unsigned char* own = reinterpret_cast<unsigned char*>(r.counters);
  ASSERT_EQ(r.counters_mapped, 1);
  for (size_t k = 0; k * kPage < kN * 8; k++)
    EXPECT_EQ(Present(own + k * kPage), k == 1 || k == 16) << "page " << k;

  std::vector<uint64_t> want(kN, 0);
  for (auto [i, v] : kCounted) want[i] = v;
  EXPECT_EQ(std::vector<uint64_t>(r.counters, r.counters + kN), want);
  ballarus_profile oracle = Empty(1);
  Add(&oracle, kBlob, want, 1);
  const std::vector<uint8_t> expect = Bytes(oracle);
  std::vector<uint8_t> file(expect.size() + 1);
  int fd = open((dir + "/blocks.bprof").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ssize_t got = read(fd, file.data(), file.size());
  close(fd);
  ASSERT_EQ(got, (ssize_t)expect.size());
  file.resize(expect.size());
  EXPECT_EQ(file, expect);
  ballarus_profile_free(&oracle);
  ballarus_profile_free(&mine);
}

}  // namespace
