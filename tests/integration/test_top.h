// Helpers of the top/snoop integration tests: the kernel's blk tracer on one
// device (tracefs) and the union of its D..C intervals, JSON lines and
// /metrics parsing, /sys/block/X/stat io_ticks, uniform known loads.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/test_capture_skip.h"
#include "capture/capture.h"
#include "core/disktime.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {

using nlohmann::json;

inline void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// The JSON objects of a command's output, without the header and counters
// objects that `snoop --json` and `dump --json` put around the records.
inline std::vector<json> json_lines(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] != '{') continue;
    json j = json::parse(l);
    if (j.contains("type") && (j["type"] == "header" || j["type"] == "counters")) continue;
    v.push_back(std::move(j));
  }
  return v;
}

// The header object of `snoop --json` / `dump --json` output (null if none).
inline json json_header(const std::string& out) {
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] != '{') continue;
    json j = json::parse(l);
    if (j.value("type", "") == "header") return j;
  }
  return nullptr;
}

struct Totals {
  uint64_t requests = 0, bytes = 0, disk_time_ns = 0;
};

// Sums of the rows of every interval, per comm and direction ("fio/read").
inline std::map<std::string, Totals> sum_rows(const std::vector<json>& snaps) {
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

// Requests the capture could not count, one per request (a skipped program,
// prog_recursion_misses, shows up again as one of these, so it is left out).
inline bool request_loss(const std::string& name) {
  return name == "completion_not_seen_reissued" || name == "completion_not_seen_checked" ||
         name == "completion_not_seen_idle" || name == "inflight_swept" ||
         name == "inflight_map_full" || name == "agg_map_full";
}

inline uint64_t sum_lost(const std::vector<json>& snaps) {
  uint64_t n = 0;
  for (const auto& s : snaps)
    for (const auto& [k, v] : s["lost"].items())
      if (request_loss(k)) n += v.get<uint64_t>();
  return n;
}

inline std::string http_get(uint16_t port, const std::string& path) {
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
inline std::map<std::string, std::string> metrics_of(const std::string& http) {
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
inline TraceBusy busy_from_trace(const std::string& text, DevT dev) {
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

inline uint64_t io_ticks_ms(const std::string& name) {
  std::ifstream in("/sys/block/" + name + "/stat");
  std::vector<uint64_t> f;
  for (uint64_t v; in >> v;) f.push_back(v);
  return f.size() > 9 ? f[9] : 0;
}

inline std::vector<std::vector<IoOp>> uniform(int threads, int per_thread, Op op, uint32_t bytes,
                                              uint64_t first_sector) {
  std::vector<std::vector<IoOp>> out(threads);
  uint64_t stride = bytes / 512 * 2;  // gaps between requests: no merges
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i)
      out[t].push_back({op, first_sector + (uint64_t(t) * per_thread + i) * stride, bytes});
  return out;
}

}  // namespace blkrr::testing
