// The redo log (rt_redo.c) written by a gather write of its pieces: bytes
// lent from a buffer (not copied), bytes copied, zero runs; more pieces than
// one system call takes; lent bytes owned before their buffer is reused.
// The oracle: a model of each file (its bytes, every range written into
// it in order), compared with the file after the log, committed into a lock
// file, is replayed from that file by the next holder, or applied from
// memory.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "runtime/ballarus_rt_internal.h"
}

namespace {

typedef std::vector<unsigned char> Bytes;

std::string FreshDir() {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string d = std::string(tmp != nullptr ? tmp : "/tmp") + "/redoXXXXXX";
  EXPECT_NE(mkdtemp(&d[0]), nullptr);
  return d;
}

void WriteFile(const std::string& path, const Bytes& b) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, b.data(), b.size()), (ssize_t)b.size());
  close(fd);
}

Bytes ReadFile(const std::string& path) {
  Bytes b;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return b;
  unsigned char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) b.insert(b.end(), buf, buf + n);
  close(fd);
  return b;
}

// A file's entry in the log and in the model at once.
struct Target {
  ballarus_redo* r;
  Bytes model;
  void Add(uint64_t off, const unsigned char* p, uint64_t n) {
    ASSERT_EQ(ballarus_redo_add(r, off, p, n), 0);
    if (model.size() < off + n) model.resize(off + n, 0);
    for (uint64_t i = 0; i < n; i++) model[off + i] = p != nullptr ? p[i] : 0;
  }
};

Bytes Pattern(size_t n, unsigned seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131 + seed * 7 + i / 251);
  return b;
}

// Builds a log of two files, a and b: a's new bytes mostly lent from
// `lent_a` (then owned, and the buffer overwritten as the next file's read
// would), b's lent from `lent_b`.  Returns the models.
void BuildLog(ballarus_redo* r, Bytes* lent_a, Bytes* lent_b, Bytes* a,
              Bytes* b) {
  const Bytes old_a = *a, old_b = *b;
  Target ta{r, *a}, tb{r, *b};
  ASSERT_EQ(ballarus_redo_begin_file(r, "a", 0, 0, -1), 0);
  ballarus_redo_lend(r, lent_a->data(), lent_a->size());
  unsigned char copied[40];
  for (unsigned i = 0; i < sizeof copied; i++) copied[i] = (unsigned char)(200 + i);
  // 600 separate lent ranges (1800 pieces: more than one gather write
  // takes), each continued by the next bytes of the same memory (joined)
  // and followed by copied bytes, and every tenth by a zero run.
  for (uint64_t k = 0; k < 600; k++) {
    const uint64_t off = 64 + k * 1000;
    ta.Add(off, lent_a->data() + off, 24 + k % 50);
    ta.Add(off + 24 + k % 50, lent_a->data() + off + 24 + k % 50, 16);
    ta.Add(off + 40 + k % 50, copied, 1 + k % 40);
    if (k % 10 == 0) ta.Add(off + 120, nullptr, 300);
  }
  // Shorter than a pointer, and past the old end.
  ta.Add(610000, lent_a->data() + 3, 5);
  ta.Add(old_a.size() + 10, lent_a->data() + 100, 4000);
  ballarus_redo_set_size(r, ta.model.size());
  ASSERT_EQ(ballarus_redo_own(r), 0);
  for (auto& c : *lent_a) c = 0x5a;  // the next file read into it
  ASSERT_EQ(ballarus_redo_begin_file(r, "b", 0, 0, -1), 0);
  ballarus_redo_lend(r, lent_b->data(), lent_b->size());
  for (uint64_t k = 0; k < 50; k++)
    tb.Add(k * 3000, lent_b->data() + k * 3000 + 1, 500 + k);
  tb.Add(200000, copied, 7);
  ballarus_redo_set_size(r, old_b.size());
  tb.model.resize(old_b.size());
  ASSERT_FALSE(r->failed);
  *a = ta.model;
  *b = tb.model;
}

struct Fixture {
  std::string dir;
  Bytes lent_a = Pattern(700000, 1), lent_b = Pattern(300000, 2);
  Bytes a = Pattern(620000, 3), b = Pattern(250000, 4);
  Bytes old_a = a, old_b = b;
  ballarus_redo r;
  int dfd = -1, lfd = -1;
  Fixture() {
    memset(&r, 0, sizeof r);
    dir = FreshDir();
    WriteFile(dir + "/a", a);
    WriteFile(dir + "/b", b);
    dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    lfd = open((dir + "/lock").c_str(), O_RDWR | O_CREAT, 0600);
  }
  ~Fixture() {
    ballarus_redo_free(&r);
    close(lfd);
    close(dfd);
  }
};

TEST(RedoLog, AGatherWrittenLogIsReplayedByTheNextHolder) {
  Fixture f;
  BuildLog(&f.r, &f.lent_a, &f.lent_b, &f.a, &f.b);
  ASSERT_EQ(ballarus_redo_commit(f.lfd, &f.r), 0);
  // The lock file: the header, then exactly the entries' bytes.
  EXPECT_EQ(ReadFile(f.dir + "/lock").size(), 64 + f.r.size);
  // Killed here: the next holder replays the committed log.
  EXPECT_EQ(ballarus_redo_recover(f.dfd, f.dir.c_str(), f.lfd, 0), 0);
  EXPECT_TRUE(ReadFile(f.dir + "/a") == f.a);
  EXPECT_TRUE(ReadFile(f.dir + "/b") == f.b);
  // Cleared: a second holder changes nothing.
  WriteFile(f.dir + "/a", f.old_a);
  EXPECT_EQ(ballarus_redo_recover(f.dfd, f.dir.c_str(), f.lfd, 0), 0);
  EXPECT_TRUE(ReadFile(f.dir + "/a") == f.old_a);
}

TEST(RedoLog, AGatherWrittenLogIsAppliedFromMemory) {
  Fixture f;
  BuildLog(&f.r, &f.lent_a, &f.lent_b, &f.a, &f.b);
  ASSERT_EQ(ballarus_redo_commit(f.lfd, &f.r), 0);
  uint64_t at = 0;
  const char* names[] = {"a", "b"};
  const Bytes* old[] = {&f.old_a, &f.old_b};
  for (int i = 0; i < 2; i++) {
    int fd = -1, wrote = 0;
    char err[256] = "";
    ASSERT_EQ(ballarus_redo_apply(f.dfd, &f.r, &at, &fd, old[i]->size(),
                                  names[i], &wrote, err, sizeof err),
              0)
        << err;
    EXPECT_EQ(wrote, 1);
    close(fd);
  }
  EXPECT_TRUE(ReadFile(f.dir + "/a") == f.a);
  EXPECT_TRUE(ReadFile(f.dir + "/b") == f.b);
}

TEST(RedoLog, ALogWhoseEntriesDoNotMatchTheirHashIsDropped) {
  Fixture f;
  BuildLog(&f.r, &f.lent_a, &f.lent_b, &f.a, &f.b);
  ASSERT_EQ(ballarus_redo_commit(f.lfd, &f.r), 0);
  // One byte of the entries (in b's lent bytes, near the end) changed.
  const off_t at = (off_t)(64 + f.r.size - 100);
  unsigned char c;
  ASSERT_EQ(pread(f.lfd, &c, 1, at), 1);
  c ^= 1;
  ASSERT_EQ(pwrite(f.lfd, &c, 1, at), 1);
  EXPECT_EQ(ballarus_redo_recover(f.dfd, f.dir.c_str(), f.lfd, 0), 0);
  EXPECT_TRUE(ReadFile(f.dir + "/a") == f.old_a);
  EXPECT_TRUE(ReadFile(f.dir + "/b") == f.old_b);
}

}  // namespace
