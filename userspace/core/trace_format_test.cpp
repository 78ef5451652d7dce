#include "core/trace_format.h"

#include "core/record_codec.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace blkrr {
namespace {

std::string tmp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("blkrr-tf-" + std::to_string(getpid()) + "-" + name))
      .string();
}

TraceHeader sample_header() {
  TraceHeader h;
  h.host = "testhost";
  h.kernel_release = "6.1.0";
  h.tool_version = "0.1.0";
  h.command_line = "blkrr record -d loop0";
  h.mono_anchor_ns = 123456789;
  h.real_anchor_ns = 1700000000000000000ull;
  DeviceInfo d;
  d.dev = make_dev(7, 0);
  d.name = "loop0";
  d.size_bytes = 1 << 30;
  d.logical_block_size = 512;
  d.physical_block_size = 4096;
  d.model = "loop:/dev/shm/x";
  d.scheduler = "none";
  d.partitions.push_back({make_dev(7, 1), "loop0p1", 2048, 4096});
  h.devices.push_back(d);
  h.settings["pid"] = "42";
  return h;
}

std::vector<Request> random_requests(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Request> v;
  uint64_t t = 1000000000;
  for (size_t i = 0; i < n; ++i) {
    Request r;
    t += 5000 + rng() % 40000;
    r.issue_ns = t;
    r.complete_ns = (i % 97 == 5) ? kNoTime : t + 20000 + rng() % 200000;
    r.disk_time_ns = rng() % 60000;
    r.sector = (rng() % (1ull << 31)) & ~7ull;  // random 4k on a 1 TiB disk
    r.bytes = 4096;
    r.dev = make_dev(8, 0);
    r.part = make_dev(8, 2);
    r.pid = 4242;
    r.tgid = 4240;
    r.cgroup_id = 9876;
    r.error = (i % 1000 == 3) ? -5 : 0;
    r.op = (i % 3) ? Op::kRead : Op::kWrite;
    r.flags = (i % 3) ? 0 : kFlagSync;
    r.rec_flags = r.completed() ? 0 : kRecCompletionNotSeen;
    r.set_comm("fio");
    v.push_back(r);
  }
  return v;
}

void expect_same(const Request& a, const Request& b) {
  EXPECT_EQ(a.issue_ns, b.issue_ns);
  EXPECT_EQ(a.complete_ns, b.complete_ns);
  EXPECT_EQ(a.disk_time_ns, b.disk_time_ns);
  EXPECT_EQ(a.sector, b.sector);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.dev, b.dev);
  EXPECT_EQ(a.part, b.part);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.tgid, b.tgid);
  EXPECT_EQ(a.cgroup_id, b.cgroup_id);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.rec_flags, b.rec_flags);
  EXPECT_EQ(a.comm_view(), b.comm_view());
}

std::vector<Request> read_all(TraceReader& r) {
  std::vector<Request> out;
  Request x;
  while (true) {
    auto n = r.next(x);
    EXPECT_TRUE(n.ok()) << (n.ok() ? "" : n.error().message);
    if (!n.ok() || !*n) break;
    out.push_back(x);
  }
  return out;
}

TEST(TraceFormat, RoundTripKeepsEveryField) {
  std::string p = tmp_path("rt");
  auto reqs = random_requests(20000, 1);
  reqs[7].complete_ns = reqs[7].issue_ns - 10;   // odd data survives too
  reqs[8].issue_ns = reqs[7].issue_ns - 100000;  // out of issue order (completion order)
  {
    auto w = TraceWriter::create(p, sample_header(), {.records_per_block = 3000, .zlib_level = 6});
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (const auto& r : reqs) ASSERT_TRUE(w->append(r).ok());
    ASSERT_TRUE(w->close({{"ringbuf_drops", 0}, {"completion_not_seen", 3}}).ok());
  }
  auto r = TraceReader::open(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->header().host, "testhost");
  EXPECT_EQ(r->header().real_anchor_ns, 1700000000000000000ull);
  ASSERT_EQ(r->header().devices.size(), 1u);
  EXPECT_EQ(r->header().devices[0].physical_block_size, 4096u);
  ASSERT_EQ(r->header().devices[0].partitions.size(), 1u);
  EXPECT_EQ(r->header().devices[0].partitions[0].start_sector, 2048u);
  EXPECT_EQ(r->header().settings.at("pid"), "42");
  auto got = read_all(*r);
  ASSERT_EQ(got.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) expect_same(got[i], reqs[i]);
  ASSERT_TRUE(r->trailer().has_value());
  EXPECT_EQ(r->trailer()->at("completion_not_seen"), 3u);
  EXPECT_EQ(r->warning(), "");
  fs::remove(p);
}

// Writes `n` random requests with writer options `o` and reads them back.
void expect_round_trip(const std::string& name, size_t n, uint64_t seed,
                       const TraceWriter::Options& o) {
  std::string p = tmp_path(name);
  auto reqs = random_requests(n, seed);
  {
    auto w = TraceWriter::create(p, sample_header(), o);
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (const auto& r : reqs) ASSERT_TRUE(w->append(r).ok());
    ASSERT_TRUE(w->close({}).ok());
  }
  auto r = TraceReader::open(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto got = read_all(*r);
  ASSERT_EQ(got.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) expect_same(got[i], reqs[i]);
  fs::remove(p);
}

// Files of format 1.0 (blocks without column elision) still read.
TEST(TraceFormat, Version10BlocksStillRead) {
  expect_round_trip("v10", 5000, 4,
                    {.records_per_block = 2000, .zlib_level = 1, .column_elision = false});
}

TEST(TraceFormat, RleStrategyRoundTrip) {
  expect_round_trip("rle", 7000, 6, {.records_per_block = 3000, .zlib_level = 1, .rle = true});
}

TEST(RecordCodec, ColumnElisionRoundTripAndRejectsBadLayouts) {
  auto reqs = random_requests(500, 5);
  std::vector<uint8_t> shuffled, packed, back;
  encode_records(reqs, shuffled);
  pack_columns(shuffled, reqs.size(), packed);
  // dev, part, pid, tgid, cgroup id, bytes, comm... are constant here.
  EXPECT_LT(packed.size(), shuffled.size() / 2);
  ASSERT_TRUE(unpack_columns(packed.data(), packed.size(), reqs.size(), back));
  EXPECT_EQ(back, shuffled);
  // Wrong length, wrong record count, a mask bit past the last column.
  EXPECT_FALSE(unpack_columns(packed.data(), packed.size() - 1, reqs.size(), back));
  EXPECT_FALSE(unpack_columns(packed.data(), packed.size(), reqs.size() + 1, back));
  EXPECT_FALSE(unpack_columns(packed.data(), 5, reqs.size(), back));
  auto bad = packed;
  bad[kColumnMaskBytes - 1] |= 0x80;
  EXPECT_FALSE(unpack_columns(bad.data(), bad.size(), reqs.size(), back));
  // An empty block packs to the mask alone.
  pack_columns({}, 0, packed);
  EXPECT_EQ(packed.size(), kColumnMaskBytes);
  EXPECT_TRUE(unpack_columns(packed.data(), packed.size(), 0, back));
}

TEST(TraceFormat, RandomIoIsAtMost16BytesPerRequest) {
  std::string p = tmp_path("size");
  auto reqs = random_requests(200000, 2);
  {
    auto w = TraceWriter::create(p, sample_header());
    ASSERT_TRUE(w.ok());
    for (const auto& r : reqs) ASSERT_TRUE(w->append(r).ok());
    ASSERT_TRUE(w->close({}).ok());
  }
  double per_req = static_cast<double>(fs::file_size(p)) / reqs.size();
  EXPECT_LE(per_req, 16.0);
  RecordProperty("bytes_per_request", std::to_string(per_req));
  fs::remove(p);
}

class Damaged : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_path("dmg");
    reqs_ = random_requests(10000, 3);
    auto w =
        TraceWriter::create(path_, sample_header(), {.records_per_block = 1000, .zlib_level = 6});
    ASSERT_TRUE(w.ok());
    for (const auto& r : reqs_) ASSERT_TRUE(w->append(r).ok());
    ASSERT_TRUE(w->close({{"x", 1}}).ok());
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  void TearDown() override { fs::remove(path_); }
  void rewrite(const std::string& b) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << b;
  }
  std::string path_, bytes_;
  std::vector<Request> reqs_;
};

TEST_F(Damaged, TruncatedFileReadsUpToLastCompleteBlock) {
  // Cut in the middle of the 6th block: the first 5 blocks (5000 records) survive.
  auto r0 = TraceReader::open(path_);
  ASSERT_TRUE(r0.ok());
  // Find offsets by cutting at every position of a coarse grid.
  for (size_t cut : {bytes_.size() - 1, bytes_.size() / 2, bytes_.size() / 3}) {
    rewrite(bytes_.substr(0, cut));
    auto r = TraceReader::open(path_);
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto got = read_all(*r);
    EXPECT_FALSE(r->warning().empty());
    EXPECT_FALSE(r->trailer().has_value());
    EXPECT_EQ(got.size() % 1000, 0u);
    EXPECT_LT(got.size(), reqs_.size() + (cut == bytes_.size() - 1 ? 1 : 0));
    for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], reqs_[i]);
  }
  // Cut in the header: a clear error.
  rewrite(bytes_.substr(0, 30));
  auto h = TraceReader::open(path_);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(h.error().message.find("offset 16"), std::string::npos) << h.error().message;
}

TEST_F(Damaged, MissingTrailerIsAWarning) {
  // The trailer is the last chunk: drop it exactly.
  auto pos = bytes_.rfind("TRLR");
  ASSERT_NE(pos, std::string::npos);
  rewrite(bytes_.substr(0, pos));
  auto r = TraceReader::open(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(read_all(*r).size(), reqs_.size());
  EXPECT_NE(r->warning().find("no trailer"), std::string::npos);
}

TEST_F(Damaged, CorruptBlockNamesItsOffset) {
  std::string b = bytes_;
  b[b.size() / 2] ^= 0x5a;
  rewrite(b);
  auto r = TraceReader::open(path_);
  ASSERT_TRUE(r.ok());
  Request x;
  Result<bool> n = true;
  while ((n = r->next(x)).ok() && *n) {
  }
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(n.error().message.find("offset"), std::string::npos) << n.error().message;
}

TEST_F(Damaged, VersionMismatchAndBadMagic) {
  std::string b = bytes_;
  b[8] = 2;  // major 2: newer
  rewrite(b);
  auto r = TraceReader::open(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(r.error().message.find("newer"), std::string::npos) << r.error().message;
  b[8] = 0;  // major 0: too old
  rewrite(b);
  r = TraceReader::open(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(r.error().message.find("too old"), std::string::npos) << r.error().message;
  rewrite("not a trace at all, just text");
  r = TraceReader::open(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_FALSE(is_native_trace(path_));
}

TEST(TraceFormat, UnwritableOutputIsAClearError) {
  auto w = TraceWriter::create("/nonexistent-dir/x.blkrr", sample_header());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("/nonexistent-dir/x.blkrr"), std::string::npos);
}

TEST(TraceFormat, FullDiskKeepsFlushedBlocks) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  auto w = TraceWriter::create("/dev/full", sample_header());
  // /dev/full accepts open but fails writes with ENOSPC at the first flush.
  if (w.ok()) {
    Request r;
    auto st = w->append(r);
    auto f = w->flush();
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().kind, ErrorKind::kIo);
    EXPECT_EQ(f.error().sys_errno, ENOSPC) << f.error().message;
  } else {
    EXPECT_EQ(w.error().sys_errno, ENOSPC) << w.error().message;
  }
}

TEST(TraceFormat, AppendingAfterCloseIsABug) {
  const std::string p = tmp_path("closed");
  auto w = TraceWriter::create(p, sample_header());
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(w->close({}));
  auto st = w->append(Request{});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kInternal);
  fs::remove(p);
}

// A block whose write failed (here: past RLIMIT_FSIZE, as a full disk would)
// stays pending; the next flush cuts the file back to its last complete block
// and writes it whole: every record once, and a trailer.
TEST(TraceFormat, AFailedBlockIsCutBackAndWrittenWholeByTheNextFlush) {
  const std::string p = tmp_path("cutback");
  TraceWriter::Options o;
  o.records_per_block = 1u << 16;  // blocks only on flush()
  auto w = TraceWriter::create(p, sample_header(), o);
  ASSERT_TRUE(w.ok()) << w.error().message;
  const auto reqs = random_requests(2000, 7);
  for (size_t i = 0; i < 1000; ++i) ASSERT_TRUE(w->append(reqs[i]).ok());
  ASSERT_TRUE(w->flush().ok());
  const uint64_t first_block_end = w->bytes_written();
  for (size_t i = 1000; i < 2000; ++i) ASSERT_TRUE(w->append(reqs[i]).ok());
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = first_block_end + 100;  // a hundred bytes of the next block fit
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status failed = w->flush();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().sys_errno, EFBIG) << failed.error().message;
  EXPECT_GT(fs::file_size(p), first_block_end);  // a part of the block on disk
  EXPECT_LE(fs::file_size(p), first_block_end + 100);
  EXPECT_EQ(w->bytes_written(), first_block_end);
  EXPECT_EQ(w->records_written(), 1000u);
  EXPECT_EQ(w->pending_records(), 1000u);
  ASSERT_TRUE(w->flush().ok());
  ASSERT_TRUE(w->close({{"records_written", 2000}}).ok());
  EXPECT_EQ(fs::file_size(p), w->bytes_written());
  auto rd = TraceReader::open(p);
  ASSERT_TRUE(rd.ok()) << rd.error().message;
  Request r;
  size_t n = 0;
  for (;;) {
    auto got = rd->next(r);
    ASSERT_TRUE(got.ok()) << got.error().message;
    if (!*got) break;
    ASSERT_LT(n, reqs.size());
    expect_same(r, reqs[n++]);
  }
  EXPECT_EQ(n, 2000u);
  EXPECT_TRUE(rd->warning().empty()) << rd->warning();
  ASSERT_TRUE(rd->trailer());
  EXPECT_EQ(rd->trailer()->at("records_written"), 2000u);
  fs::remove(p);
}

}  // namespace
}  // namespace blkrr
