#include "converters/filters.h"

#include <algorithm>
#include <cmath>

#include "core/args.h"

namespace blkrr {

namespace {
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

// Seconds ("600", "1.5") or a duration with unit ("10m", "250ms").
Result<int64_t> parse_time(std::string_view s) {
  auto d = parse_duration_ns(s);
  if (!d) return d.error();
  if (*d > static_cast<uint64_t>(INT64_MAX)) return Error(ErrorKind::kUsage, "time too large");
  return static_cast<int64_t>(*d);
}
}  // namespace

bool Selection::matches(const Request& r) const {
  if (op_mask && !(op_mask & (1u << static_cast<unsigned>(r.op)))) return false;
  if (!pids.empty() && std::find(pids.begin(), pids.end(), r.pid) == pids.end() &&
      std::find(pids.begin(), pids.end(), r.tgid) == pids.end())
    return false;
  if (!comms.empty() && std::find(comms.begin(), comms.end(), r.comm_view()) == comms.end())
    return false;
  if (!cgroups.empty() && std::find(cgroups.begin(), cgroups.end(), r.cgroup_id) == cgroups.end())
    return false;
  return true;
}

Status parse_u64_list(std::string_view s, std::vector<uint64_t>& out) {
  for (auto part : split(s, ',')) {
    auto v = parse_u64(part);
    if (!v)
      return Error(ErrorKind::kUsage,
                   "expected a comma-separated list of numbers, got '" + std::string(s) + "'");
    out.push_back(*v);
  }
  return {};
}

Status parse_pid_list(std::string_view s, std::vector<uint32_t>& out) {
  std::vector<uint64_t> v;
  BLKRR_TRY(parse_u64_list(s, v));
  for (auto x : v) {
    if (x > UINT32_MAX) return Error(ErrorKind::kUsage, "pid out of range: " + std::to_string(x));
    out.push_back(static_cast<uint32_t>(x));
  }
  return {};
}

Status parse_op_list(std::string_view s, uint32_t& mask) {
  for (auto part : split(s, ',')) {
    auto op = parse_op(part);
    if (!op) {
      return Error(ErrorKind::kUsage, "unknown operation '" + std::string(part) +
                                          "' (use R, W, F, D or read, write, flush, discard, ...)");
    }
    mask |= 1u << static_cast<unsigned>(*op);
  }
  return {};
}

Status parse_window(std::string_view s, Selection& sel) {
  auto parts = split(s, ':');
  if (parts.size() != 2)
    return Error(ErrorKind::kUsage, "expected START:DURATION, e.g. 600:300 or 10m:5m");
  auto a = parse_time(parts[0]);
  if (!a) return a.error();
  auto b = parse_time(parts[1]);
  if (!b) return b.error();
  if (*b <= 0) return Error(ErrorKind::kUsage, "the window must have a positive duration");
  sel.window = true;
  sel.window_start_ns = *a;
  sel.window_len_ns = *b;
  return {};
}

Status parse_slip(std::string_view s, Transform& t) {
  auto parts = split(s, ':');
  if (parts.size() != 2) return Error(ErrorKind::kUsage, "expected EVERY:SECTORS, e.g. 1000:8");
  auto every = parse_u64(parts[0]);
  auto sectors = parse_i64(parts[1]);
  if (!every || *every == 0)
    return Error(ErrorKind::kUsage, "EVERY must be a positive number of requests");
  if (!sectors) return Error(ErrorKind::kUsage, "SECTORS must be a number of sectors");
  t.slip_every = *every;
  t.slip_sectors = *sectors;
  return {};
}

Status parse_subst(std::string_view s, Transform& t) {
  auto parts = split(s, '=');
  if (parts.size() != 2) return Error(ErrorKind::kUsage, "expected FROM=TO, e.g. R=W");
  auto a = parse_op(parts[0]);
  auto b = parse_op(parts[1]);
  if (!a || !b) return Error(ErrorKind::kUsage, "unknown operation in '" + std::string(s) + "'");
  t.subst = true;
  t.subst_from = *a;
  t.subst_to = *b;
  return {};
}

Status parse_spread(std::string_view s, Transform& t) {
  auto parts = split(s, ':');
  if (parts.size() > 3) return Error(ErrorKind::kUsage, "expected FACTOR[:ALIGN[:OFFSET]]");
  auto f = parse_double(parts[0]);
  if (!f || !(*f > 0)) return Error(ErrorKind::kUsage, "FACTOR must be a positive number");
  t.spread_factor = *f;
  if (parts.size() > 1) {
    auto a = parse_u64(parts[1]);
    if (!a || *a == 0)
      return Error(ErrorKind::kUsage, "ALIGN must be a positive number of sectors");
    t.spread_align = *a;
  }
  if (parts.size() > 2) {
    auto o = parse_i64(parts[2]);
    if (!o) return Error(ErrorKind::kUsage, "OFFSET must be a number of sectors");
    t.spread_offset = *o;
  }
  return {};
}

Status parse_resize(std::string_view s, Transform& t) {
  auto parts = split(s, ':');
  if (parts.size() != 1 && parts.size() != 3)
    return Error(ErrorKind::kUsage, "expected FACTOR or FACTOR:MIN:MAX");
  auto f = parse_double(parts[0]);
  if (!f || !(*f > 0)) return Error(ErrorKind::kUsage, "FACTOR must be a positive number");
  t.resize_factor = *f;
  if (parts.size() == 3) {
    auto lo = parse_u64(parts[1]);
    auto hi = parse_u64(parts[2]);
    if (!lo || !hi || *lo > *hi || *hi > UINT32_MAX / 512)
      return Error(ErrorKind::kUsage,
                   "MIN and MAX must be sector counts with MIN <= MAX <= 8388607");
    t.resize_min = *lo;
    t.resize_max = *hi;
  }
  return {};
}

void Transform::apply(Request& r) {
  if (slip_every) {
    if (++slip_step_ >= slip_every) {
      slip_offset_ += slip_sectors;
      slip_step_ = 0;
    }
    int64_t s = static_cast<int64_t>(r.sector) + slip_offset_;
    r.sector = s < 0 ? 0 : static_cast<uint64_t>(s);
  }
  if (subst && r.op == subst_from) r.op = subst_to;
  if (spread_factor > 0) {
    long double pos = static_cast<long double>(r.sector);
    uint64_t rest = r.sector % spread_align;
    uint64_t base = static_cast<uint64_t>(std::floor(pos * spread_factor / spread_align));
    int64_t s = static_cast<int64_t>(base * spread_align + rest) + spread_offset;
    r.sector = s < 0 ? 0 : static_cast<uint64_t>(s);
  }
  if (resize_factor > 0) {
    uint64_t sectors = (r.bytes + 511u) / 512u;
    auto n = static_cast<uint64_t>(std::floor(static_cast<long double>(sectors) * resize_factor));
    n = std::clamp(n, resize_min, resize_max);
    r.bytes = static_cast<uint32_t>(n * 512);
  }
}

}  // namespace blkrr
