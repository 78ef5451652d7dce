// blkrr record and the file system it writes to, as root on loop devices
// with the output on a small tmpfs: --min-free pauses writing, counts the
// requests not kept and resumes; with --max-total it deletes this
// recording's oldest piece first; a full file system stops the recording
// with exit 1, naming the file and the error, every file readable up to its
// last block.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/rotation.h"
#include "core/trace_format.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

constexpr const char* kReady = "Ctrl-C stops";

// A tmpfs of `size` mounted on a new directory, removed with its files.
struct SmallFs {
  std::string dir;
  bool ok = false;
  explicit SmallFs(const std::string& size) {
    char t[] = "/tmp/blkrr-disk-XXXXXX";
    dir = mkdtemp(t) ? t : "";
    ok = !dir.empty() && mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~SmallFs() {
    if (ok) umount2(dir.c_str(), MNT_DETACH);
    rmdir(dir.c_str());
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') out.push_back(e->d_name);
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

// A file of `bytes` really allocated (tmpfs counts written pages).
bool fill(const std::string& path, size_t bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return false;
  std::vector<char> buf(1 << 16, 'x');
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = write(fd, buf.data(), std::min(buf.size(), bytes - done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  return done == bytes;
}

std::set<uint64_t> batch(const std::string& dev, uint64_t first_sector) {
  return run_known_batch("blkrr-io-disk", dev, first_sector);
}

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

struct Read {
  std::set<uint64_t> sectors;
  uint64_t records = 0;
  Counters trailer;
  bool has_trailer = false;
};

Read read_file(const std::string& path) {
  Read out;
  auto rd = TraceReader::open(path);
  EXPECT_TRUE(rd) << path << ": " << rd.error().message;
  if (!rd) return out;
  Request r;
  for (;;) {
    auto n = rd->next(r);
    EXPECT_TRUE(n) << path << ": " << n.error().message;
    if (!n || !*n) break;
    out.sectors.insert(r.sector);
    ++out.records;
  }
  if (rd->trailer()) {
    out.trailer = *rd->trailer();
    out.has_trailer = true;
  }
  return out;
}

TEST(RecordDisk, MinFreePausesWritingCountsTheRequestsNotKeptAndResumes) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  SmallFs fs("16m");
  ASSERT_TRUE(fs.ok) << "cannot mount a tmpfs";
  const std::string out = fs.dir + "/rec.blkrr";
  auto rec =
      BlkrrProcess::start({"record", "-d", a->path(), "-o", out, "--min-free", "8M"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  const auto kept1 = batch(a->path(), 0);
  sleep_ms(1500);
  ASSERT_TRUE(fill(fs.dir + "/filler", 9 << 20));  // 7 MiB free: below --min-free
  sleep_ms(500);
  const auto lost = batch(a->path(), 40000);
  sleep_ms(1200);  // written (after the disk-time hold) while paused
  unlink((fs.dir + "/filler").c_str());
  sleep_ms(500);
  const auto kept2 = batch(a->path(), 80000);
  sleep_ms(1000);
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  const Read got = read_file(out);
  std::set<uint64_t> want = kept1;
  want.insert(kept2.begin(), kept2.end());
  EXPECT_EQ(got.sectors, want);
  ASSERT_TRUE(got.has_trailer);
  EXPECT_EQ(got.trailer.count("not_kept_min_free") ? got.trailer.at("not_kept_min_free") : 0,
            lost.size());
  EXPECT_NE(rec->output().find("writing paused"), std::string::npos) << rec->output();
  EXPECT_NE(rec->output().find("writing resumed (8 requests not kept so far)"), std::string::npos)
      << rec->output();
  EXPECT_NE(rec->output().find("not_kept_min_free=8"), std::string::npos) << rec->output();
}

TEST(RecordDisk, MinFreeWithMaxTotalDeletesThisRecordingsOldestPieceFirst) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  SmallFs fs("4m");
  ASSERT_TRUE(fs.ok) << "cannot mount a tmpfs";
  ASSERT_TRUE(fill(fs.dir + "/other.blkrr", 1 << 20));  // someone else's file: never deleted
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", fs.dir + "/rec", "--rotate-size",
                                  "64k", "--max-total", "1G", "--min-free", "2M"},
                                 kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  // ~1.5 MiB of trace or more: more than the 1 MiB left above --min-free.
  auto child = IoChild::spawn("blkrr-io-disk", a->path(),
                              make_known_load(4, 64, 0, (256 << 11) - 2000), 6000);
  ASSERT_TRUE(child);
  child->go();
  ASSERT_EQ(child->wait(), 0);
  sleep_ms(1000);
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  EXPECT_NE(rec->output().find("to keep --min-free"), std::string::npos) << rec->output();
  struct stat st;
  EXPECT_EQ(stat((fs.dir + "/other.blkrr").c_str(), &st), 0);
  const auto names = fs.list();
  ASSERT_GE(names.size(), 2u);
  // The oldest pieces went: the first one left is not number 0.
  EXPECT_EQ(names[0], "other.blkrr");
  EXPECT_NE(names[1].find("rec.000000."), 0u) << names[1];
  std::printf("[measured] %zu pieces left of this recording\n", names.size() - 1);
}

TEST(RecordDisk, AFullFileSystemStopsWithExit1NamingTheFileAndKeepsEveryBlock) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  SmallFs fs("512k");
  ASSERT_TRUE(fs.ok) << "cannot mount a tmpfs";
  auto rec = BlkrrProcess::start(
      {"record", "-d", a->path(), "-o", fs.dir + "/rec", "--rotate-size", "64k", "--min-free", "0"},
      kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  auto child = IoChild::spawn("blkrr-io-disk", a->path(),
                              make_known_load(4, 64, 0, (256 << 11) - 2000), 20000);
  ASSERT_TRUE(child);
  child->go();
  const int status = rec->wait();  // stops by itself when the tmpfs is full
  kill(child->pid(), SIGKILL);
  child->wait();
  EXPECT_EQ(status, 1) << rec->output();
  EXPECT_NE(rec->output().find("No space left on device"), std::string::npos) << rec->output();
  EXPECT_NE(rec->output().find(fs.dir + "/rec.0"), std::string::npos) << rec->output();
  uint64_t records = 0;
  const auto names = fs.list();
  ASSERT_GE(names.size(), 2u);
  for (const auto& n : names) records += read_file(fs.dir + "/" + n).records;
  EXPECT_GT(records, 10000u);
  std::printf("[measured] %zu files, %llu requests readable after the disk filled\n", names.size(),
              static_cast<unsigned long long>(records));
}

TEST(RecordDisk, AFullFileSystemWithMaxTotalDeletesThisRecordingsOldestPieceAndGoesOn) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  SmallFs fs("2m");
  ASSERT_TRUE(fs.ok) << "cannot mount a tmpfs";
  // Never deleted: another file, and a file with a piece's name that is not
  // a piece of this recording.
  ASSERT_TRUE(fill(fs.dir + "/other.blkrr", 32 << 10));
  const std::string foreign = "rec.000000.20200101T000000Z.blkrr";
  ASSERT_TRUE(fill(fs.dir + "/" + foreign, 32 << 10));
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", fs.dir + "/rec", "--rotate-size",
                                  "16k", "--max-total", "1G", "--min-free", "0"},
                                 kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  // ~45,000 requests fit in 512 KiB (the test above), written in ~4 s:
  // 10 s of them are several times the 1.9 MiB left. The pieces close
  // within a second of their boundary (a poll, at most 200 ms of records,
  // makes one piece): several close before the disk is full.
  auto child = IoChild::spawn("blkrr-io-disk", a->path(),
                              make_known_load(4, 64, 0, (256 << 11) - 200000), 10000);
  ASSERT_TRUE(child);
  child->go();
  ASSERT_EQ(child->wait(), 0);
  sleep_ms(1500);
  const auto last = batch(a->path(), (256 << 11) - 100000);  // after the disk filled
  sleep_ms(1500);
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  EXPECT_NE(rec->output().find("to make room (No space left on device)"), std::string::npos)
      << rec->output();
  const auto names = fs.list();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "other.blkrr");
  EXPECT_EQ(names[1], foreign);
  // This recording's pieces left: consecutive, the oldest ones gone, each
  // whole (a trailer), and the last batch in them.
  auto first = parse_piece_file_name("rec", names[2]);
  ASSERT_TRUE(first) << names[2];
  EXPECT_GT(*first, 1u) << "the oldest pieces were deleted";
  std::set<uint64_t> got;
  uint64_t records = 0;
  for (size_t i = 2; i < names.size(); ++i) {
    EXPECT_EQ(parse_piece_file_name("rec", names[i]), std::optional<uint64_t>(*first + i - 2))
        << names[i];
    const Read r = read_file(fs.dir + "/" + names[i]);
    EXPECT_TRUE(r.has_trailer) << names[i];
    got.insert(r.sectors.begin(), r.sectors.end());
    records += r.records;
  }
  for (uint64_t x : last) EXPECT_TRUE(got.count(x)) << x;
  std::printf("[measured] %llu pieces deleted for room, %zu left with %llu requests\n",
              static_cast<unsigned long long>(*first - 1), names.size() - 2,
              static_cast<unsigned long long>(records));
}

TEST(RecordDisk, TheRecordersOwnWritesToARecordedDiskAreLeftOutAndCounted) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(128 << 20);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(system(("mkfs.ext4 -q -F " + a->path() + " >/dev/null 2>&1").c_str()), 0);
  char t[] = "/tmp/blkrr-own-XXXXXX";
  const std::string dir = mkdtemp(t) ? t : "";
  ASSERT_EQ(mount(a->path().c_str(), dir.c_str(), "ext4", 0, nullptr), 0) << strerror(errno);
  // Unmounted however the test ends, so that a failed check leaves no mount
  // holding the loop device.
  struct Unmount {
    std::string dir;
    ~Unmount() {
      umount2(dir.c_str(), 0);
      rmdir(dir.c_str());
    }
  } unmount{dir};
  const std::string out = dir + "/rec.blkrr";
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", out, "--min-free", "0"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  // Reads of the raw device (fast, not ours) while the trace grows on it.
  auto child =
      IoChild::spawn("blkrr-io-own", a->path(), make_known_load(2, 32, 200000, 40000), 3000);
  ASSERT_TRUE(child);
  child->go();
  ASSERT_EQ(child->wait(), 0);
  sleep_ms(500);
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  uint64_t ours = 0, reads = 0;
  Counters trailer;
  {
    auto rd = TraceReader::open(out);
    ASSERT_TRUE(rd) << rd.error().message;
    Request r;
    for (;;) {
      auto n = rd->next(r);
      ASSERT_TRUE(n) << n.error().message;
      if (!*n) break;
      ours += r.tgid == static_cast<uint32_t>(rec->pid());
      reads += r.op == Op::kRead && r.sector >= 200000;
    }
    ASSERT_TRUE(rd->trailer());
    trailer = *rd->trailer();
  }
  EXPECT_EQ(ours, 0u);
  EXPECT_GT(reads, 1000u);
  // About one write a second of recording (each flushed block), more for
  // larger traces; none of them recorded.
  ASSERT_TRUE(trailer.count("own_io_left_out")) << rec->output();
  EXPECT_GE(trailer.at("own_io_left_out"), 2u);
  EXPECT_NE(rec->output().find("own_io_left_out="), std::string::npos) << rec->output();
  std::printf("[measured] %llu requests of the recorder's own left out\n",
              static_cast<unsigned long long>(trailer.at("own_io_left_out")));
}

}  // namespace
}  // namespace blkrr::testing
