// Bio-level capture end to end on a scratch zram device (bio-based, no disk
// below): blkrr record gives exactly the bios of a known O_DIRECT load, as
// the device's own requests, flagged bio-level, with their submitters; the
// recording converts and replays onto the device, validated at the bio level;
// snoop and top show the same bios.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/trace_format.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

constexpr const char* kReady = "Ctrl-C stops";
constexpr const char* kWriter = "blkrr-bio-wr";
constexpr const char* kReader = "blkrr-bio-rd";

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

bool write_file(const std::string& path, const std::string& v) {
  std::ofstream out(path);
  out << v;
  out.flush();
  return static_cast<bool>(out);
}

// A zram device of its own (hot_add), 64 MiB, removed at the end; a zram
// the system already has (swap or not) is left alone.
class ScratchZram {
 public:
  static Result<ScratchZram> create() {
    const std::string ctl = "/sys/class/zram-control";
    if (access(ctl.c_str(), F_OK) != 0) (void)std::system("modprobe zram >/dev/null 2>&1");
    if (access(ctl.c_str(), F_OK) != 0)
      return Error(ErrorKind::kNotFound, "no zram module (/sys/class/zram-control)");
    std::string id = read_line(ctl + "/hot_add");
    if (id.empty()) return Error(ErrorKind::kIo, "zram hot_add gave no device");
    ScratchZram z;
    z.id_ = id;
    z.name_ = "zram" + id;
    const std::string sys = "/sys/block/" + z.name_;
    if (!write_file(sys + "/disksize", "64M"))
      return Error(ErrorKind::kIo, "cannot set the disksize of " + z.name_);
    auto dev = parse_majmin(read_line(sys + "/dev"));
    if (!dev) return Error(ErrorKind::kIo, "no dev number for " + z.name_);
    z.dev_ = *dev;
    z.path_ = "/dev/" + z.name_;
    struct stat st {};
    if (stat(z.path_.c_str(), &st) != 0) {  // no devtmpfs node: make one
      z.path_ = "/tmp/blkrr-test-" + z.name_;
      if (mknod(z.path_.c_str(), S_IFBLK | 0600, makedev(dev_major(z.dev_), dev_minor(z.dev_))) !=
          0)
        return Error::system("mknod " + z.path_, errno);
      z.own_node_ = true;
    }
    return z;
  }
  ScratchZram(ScratchZram&& o) noexcept
      : id_(std::move(o.id_)),
        name_(std::move(o.name_)),
        path_(std::move(o.path_)),
        dev_(o.dev_),
        own_node_(o.own_node_) {
    o.id_.clear();
  }
  ScratchZram& operator=(ScratchZram&&) = delete;
  ~ScratchZram() {
    if (id_.empty()) return;
    if (own_node_) unlink(path_.c_str());
    write_file("/sys/block/" + name_ + "/reset", "1");
    write_file("/sys/class/zram-control/hot_remove", id_);
  }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  DevT dev() const { return dev_; }

 private:
  ScratchZram() = default;
  std::string id_, name_, path_;
  DevT dev_ = 0;
  bool own_node_ = false;
};

// 64 requests of 4-32 KiB, 64 KiB apart (zram's 4 KiB blocks).
std::vector<IoOp> known_ops(Op op) {
  std::vector<IoOp> v;
  for (uint32_t i = 0; i < 64; i++) v.push_back({op, uint64_t{i} * 128, 4096 * (1 + i % 8)});
  return v;
}

using Key = std::tuple<int, uint64_t, uint32_t>;  // op, sector, bytes

std::vector<Request> read_reqs(const std::string& path, TraceHeader* h, Counters* c) {
  std::vector<Request> out;
  auto rd = TraceReader::open(path);
  EXPECT_TRUE(rd) << (rd ? "" : rd.error().message);
  if (!rd) return out;
  *h = rd->header();
  Request r;
  while (true) {
    auto n = rd->next(r);
    EXPECT_TRUE(n);
    if (!n || !*n) break;
    out.push_back(r);
  }
  if (rd->trailer()) *c = *rd->trailer();
  return out;
}

uint64_t counter(const Counters& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

pid_t run_child(const std::string& comm, const std::string& dev, Op op) {
  auto child = IoChild::spawn(comm, dev, {known_ops(op)});
  EXPECT_TRUE(child);
  if (!child) return -1;
  const pid_t pid = child->pid();
  child->go();
  EXPECT_EQ(child->wait(), 0) << comm;
  return pid;
}

// Records a zram device while a writer and then a reader run the known
// load; the trace's path.
std::string record_known_load(const ScratchZram& z, pid_t* writer, pid_t* reader) {
  std::string out = "/tmp/blkrr-bio-level-" + std::to_string(getpid()) + ".blkrr";
  auto rec = BlkrrProcess::start({"record", "-d", z.name(), "-o", out}, kReady);
  EXPECT_TRUE(rec) << (rec ? "" : rec.error().message);
  if (!rec) return out;
  *writer = run_child(kWriter, z.path(), Op::kWrite);
  *reader = run_child(kReader, z.path(), Op::kRead);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  EXPECT_EQ(rec->wait(), 0) << rec->output();
  return out;
}

TEST(BioLevel, ZramRecordsExactlyTheBiosOfTheLoadWithTheirSubmitters) {
  SKIP_UNLESS_CAPTURE();
  auto z = ScratchZram::create();
  if (!z) GTEST_SKIP() << "no scratch zram device: " << z.error().message;
  pid_t writer = -1, reader = -1;
  const std::string out = record_known_load(*z, &writer, &reader);
  TraceHeader h;
  Counters c;
  auto reqs = read_reqs(out, &h, &c);
  unlink(out.c_str());

  std::multiset<Key> want, got;
  for (Op op : {Op::kWrite, Op::kRead})
    for (const auto& o : known_ops(op)) want.insert({static_cast<int>(op), o.sector, o.bytes});
  for (const auto& r : reqs) {
    got.insert({static_cast<int>(r.op), r.sector, r.bytes});
    EXPECT_EQ(r.dev, z->dev());
    EXPECT_EQ(r.part, z->dev());
    EXPECT_TRUE(r.rec_flags & kRecBioLevel) << rec_flags_to_string(r.rec_flags);
    EXPECT_TRUE(r.completed());
    EXPECT_EQ(r.error, 0);
    const bool w = r.op == Op::kWrite;
    EXPECT_EQ(r.tgid, static_cast<uint32_t>(w ? writer : reader));
    EXPECT_EQ(r.comm_view(), w ? kWriter : kReader);
  }
  EXPECT_EQ(reqs.size(), 128u);
  EXPECT_EQ(got, want);
  // Disk time over the device's bios: the union of their intervals.
  uint64_t sum = 0;
  for (const auto& r : reqs) sum += r.disk_time_ns;
  EXPECT_GT(sum, 0u);
  EXPECT_EQ(counter(c, "device_busy_ns." + dev_to_string(z->dev())), sum);
  EXPECT_EQ(counter(c, "bio_completion_not_queued"), 0u);
  EXPECT_EQ(h.settings["bio_level." + z->name()], "zram: no disk below");
  EXPECT_NE(h.settings["capture.bio_level"].find("block_bio_complete"), std::string::npos);
  ASSERT_EQ(h.devices.size(), 1u);
  EXPECT_EQ(h.devices[0].dev, z->dev());
}

int run(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// The recording as JSON lines (convert) and replayed onto the device with
// --validate: the same 128 requests, all of them seen at the bio level.
TEST(BioLevel, ZramRecordingConvertsAndReplaysValidatedOntoTheDevice) {
  SKIP_UNLESS_CAPTURE();
  auto z = ScratchZram::create();
  if (!z) GTEST_SKIP() << "no scratch zram device: " << z.error().message;
  pid_t writer = -1, reader = -1;
  const std::string out = record_known_load(*z, &writer, &reader);
  const std::string jl = out + ".jsonl", js = out + ".json", err = out + ".stderr";
  const std::string blkrr = BLKRR_BINARY;
  ASSERT_EQ(run(blkrr + " convert " + out + " -o " + jl + " 2>" + err), 0) << read_line(err);
  std::ifstream lines(jl);
  size_t n = 0, flagged = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("sector")) continue;
    n++;
    flagged += j.value("record_flags", std::string()).find("bio-level") != std::string::npos;
  }
  EXPECT_EQ(n, 128u);
  EXPECT_EQ(flagged, 128u);
  int rc = run(blkrr + " replay " + out + " " + z->path() +
               " --validate --fail-incomplete --quiet --json-file " + js + " 2>" + err);
  EXPECT_EQ(rc, 0) << read_line(err);
  std::ifstream jin(js);
  auto j = nlohmann::json::parse(jin, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  const auto& v = j["validation"];
  EXPECT_EQ(v["verdict"], "complete") << v.dump(1);
  EXPECT_TRUE(v["missing"].empty());
  EXPECT_EQ(v["block_requests"]["foreign"], 0) << v.dump(1);
  EXPECT_EQ(j["requests"]["done"], 128u) << j["requests"].dump();
  EXPECT_EQ(v["capture_features"].value("bio_level", std::string()).empty(), false) << v.dump(1);
  for (const auto& f : {out, jl, js, err}) unlink(f.c_str());
}

// snoop and top accept the device (no longer refused as bio-based).
TEST(BioLevel, SnoopShowsTheBiosOfAZramDevice) {
  SKIP_UNLESS_CAPTURE();
  auto z = ScratchZram::create();
  if (!z) GTEST_SKIP() << "no scratch zram device: " << z.error().message;
  auto snoop = BlkrrProcess::start({"snoop", "--json", "-d", z->name()}, "");
  ASSERT_TRUE(snoop) << snoop.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  run_child(kWriter, z->path(), Op::kWrite);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  snoop->signal(SIGINT);
  EXPECT_EQ(snoop->wait(), 0) << snoop->output();
  size_t writes = 0, flagged = 0;
  std::istringstream lines(snoop->output());
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("comm", std::string()) != kWriter) continue;
    writes++;
    flagged += j.value("record_flags", std::string()).find("bio-level") != std::string::npos;
  }
  EXPECT_EQ(writes, 64u) << snoop->output().substr(0, 2000);
  EXPECT_EQ(flagged, 64u);
}

// top charges the device's bios to their submitter, on the device's row.
TEST(BioLevel, TopChargesTheBiosOfAZramDeviceToTheWriter) {
  SKIP_UNLESS_CAPTURE();
  auto z = ScratchZram::create();
  if (!z) GTEST_SKIP() << "no scratch zram device: " << z.error().message;
  auto top = BlkrrProcess::start({"top", "--json", "-d", z->name(), "0.5"}, "\"seq\":1");
  ASSERT_TRUE(top) << top.error().message;
  const pid_t w = run_child(kWriter, z->path(), Op::kWrite);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  top->signal(SIGINT);
  EXPECT_EQ(top->wait(), 0) << top->output();
  uint64_t requests = 0, bytes = 0, want_bytes = 0, busy = 0;
  for (const auto& o : known_ops(Op::kWrite)) want_bytes += o.bytes;
  std::istringstream docs(top->output());
  for (std::string line; std::getline(docs, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("rows")) continue;
    for (const auto& r : j["rows"]) {
      if (r.value("comm", std::string()) != kWriter) continue;
      EXPECT_EQ(r.value("pid", 0), w) << r.dump();
      EXPECT_EQ(r.value("device", std::string()), z->name()) << r.dump();
      requests += r.value("requests", uint64_t{0});
      bytes += r.value("bytes", uint64_t{0});
    }
    for (const auto& d : j["devices"]) busy += d.value("busy_ns", uint64_t{0});
  }
  EXPECT_EQ(requests, 64u);
  EXPECT_EQ(bytes, want_bytes);
  EXPECT_GT(busy, 0u);
}

}  // namespace
}  // namespace blkrr::testing
