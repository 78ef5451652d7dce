#include "core/temp_files.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/io_guard.h"
#include "core/signals.h"

namespace blkrr {
namespace {

namespace fs = std::filesystem;

class TempFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/blkrr-tempfiles-XXXXXX";
    ASSERT_NE(::mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_)) v.push_back(e.path().filename().string());
    return v;
  }
  std::string out() const { return dir_ + "/out.csv"; }

  // Runs `body` in a child process (from a state with the default signal
  // actions); its wait status.
  static int in_child(const std::function<void()>& body) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
      body();
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
  }

  std::string dir_;
};

// An AtomicFile with some bytes written, left open (its destructor never runs:
// the child ends by a signal or _exit).
AtomicFile* writing(const std::string& path) {
  auto f = AtomicFile::create(path);
  if (!f) _exit(90);
  auto* kept = new AtomicFile(std::move(*f));
  if (::write(kept->fd(), "partial\n", 8) != 8) _exit(91);
  return kept;
}

TEST_F(TempFiles, TheTableFollowsCreateCommitAndAbort) {
  const int before = temp_files::live();
  {
    auto f = AtomicFile::create(out());
    ASSERT_TRUE(f);
    EXPECT_EQ(temp_files::live(), before + 1);
    AtomicFile moved = std::move(*f);
    EXPECT_EQ(temp_files::live(), before + 1);
    ASSERT_TRUE(moved.commit());
    EXPECT_EQ(temp_files::live(), before);
  }
  {
    auto f = AtomicFile::create(out());
    ASSERT_TRUE(f);
    EXPECT_EQ(temp_files::live(), before + 1);
    f->abort();
    EXPECT_EQ(temp_files::live(), before);
  }
  { ASSERT_TRUE(AtomicFile::create(out())); }  // destroyed without commit
  EXPECT_EQ(temp_files::live(), before);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.csv"});
}

TEST_F(TempFiles, UnlinkAllRemovesEveryLiveTemporary) {
  std::string a = dir_ + "/.a.XXXXXX", b = dir_ + "/.b.XXXXXX";
  auto ma = temp_files::make(a);
  auto mb = temp_files::make(b);
  ASSERT_TRUE(ma && mb);
  EXPECT_EQ(entries().size(), 2u);
  EXPECT_EQ(temp_files::unlink_all(), 2);
  EXPECT_TRUE(entries().empty());
  temp_files::forget(ma->slot);
  temp_files::forget(mb->slot);
  ::close(ma->fd);
  ::close(mb->fd);
  EXPECT_EQ(temp_files::unlink_all(), 0);
}

TEST_F(TempFiles, TheTableIsBoundedAndSaysSo) {
  std::vector<temp_files::Made> made;
  for (;;) {
    std::string t = dir_ + "/.t.XXXXXX";
    auto m = temp_files::make(t);
    if (!m) {
      EXPECT_EQ(m.error().kind, ErrorKind::kInternal) << m.error().message;
      break;
    }
    made.push_back(*m);
    ASSERT_LE(made.size(), size_t(temp_files::kSlots));
  }
  EXPECT_EQ(temp_files::live(), temp_files::kSlots);
  EXPECT_EQ(entries().size(), made.size());  // the refused one was removed
  for (const auto& m : made) temp_files::forget(m.slot), ::close(m.fd);
  EXPECT_EQ(temp_files::live(), 0);
}

// Each signal that ends a process by default removes the temporary first,
// and the process still dies of that signal (the status a shell sees).
TEST_F(TempFiles, AFatalSignalRemovesTheTemporaryAndStillKills) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    SCOPED_TRACE(sig);
    int st = in_child([&] {
      writing(out());
      raise(sig);
      _exit(92);  // not reached
    });
    ASSERT_TRUE(WIFSIGNALED(st)) << st;
    EXPECT_EQ(WTERMSIG(st), sig);
    EXPECT_TRUE(entries().empty());
  }
}

// A command that stops cleanly keeps its handler (the temporary stays for it
// to commit); the second Ctrl-C kills, removing the temporary first.
TEST_F(TempFiles, SecondCtrlCRemovesThenKills) {
  int st = in_child([&] {
    StopSignals s({.second_ctrl_c_kills = true});
    writing(out());
    raise(SIGINT);
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
    if (!s.flag().load() || files != 1) _exit(93);  // stopped, the temporary still there
    raise(SIGINT);
    _exit(94);
  });
  ASSERT_TRUE(WIFSIGNALED(st)) << st;
  EXPECT_EQ(WTERMSIG(st), SIGINT);
  EXPECT_TRUE(entries().empty());
}

TEST_F(TempFiles, AStopSignalDuringStopSignalsLeavesTheTemporaryToItsOwner) {
  int st = in_child([&] {
    StopSignals s({.hangup = true});
    AtomicFile* f = writing(out());
    raise(SIGHUP);
    if (!s.flag().load()) _exit(95);
    _exit(f->commit() ? 0 : 96);
  });
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.csv"});
}

TEST_F(TempFiles, AfterStopSignalsTheRemovingHandlerIsBack) {
  int st = in_child([&] {
    { StopSignals s({}); }
    writing(out());
    raise(SIGTERM);
    _exit(97);
  });
  ASSERT_TRUE(WIFSIGNALED(st)) << st;
  EXPECT_EQ(WTERMSIG(st), SIGTERM);
  EXPECT_TRUE(entries().empty());
}

// nohup: an ignored signal stays ignored (the command goes on).
TEST_F(TempFiles, AnIgnoredSignalStaysIgnored) {
  int st = in_child([&] {
    signal(SIGHUP, SIG_IGN);
    writing(out());
    raise(SIGHUP);
    _exit(0);
  });
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_EQ(entries().size(), 1u);  // left by _exit, not by the signal
}

// A child between fork() and exec() (gnuplot's launch) that gets the signal
// dies without removing its parent's temporaries.
TEST_F(TempFiles, AForkedChildLeavesItsParentsTemporaries) {
  int st = in_child([&] {
    AtomicFile* f = writing(out());
    pid_t pid = fork();
    if (pid == 0) {
      raise(SIGTERM);
      _exit(98);
    }
    int cst = 0;
    waitpid(pid, &cst, 0);
    if (!WIFSIGNALED(cst) || WTERMSIG(cst) != SIGTERM) _exit(99);
    _exit(f->commit() ? 0 : 100);
  });
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.csv"});
}

}  // namespace
}  // namespace blkrr
