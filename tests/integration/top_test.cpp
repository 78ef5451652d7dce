// blkrr top and snoop on real loop devices (root only): exact per-process
// counts, disk time against the kernel's own blk tracer, /proc/diskstats
// io_ticks for comparison, saturation, partitions, /metrics under load, and
// in-kernel totals against the offline computation of the same run.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/blkpg.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "core/disktime.h"
#include "loopdev.h"
#include "proc_helpers.h"

namespace blkrr::testing {
namespace {

using nlohmann::json;

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

#define SKIP_UNLESS_CAPTURE()                                                      \
  do {                                                                             \
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF capture, loop devices)"; \
    auto pf = capture_preflight();                                                 \
    if (!pf) GTEST_SKIP() << "capture cannot run here: " << pf.error().message;    \
  } while (0)

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] == '{') v.push_back(json::parse(l));
  return v;
}

struct Totals {
  uint64_t requests = 0, bytes = 0, disk_time_ns = 0;
};

// Sums of the rows of every interval, per comm and direction ("fio/read").
std::map<std::string, Totals> sum_rows(const std::vector<json>& snaps) {
  std::map<std::string, Totals> t;
  for (const auto& s : snaps)
    for (const auto& r : s["rows"]) {
      auto& x = t[r["comm"].get<std::string>() + "/" + r["direction"].get<std::string>()];
      x.requests += r["requests"].get<uint64_t>();
      x.bytes += r["bytes"].get<uint64_t>();
      x.disk_time_ns += r["disk_time_ns"].get<uint64_t>();
    }
  return t;
}

uint64_t sum_lost(const std::vector<json>& snaps) {
  uint64_t n = 0;
  for (const auto& s : snaps)
    for (const auto& [k, v] : s["lost"].items()) n += v.get<uint64_t>();
  return n;
}

std::string http_get(uint16_t port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    char buf[8192];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  }
  ::close(fd);
  return out;
}

// `name{labels} value` lines of an exposition, by "name{labels}".
std::map<std::string, std::string> metrics_of(const std::string& http) {
  std::map<std::string, std::string> m;
  std::istringstream in(http.substr(http.find("\r\n\r\n") + 4));
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    auto sp = l.rfind(' ');
    m[l.substr(0, sp)] = l.substr(sp + 1);
  }
  return m;
}

// The kernel's blk tracer on one device (tracefs), independent of blkrr.
class BlkTracer {
 public:
  explicit BlkTracer(const std::string& dev_name) : dev_(dev_name) {
    if (access("/sys/kernel/tracing/trace", F_OK) != 0)
      (void)!system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null");
    write("/sys/block/" + dev_ + "/trace/enable", "1");
    write(kT + "buffer_size_kb", "16384");
    write(kT + "current_tracer", "blk");
    write(kT + "trace", "");
    write(kT + "tracing_on", "1");
  }
  ~BlkTracer() { stop(); }
  // Stops tracing and returns the trace text.
  std::string stop() {
    if (stopped_) return text_;
    stopped_ = true;
    write(kT + "tracing_on", "0");
    std::ifstream in(kT + "trace");
    std::ostringstream ss;
    ss << in.rdbuf();
    text_ = ss.str();
    write(kT + "current_tracer", "nop");
    write("/sys/block/" + dev_ + "/trace/enable", "0");
    write(kT + "buffer_size_kb", "1408");
    return text_;
  }
  bool ok() const { return ok_; }

 private:
  void write(const std::string& path, const std::string& v) {
    std::ofstream f(path);
    f << v << std::flush;
    if (!f) ok_ = false;
  }
  inline static const std::string kT = "/sys/kernel/tracing/";
  std::string dev_, text_;
  bool ok_ = true, stopped_ = false;
};

struct TraceBusy {
  uint64_t union_ns = 0;
  size_t issues = 0, completes = 0, unpaired = 0;
  bool overrun = false;
};

// Union of the D..C intervals of device MAJ,MIN in blk tracer text.
TraceBusy busy_from_trace(const std::string& text, DevT dev) {
  static const std::regex line(
      R"(\s(\d+)\.(\d+):\s+(\d+),(\d+)\s+([A-Z]+)\s+(\S+)\s+(\d+) \+ (\d+))");
  TraceBusy b;
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> open;
  std::vector<Interval> iv;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.find("LOST") != std::string::npos && l[0] != '#') b.overrun = true;
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    if (make_dev(std::stoul(m[3]), std::stoul(m[4])) != dev) continue;
    std::string frac = m[2].str();
    frac.resize(9, '0');
    uint64_t t = std::stoull(m[1]) * 1'000'000'000ull + std::stoull(frac);
    std::string act = m[5], rwbs = m[6];
    char op = rwbs.find('W') != std::string::npos   ? 'W'
              : rwbs.find('D') != std::string::npos ? 'D'
                                                    : 'R';
    auto key = std::make_pair(std::string(1, op) + "+" + m[8].str(), std::stoull(m[7]));
    if (act == "D") {
      ++b.issues;
      open[key].push_back(t);
    } else if (act == "C") {
      ++b.completes;
      auto it = open.find(key);
      if (it == open.end() || it->second.empty()) {
        ++b.unpaired;
        continue;
      }
      iv.push_back({it->second.front(), t});
      it->second.erase(it->second.begin());
    }
  }
  for (const auto& [k, v] : open) b.unpaired += v.size();
  b.union_ns = union_length(iv);
  return b;
}

uint64_t io_ticks_ms(const std::string& name) {
  std::ifstream in("/sys/block/" + name + "/stat");
  std::vector<uint64_t> f;
  for (uint64_t v; in >> v;) f.push_back(v);
  return f.size() > 9 ? f[9] : 0;
}

std::vector<std::vector<IoOp>> uniform(int threads, int per_thread, Op op, uint32_t bytes,
                                       uint64_t first_sector) {
  std::vector<std::vector<IoOp>> out(threads);
  uint64_t stride = bytes / 512 * 2;  // gaps between requests: no merges
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i)
      out[t].push_back({op, first_sector + (uint64_t(t) * per_thread + i) * stride, bytes});
  return out;
}

// Two processes with different known loads at the same time: per-process
// counts and bytes exact, disk time summed over processes equal to the busy
// time of the device according to the kernel's blk tracer (D..C union), and
// the screen, JSON and /metrics carrying the same numbers.
TEST(TopIntegration, TwoProcessesExactAndDiskTimeEqualsBlkTracerBusyTime) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(512ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  sleep_ms(300);  // let udev's probe of the new device pass
  BlkTracer tracer(loop->name());
  ASSERT_TRUE(tracer.ok()) << "cannot enable the blk tracer on " << loop->name();
  uint64_t ticks0 = io_ticks_ms(loop->name());
  uint16_t port = static_cast<uint16_t>(20000 + getpid() % 20000);

  auto jtop = BlkrrProcess::start({"top", "--json", "-d", loop->path(), "0.5"}, "\"seq\":1");
  ASSERT_TRUE(jtop.ok()) << jtop.error().message;
  auto stop = BlkrrProcess::start({"top", "-C", "-b", "-d", loop->path(), "--prometheus",
                                   "127.0.0.1:" + std::to_string(port), "0.5"},
                                  "BYTES");
  ASSERT_TRUE(stop.ok()) << stop.error().message;

  // A: 2 threads x 200 writes of 64 KiB. B: 1 thread x 1500 reads of 4 KiB.
  auto a = IoChild::spawn("blkrrA", loop->path(), uniform(2, 200, Op::kWrite, 65536, 0));
  auto b = IoChild::spawn("blkrrB", loop->path(), uniform(1, 1500, Op::kRead, 4096, 600000));
  ASSERT_TRUE(a.ok() && b.ok());
  a->go();
  b->go();
  ASSERT_EQ(a->wait(), 0);
  ASSERT_EQ(b->wait(), 0);
  sleep_ms(1300);  // two more refreshes: the last requests are in an interval

  std::string http = http_get(port, "/metrics");
  jtop->signal(SIGTERM);
  stop->signal(SIGTERM);
  EXPECT_EQ(jtop->wait(), 0);
  EXPECT_EQ(stop->wait(), 0);
  uint64_t ticks = io_ticks_ms(loop->name()) - ticks0;
  TraceBusy tb = busy_from_trace(tracer.stop(), loop->dev());

  auto snaps = json_lines(jtop->output());
  ASSERT_GE(snaps.size(), 3u);
  auto rows = sum_rows(snaps);
  uint64_t lost = sum_lost(snaps);
  const Totals& ta = rows["blkrrA/write"];
  const Totals& tbr = rows["blkrrB/read"];
  // Exact: every request counted, or counted as lost by the capture.
  EXPECT_EQ(ta.requests + tbr.requests + lost, 400u + 1500u) << "lost " << lost;
  EXPECT_LE(ta.requests, 400u);
  EXPECT_LE(tbr.requests, 1500u);
  EXPECT_EQ(ta.bytes, ta.requests * 65536);
  EXPECT_EQ(tbr.bytes, tbr.requests * 4096);
  if (lost == 0) {
    EXPECT_EQ(ta.requests, 400u);
    EXPECT_EQ(tbr.requests, 1500u);
  }

  // Disk time of every process on the device vs the tracer's busy time.
  uint64_t charged = 0, busy = 0;
  for (const auto& [k, t] : rows) charged += t.disk_time_ns;
  for (const auto& s : snaps)
    for (const auto& d : s["devices"]) busy += d["busy_ns"].get<uint64_t>();
  ASSERT_FALSE(tb.overrun) << "the blk tracer lost events";
  ASSERT_GT(tb.union_ns, 0u);
  double err = std::abs(double(charged) - double(tb.union_ns)) / double(tb.union_ns);
  std::printf(
      "[measured] requests A=%llu B=%llu lost=%llu; disk time sum %.3f ms, device busy %.3f ms, "
      "blk tracer D..C union %.3f ms (%zu D, %zu C, %zu unpaired), diff %.3f %%, "
      "diskstats io_ticks %llu ms\n",
      (unsigned long long)ta.requests, (unsigned long long)tbr.requests, (unsigned long long)lost,
      charged / 1e6, busy / 1e6, tb.union_ns / 1e6, tb.issues, tb.completes, tb.unpaired, err * 100,
      (unsigned long long)ticks);
  EXPECT_LT(err, 0.01);
  EXPECT_EQ(charged, busy);  // only our processes used the device

  // Screen: BYTES per comm summed over the intervals; /metrics: counters.
  std::map<std::string, uint64_t> screen_bytes;
  std::istringstream in(stop->output());
  static const std::regex row(
      R"(^\s*\S+\s+\d+\s+\S+\s+(\S+)\s+(\S+)\s+\d+\s+\d+\s+([RW])\s+(\d+)$)");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, row)) screen_bytes[m[1].str() + m[3].str()] += std::stoull(m[4]);
  }
  auto met = metrics_of(http);
  std::string la = "{device=\"" + loop->name() + "\",direction=\"write\",comm=\"blkrrA\"}";
  std::string lb = "{device=\"" + loop->name() + "\",direction=\"read\",comm=\"blkrrB\"}";
  ASSERT_TRUE(met.count("blkrr_io_bytes_total" + la)) << http;
  EXPECT_EQ(std::to_string(screen_bytes["blkrrAW"]), met["blkrr_io_bytes_total" + la]);
  EXPECT_EQ(std::to_string(screen_bytes["blkrrBR"]), met["blkrr_io_bytes_total" + lb]);
  uint64_t mlost = 0;
  for (const auto& [k, v] : met)
    if (k.rfind("blkrr_capture_lost_total", 0) == 0) mlost += std::stoull(v);
  EXPECT_EQ(std::stoull(met["blkrr_io_requests_total" + la]) +
                std::stoull(met["blkrr_io_requests_total" + lb]) + mlost,
            1900u);
  EXPECT_EQ(std::stoull(met["blkrr_io_bytes_total" + la]),
            std::stoull(met["blkrr_io_requests_total" + la]) * 65536);
  if (lost == 0 && mlost == 0) {
    EXPECT_EQ(screen_bytes["blkrrAW"], ta.bytes);
    EXPECT_EQ(screen_bytes["blkrrBR"], tbr.bytes);
  }
}

// One process keeping the device saturated shows ~100 %I/O, and owns all
// of the device's busy time.
TEST(TopIntegration, SaturatingProcessShowsFullUtilisation) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(256ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  auto top = BlkrrProcess::start({"top", "-P", "--json", "-d", loop->path(), "1"}, "\"seq\":1");
  ASSERT_TRUE(top.ok()) << top.error().message;
  // 32 threads x 1 MiB reads back to back: the device always has work.
  std::vector<std::vector<IoOp>> load(32);
  for (int t = 0; t < 32; ++t)
    for (int i = 0; i < 4; ++i)
      load[t].push_back({Op::kRead, uint64_t(t * 4 + i) * 2048, 1u << 20});
  auto c = IoChild::spawn("saturate", loop->path(), load, 3500);
  ASSERT_TRUE(c.ok());
  c->go();
  ASSERT_EQ(c->wait(), 0);
  sleep_ms(200);
  top->signal(SIGTERM);
  EXPECT_EQ(top->wait(), 0);
  auto snaps = json_lines(top->output());
  // The intervals entirely inside the load: the 2nd and 3rd after it started.
  double best = 0;
  int full = 0;
  for (const auto& s : snaps) {
    for (const auto& r : s["rows"]) {
      if (r["comm"] != "saturate") continue;
      double pct = r["io_percent"].get<double>();
      std::printf("[measured] interval %d: saturate %.1f %%I/O, device %.1f %%\n",
                  s["seq"].get<int>(), pct, s["devices"][0]["util_percent"].get<double>());
      best = std::max(best, pct);
      if (pct >= 95.0 && pct <= 105.0) ++full;
      EXPECT_NEAR(pct, s["devices"][0]["util_percent"].get<double>(), 0.01);
    }
  }
  EXPECT_GE(full, 1) << "no interval at ~100 %I/O; best " << best;
}

// Writes an MBR with two partitions and lets the kernel scan it.
bool partition(const LoopDevice& loop) {
  unsigned char mbr[512] = {};
  auto entry = [&](int i, uint32_t start, uint32_t count) {
    unsigned char* e = mbr + 446 + 16 * i;
    e[4] = 0x83;
    std::memcpy(e + 8, &start, 4);
    std::memcpy(e + 12, &count, 4);
  };
  entry(0, 2048, 65536);
  entry(1, 2048 + 65536, 65536);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  int fd = open(loop.path().c_str(), O_RDWR);
  if (fd < 0) return false;
  bool ok = pwrite(fd, mbr, sizeof mbr, 0) == 512 && fsync(fd) == 0;
  // Add the partitions explicitly (BLKPG), as partx does: the loop device
  // was set up without partition scanning.
  for (int pno = 1; ok && pno <= 2; ++pno) {
    blkpg_partition part{};
    part.start = (2048ll + (pno - 1) * 65536ll) * 512;
    part.length = 65536ll * 512;
    part.pno = pno;
    blkpg_ioctl_arg arg{};
    arg.op = BLKPG_ADD_PARTITION;
    arg.datalen = sizeof part;
    arg.data = &part;
    ok = ioctl(fd, BLKPG, &arg) == 0;
  }
  close(fd);
  for (int i = 0; ok && i < 50 && access(("/dev/" + loop.name() + "p2").c_str(), F_OK) != 0; ++i)
    sleep_ms(100);
  return ok && access(("/dev/" + loop.name() + "p2").c_str(), F_OK) == 0;
}

// Requests on a partition are named after it (loopNp2, its MAJ MIN), in
// snoop and top; -d on a partition shows only that partition.
TEST(TopIntegration, PartitionsNamedInSnoopAndTop) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(128ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  ASSERT_TRUE(partition(*loop)) << "could not partition " << loop->path();
  std::string p2 = loop->name() + "p2";
  auto snoop = BlkrrProcess::start({"snoop", "--json", "-N", "-d", "/dev/" + p2}, "");
  ASSERT_TRUE(snoop.ok()) << snoop.error().message;
  auto top = BlkrrProcess::start({"top", "--json", "-d", loop->path(), "0.5"}, "\"seq\":1");
  ASSERT_TRUE(top.ok()) << top.error().message;
  sleep_ms(500);
  // 20 reads through /dev/loopNp2 and 7 through /dev/loopNp1.
  auto c2 = IoChild::spawn("onp2", "/dev/" + p2, uniform(1, 20, Op::kRead, 4096, 64));
  auto c1 =
      IoChild::spawn("onp1", "/dev/" + loop->name() + "p1", uniform(1, 7, Op::kRead, 4096, 64));
  ASSERT_TRUE(c1.ok() && c2.ok());
  c2->go();
  c1->go();
  ASSERT_EQ(c2->wait(), 0);
  ASSERT_EQ(c1->wait(), 0);
  sleep_ms(1200);
  snoop->signal(SIGINT);
  top->signal(SIGTERM);
  EXPECT_EQ(snoop->wait(), 0);
  EXPECT_EQ(top->wait(), 0);

  std::string p2majmin;
  {
    std::ifstream f("/sys/class/block/" + p2 + "/dev");
    f >> p2majmin;
  }
  int n2 = 0, other = 0;
  for (const auto& j : json_lines(snoop->output())) {
    if (j["comm"] == "onp2") {
      ++n2;
      EXPECT_EQ(j["device"], p2);
      EXPECT_EQ(std::to_string(j["major"].get<int>()) + ":" + std::to_string(j["minor"].get<int>()),
                p2majmin);
      EXPECT_GT(j["latency_ns"].get<uint64_t>(), 0u);
    } else {
      ++other;
    }
  }
  EXPECT_EQ(n2, 20) << snoop->output();
  EXPECT_EQ(other, 0) << "requests outside " << p2 << " shown";
  EXPECT_NE(snoop->output().find("20 requests shown"), std::string::npos) << snoop->output();
  auto rows = json_lines(top->output());
  std::map<std::string, std::string> dev_of;
  for (const auto& s : rows)
    for (const auto& r : s["rows"]) dev_of[r["comm"]] = r["device"];
  EXPECT_EQ(dev_of["onp2"], p2);
  EXPECT_EQ(dev_of["onp1"], loop->name() + "p1");
}

// /metrics keeps answering while the device is saturated, and SIGTERM
// stops the server promptly with status 0.
TEST(TopIntegration, MetricsSurviveScrapesUnderLoadAndStopOnSigterm) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(256ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  uint16_t port = static_cast<uint16_t>(20000 + (getpid() + 7) % 20000);
  auto top = BlkrrProcess::start(
      {"top", "-q", "-d", loop->path(), "--prometheus", "127.0.0.1:" + std::to_string(port), "0.2"},
      "");
  ASSERT_TRUE(top.ok()) << top.error().message;
  sleep_ms(800);
  auto c = IoChild::spawn("heavy", loop->path(), make_known_load(4, 64, 0, 400000), 3000);
  ASSERT_TRUE(c.ok());
  c->go();
  int good = 0, tries = 0;
  uint64_t last = 0;
  bool monotonic = true;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2800);
  while (std::chrono::steady_clock::now() < until) {
    ++tries;
    std::string r = http_get(port, "/metrics");
    if (r.rfind("HTTP/1.1 200 OK", 0) != 0) continue;
    auto m = metrics_of(r);
    uint64_t sum = 0;
    for (const auto& [k, v] : m)
      if (k.rfind("blkrr_io_requests_total{", 0) == 0) sum += std::stoull(v);
    if (sum < last) monotonic = false;
    last = sum;
    ++good;
  }
  ASSERT_EQ(c->wait(), 0);
  EXPECT_EQ(good, tries);
  EXPECT_GT(tries, 50);
  EXPECT_TRUE(monotonic);
  EXPECT_GT(last, 0u);
  auto t0 = std::chrono::steady_clock::now();
  top->signal(SIGTERM);
  EXPECT_EQ(top->wait(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ(http_get(port, "/metrics"), "");  // nobody listens any more
}

// The same run seen two ways: in-kernel aggregation and the event stream
// recomputed offline with core's compute_disk_times.
TEST(TopIntegration, InKernelTotalsEqualOfflineComputation) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(256ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  sleep_ms(300);
  CaptureConfig cfg;
  cfg.devices.push_back({loop->dev(), loop->name(), std::nullopt, loop->path()});
  cfg.emit_events = true;
  cfg.aggregate = true;
  auto cap = Capture::start(cfg);
  ASSERT_TRUE(cap.ok()) << cap.error().message;
  std::vector<Request> events;
  auto collect = [&](const Request& r) { events.push_back(r); };
  auto a = IoChild::spawn("offA", loop->path(), make_known_load(3, 300, 0, 200000));
  auto b = IoChild::spawn("offB", loop->path(), uniform(2, 400, Op::kRead, 8192, 300000));
  ASSERT_TRUE(a.ok() && b.ok());
  a->go();
  b->go();
  while (true) {
    ASSERT_TRUE((*cap)->poll(50, collect).ok());
    if (waitpid(a->pid(), nullptr, WNOHANG) != 0 && waitpid(b->pid(), nullptr, WNOHANG) != 0) break;
  }
  sleep_ms(100);
  ASSERT_TRUE((*cap)->poll(50, collect).ok());
  auto agg = (*cap)->aggregates();
  auto busy = (*cap)->device_busy();
  ASSERT_TRUE(agg.ok() && busy.ok());
  ASSERT_TRUE((*cap)->stop(collect).ok());
  Counters c = (*cap)->counters();

  uint64_t kernel = 0, kreq = 0;
  for (const auto& e : *agg) {
    kernel += e.value.disk_time_ns;
    kreq += e.value.requests;
  }
  uint64_t streamed = 0;
  size_t completed = 0;
  for (const auto& r : events)
    if (r.completed()) {
      streamed += r.disk_time_ns;
      ++completed;
    }
  std::vector<Request> offline = events;
  compute_disk_times(offline);
  uint64_t recomputed = 0;
  size_t differ = 0;
  for (size_t i = 0; i < offline.size(); ++i) {
    recomputed += offline[i].disk_time_ns;
    if (events[i].completed() && offline[i].disk_time_ns != events[i].disk_time_ns) ++differ;
  }
  uint64_t anomalies = c["completion_not_seen_reissued"] + c["inflight_swept"] +
                       c["pending_clamped"] + c["prog_recursion_misses"];
  std::printf(
      "[measured] %zu records, %llu in-kernel requests; disk time in kernel %llu ns, "
      "from events %llu ns, recomputed offline %llu ns; %zu records differ; "
      "anomalies %llu\n",
      events.size(), (unsigned long long)kreq, (unsigned long long)kernel,
      (unsigned long long)streamed, (unsigned long long)recomputed, differ,
      (unsigned long long)anomalies);
  EXPECT_EQ(kreq, completed);
  EXPECT_EQ(kernel, streamed);  // the same charges, aggregated vs streamed
  EXPECT_EQ(busy->at(0).busy_ns, kernel);
  if (anomalies == 0) {
    EXPECT_EQ(recomputed, kernel);
    EXPECT_EQ(differ, 0u);
  } else {
    // A completion the kernel never delivered keeps the device busy until
    // the request is reissued: the two computations may differ, by little.
    EXPECT_NEAR(double(recomputed), double(kernel), 0.01 * double(kernel));
  }
}

}  // namespace
}  // namespace blkrr::testing
