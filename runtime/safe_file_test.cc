// safe_file_test.cc — files created safely in directories other users may
// write: the directory walk (links of other users refused, own links
// followed, missing directories created under the fd walked), the mode a
// file has from its creation on, planted names never followed, temporary
// files of dead writers removed, names not ours to replace told apart, %p
// and %% expanded.  Links "of another user" are lchown'ed to
// nobody, which needs root: those tests skip, saying so, otherwise.
#include "runtime/safe_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const uid_t kNobody = 65534;

std::string Fresh(const std::string& name) {
  const char* t = getenv("TEST_TMPDIR");
  std::string dir = std::string(t != nullptr ? t : "/tmp") + "/sf_" + name;
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A pid that no longer exists: a child that has exited and been reaped.
long DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(SafeFile, WritesAtomicallyWithTheModeAskedFor) {
  const std::string dir = Fresh("write");
  char err[512] = "";
  mode_t old = umask(022);
  ASSERT_EQ(ballarus_sf_write_file((dir + "/f").c_str(), "abc", 3, 0666, 0,
                                   err, sizeof err),
            0)
      << err;
  EXPECT_EQ(Read(dir + "/f"), "abc");
  EXPECT_EQ(ModeOf(dir + "/f"), 0644u);
  // Replaced whole; nothing else left in the directory.
  ASSERT_EQ(ballarus_sf_write_file((dir + "/f").c_str(), "de", 2, 0600, 0,
                                   err, sizeof err),
            0)
      << err;
  EXPECT_EQ(Read(dir + "/f"), "de");
  EXPECT_EQ(ModeOf(dir + "/f"), 0600u);
  // EXACT_MODE widens what the umask narrowed.
  umask(077);
  ASSERT_EQ(ballarus_sf_write_file((dir + "/g").c_str(), "x", 1, 0640,
                                   BALLARUS_SF_EXACT_MODE, err, sizeof err),
            0)
      << err;
  EXPECT_EQ(ModeOf(dir + "/g"), 0640u);
  umask(old);
  std::string ls;
  FILE* p = popen(("ls -A '" + dir + "'").c_str(), "r");
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) ls += buf;
  pclose(p);
  EXPECT_EQ(ls, "f\ng\n");
}

TEST(SafeFile, ATemporaryFileHasItsFinalModeFromItsCreation) {
  const std::string dir = Fresh("tmpmode");
  mode_t old = umask(022);
  ballarus_sf_tx tx;
  char err[512] = "";
  ASSERT_GE(ballarus_sf_begin(&tx, (dir + "/p").c_str(), 0600, 0, err,
                              sizeof err),
            0)
      << err;
  // Nothing written yet: nobody else may open it already.
  struct stat st;
  ASSERT_EQ(fstat(tx.fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(std::string(tx.tmp).rfind("p.tmp." + std::to_string(getpid()) +
                                          ".",
                                      0),
            0u)
      << tx.tmp;
  ASSERT_EQ(ballarus_sf_write_all(tx.fd, "z", 1), 0);
  ASSERT_EQ(ballarus_sf_finish(&tx, err, sizeof err), 0) << err;
  EXPECT_EQ(ModeOf(dir + "/p"), 0600u);
  umask(old);
}

TEST(SafeFile, APlantedLinkAtTheNameIsReplacedNeverFollowed) {
  const std::string dir = Fresh("planted");
  Write(dir + "/victim", "victim\n");
  ASSERT_EQ(symlink("victim", (dir + "/out").c_str()), 0);
  // And this process's next temporary names, planted too.
  for (int n = 1; n <= 3; n++)
    ASSERT_EQ(symlink("victim", (dir + "/out.tmp." + std::to_string(getpid()) +
                                 "." + std::to_string(n))
                                    .c_str()),
              0);
  char err[512] = "";
  ASSERT_EQ(ballarus_sf_write_file((dir + "/out").c_str(), "new", 3, 0644, 0,
                                   err, sizeof err),
            0)
      << err;
  EXPECT_EQ(Read(dir + "/victim"), "victim\n");
  struct stat st;
  ASSERT_EQ(lstat((dir + "/out").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(Read(dir + "/out"), "new");
  // create never opens an existing name.
  int fd = ballarus_sf_create(open(dir.c_str(), O_RDONLY | O_DIRECTORY),
                              "victim", 0600, 0, err, sizeof err);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(errno, EEXIST);
}

TEST(SafeFile, MissingDirectoriesAreCreatedWithTheModeGiven) {
  const std::string dir = Fresh("mkdir");
  mode_t old = umask(022);
  char err[512] = "";
  int fd = ballarus_sf_open_dir((dir + "/a/b/./c").c_str(), BALLARUS_SF_MKDIR,
                                0700, err, sizeof err);
  ASSERT_GE(fd, 0) << err;
  close(fd);
  EXPECT_EQ(ModeOf(dir + "/a"), 0700u);
  EXPECT_EQ(ModeOf(dir + "/a/b/c"), 0700u);
  // Without the flag a missing directory is an error naming it.
  fd = ballarus_sf_open_dir((dir + "/x/y").c_str(), 0, 0700, err, sizeof err);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(std::string(err), "cannot open directory " + dir +
                                  "/x: No such file or directory");
  // Relative paths start at the working directory.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  const char* name = nullptr;
  fd = ballarus_sf_open_parent("r/s/file", BALLARUS_SF_MKDIR, 0755, &name, err,
                               sizeof err);
  EXPECT_GE(fd, 0) << err;
  EXPECT_STREQ(name, "file");
  if (fd >= 0) close(fd);
  EXPECT_EQ(chdir(cwd), 0);
  EXPECT_EQ(ModeOf(dir + "/r/s"), 0755u);
  umask(old);
}

TEST(SafeFile, OwnLinksAreFollowed) {
  const std::string dir = Fresh("ownlink");
  ASSERT_EQ(mkdir((dir + "/real").c_str(), 0755), 0);
  ASSERT_EQ(symlink("real", (dir + "/link").c_str()), 0);
  ASSERT_EQ(symlink((dir + "/link").c_str(), (dir + "/abs").c_str()), 0);
  char err[512] = "";
  ASSERT_EQ(ballarus_sf_write_file((dir + "/abs/sub/f").c_str(), "1", 1, 0644,
                                   BALLARUS_SF_MKDIR, err, sizeof err),
            0)
      << err;
  EXPECT_EQ(Read(dir + "/real/sub/f"), "1");
  // A loop of links ends.
  ASSERT_EQ(symlink("loop2", (dir + "/loop1").c_str()), 0);
  ASSERT_EQ(symlink("loop1", (dir + "/loop2").c_str()), 0);
  EXPECT_EQ(ballarus_sf_open_dir((dir + "/loop1").c_str(), 0, 0755, err,
                                 sizeof err),
            -1);
  EXPECT_NE(std::string(err).find("too many symbolic links"),
            std::string::npos)
      << err;
}

TEST(SafeFile, ALinkOfAnotherUserIsNotFollowedNorCreatedThrough) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to lchown a link to nobody";
  const std::string dir = Fresh("otherlink");
  ASSERT_EQ(mkdir((dir + "/victim").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir + "/shared").c_str(), 01777), 0);
  ASSERT_EQ(chmod((dir + "/shared").c_str(), 01777), 0);
  const std::string link = dir + "/shared/mdir";
  ASSERT_EQ(symlink((dir + "/victim").c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), kNobody, kNobody), 0);
  char err[512] = "";
  EXPECT_EQ(ballarus_sf_write_file((link + "/sub/p.bprof").c_str(), "x", 1,
                                   0600, BALLARUS_SF_MKDIR, err, sizeof err),
            -1);
  EXPECT_EQ(std::string(err),
            link + " is a symbolic link of uid 65534, not followed");
  EXPECT_FALSE(Exists(dir + "/victim/sub"));
  // Root's own link there is followed.
  ASSERT_EQ(lchown(link.c_str(), 0, 0), 0);
  EXPECT_EQ(ballarus_sf_write_file((link + "/sub/p.bprof").c_str(), "x", 1,
                                   0600, BALLARUS_SF_MKDIR, err, sizeof err),
            0)
      << err;
  EXPECT_EQ(Read(dir + "/victim/sub/p.bprof"), "x");
}

TEST(SafeFile, TemporaryFilesOfDeadWritersAreRemoved) {
  const std::string dir = Fresh("orphans");
  const long dead = DeadPid();
  const std::string orphan = "p.tmp." + std::to_string(dead) + ".7";
  const std::string mine = "p.tmp." + std::to_string(getpid()) + ".1";
  const std::string link = "p.tmp." + std::to_string(dead) + ".8";
  const std::string other = "q.tmp." + std::to_string(dead) + ".1";
  const std::string odd = "p.tmp." + std::to_string(dead) + ".x";
  for (const std::string& n : {orphan, mine, other, odd}) Write(dir + "/" + n, "");
  ASSERT_EQ(symlink("p", (dir + "/" + link).c_str()), 0);
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dfd, 0);
  const char* names[] = {"p"};
  std::string seen;
  auto removed = [](void* ctx, const char* name, long pid) {
    *static_cast<std::string*>(ctx) +=
        std::string(name) + " " + std::to_string(pid) + "\n";
  };
  EXPECT_EQ(ballarus_sf_remove_orphans(dfd, names, 1, removed, &seen), 1);
  close(dfd);
  EXPECT_EQ(seen, orphan + " " + std::to_string(dead) + "\n");
  EXPECT_FALSE(Exists(dir + "/" + orphan));
  EXPECT_TRUE(Exists(dir + "/" + mine));   // this process's own
  EXPECT_TRUE(Exists(dir + "/" + link));   // not a file anyone wrote
  EXPECT_TRUE(Exists(dir + "/" + other));  // another name's
  EXPECT_TRUE(Exists(dir + "/" + odd));    // not a temporary name
}

TEST(SafeFile, APathNamingADirectoryIsRefused) {
  char err[512] = "";
  const char* name = nullptr;
  EXPECT_EQ(ballarus_sf_open_parent("/tmp/", 0, 0755, &name, err, sizeof err),
            -1);
  EXPECT_EQ(std::string(err), "/tmp/ names a directory, not a file");
  EXPECT_EQ(ballarus_sf_open_parent("a/..", 0, 0755, &name, err, sizeof err),
            -1);
}


// Expansions written out by hand.
TEST(SafeFile, ExpandsThePidAndPercent) {
  struct Case {
    const char* tmpl;
    long pid;
    const char* want;
    unsigned pids;
  };
  for (const Case& c : {Case{"t.%p", 4321, "t.4321", 1},
                        Case{"%p/%p", 7, "7/7", 2},
                        Case{"a%%p%%%p", 0, "a%p%0", 1},
                        Case{"%x%", 12, "%x%", 0},
                        Case{"%", 12, "%", 0},
                        Case{"", 12, "", 0},
                        Case{"n-%p", -5, "n--5", 1}}) {
    char out[64];
    unsigned pids = 99;
    size_t n = ballarus_sf_expand_pid(c.tmpl, c.pid, out, sizeof out, &pids);
    EXPECT_EQ(std::string(out), c.want) << c.tmpl;
    EXPECT_EQ(n, strlen(c.want)) << c.tmpl;
    EXPECT_EQ(pids, c.pids) << c.tmpl;
    EXPECT_EQ(ballarus_sf_expand_pid(c.tmpl, c.pid, nullptr, 0, nullptr), n)
        << c.tmpl;
  }
  // Cut to the room given, always terminated; the length is the whole's.
  char small[5] = "zzzz";
  EXPECT_EQ(ballarus_sf_expand_pid("ab%p", 123456, small, sizeof small,
                                   nullptr),
            8u);
  EXPECT_EQ(std::string(small), "ab12");
}

TEST(SafeFile, OnlyAbsentNamesOrOwnRegularFilesAreOurs) {
  const std::string dir = Fresh("notours");
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dfd, 0);
  Write(dir + "/own", "x");
  ASSERT_EQ(chmod((dir + "/own").c_str(), 0640), 0);
  ASSERT_EQ(symlink("own", (dir + "/link").c_str()), 0);
  ASSERT_EQ(mkdir((dir + "/dir").c_str(), 0700), 0);
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  int mode = 0;
  EXPECT_EQ(ballarus_sf_not_ours(dfd, "absent", &mode), nullptr);
  EXPECT_EQ(mode, -1);
  EXPECT_EQ(ballarus_sf_not_ours(dfd, "own", &mode), nullptr);
  EXPECT_EQ(mode, 0640);
  EXPECT_STREQ(ballarus_sf_not_ours(dfd, "link", &mode), "is a symbolic link");
  EXPECT_EQ(mode, -1);
  EXPECT_STREQ(ballarus_sf_not_ours(dfd, "dir", nullptr),
               "is not a regular file");
  EXPECT_STREQ(ballarus_sf_not_ours(dfd, "fifo", nullptr),
               "is not a regular file");
  if (geteuid() == 0) {
    ASSERT_EQ(chown((dir + "/own").c_str(), kNobody, kNobody), 0);
    EXPECT_STREQ(ballarus_sf_not_ours(dfd, "own", nullptr),
                 "belongs to another user");
  }
  close(dfd);
}

}  // namespace
