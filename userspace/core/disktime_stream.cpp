#include "core/disktime_stream.h"

#include <algorithm>

namespace blkrr {

uint32_t DiskTimeStream::hold(const Request& r) {
  if (!free_.empty()) {
    uint32_t s = free_.back();
    free_.pop_back();
    slots_[s] = r;
    return s;
  }
  slots_.push_back(r);
  return static_cast<uint32_t>(slots_.size() - 1);
}

void DiskTimeStream::add(const Request& in) {
  Request r = in;
  r.disk_time_ns = 0;
  // No completion, or a zero-length interval: adds nothing to the busy time.
  if (!r.completed() || r.complete_ns <= r.issue_ns) {
    ready_.push_back(r);
    return;
  }
  uint64_t issue = r.issue_ns;
  if (issue < watermark_) {  // late: its issue is behind what was applied
    Device& d = devices_[r.dev];
    uint64_t upto = std::min(r.complete_ns, watermark_);
    r.disk_time_ns = fill_idle(d, issue, upto);
    if (r.complete_ns <= watermark_) {
      d.total.busy_ns += r.disk_time_ns;
      d.total.completions++;
      ready_.push_back(r);
      return;
    }
    issue = watermark_;  // takes part in the rule from here on
  }
  uint32_t s = hold(r);
  events_.push({issue, false, s});
  events_.push({r.complete_ns, true, s});
}

// Charges the part of [from, to) the device was idle in (to <= watermark)
// and marks it busy.
uint64_t DiskTimeStream::fill_idle(Device& d, uint64_t from, uint64_t to) {
  uint64_t charged = 0;
  auto it = std::lower_bound(d.gaps.begin(), d.gaps.end(), from,
                             [](const Interval& g, uint64_t t) { return g.end <= t; });
  while (it != d.gaps.end() && it->start < to) {
    const uint64_t a = std::max(it->start, from), b = std::min(it->end, to);
    charged += b - a;
    if (a > it->start && b < it->end) {  // split in two
      Interval right{b, it->end};
      it->end = a;
      it = d.gaps.insert(it + 1, right);
      break;
    }
    if (a > it->start) {
      it->end = a;
      ++it;
    } else if (b < it->end) {
      it->start = b;
      break;
    } else {
      it = d.gaps.erase(it);
    }
  }
  // The open idle period, from idle_since up to the watermark.
  if (d.tracker.pending() == 0 && to > d.idle_since) {
    const uint64_t a = std::max(from, d.idle_since);
    charged += to - a;
    if (a > d.idle_since) d.gaps.push_back({d.idle_since, a});
    d.idle_since = to;
  }
  return charged;
}

void DiskTimeStream::apply(const Ev& e, const Sink& sink) {
  Request& r = slots_[e.slot];
  Device& d = devices_[r.dev];
  if (!e.is_complete) {
    if (d.tracker.pending() == 0 && e.t > d.idle_since) d.gaps.push_back({d.idle_since, e.t});
    d.tracker.issue(e.t);
    return;
  }
  r.disk_time_ns += d.tracker.complete(e.t);
  if (d.tracker.pending() == 0) d.idle_since = e.t;
  d.total.busy_ns += r.disk_time_ns;
  d.total.completions++;
  sink(r);
  free_.push_back(e.slot);
}

void DiskTimeStream::trim(Device& d) {
  const uint64_t keep = watermark_ > horizon_ns_ ? watermark_ - horizon_ns_ : 0;
  while (!d.gaps.empty() && d.gaps.front().end < keep) d.gaps.pop_front();
}

void DiskTimeStream::release(uint64_t watermark, const Sink& sink) {
  for (const auto& r : ready_) sink(r);
  ready_.clear();
  while (!events_.empty() && events_.top().t < watermark) {
    Ev e = events_.top();
    events_.pop();
    apply(e, sink);
  }
  if (watermark > watermark_) watermark_ = watermark;
  for (auto& [dev, d] : devices_) trim(d);
}

void DiskTimeStream::finish(const Sink& sink) {
  release(UINT64_MAX, sink);
}

std::vector<DiskTimeStream::DeviceTotal> DiskTimeStream::totals() const {
  std::vector<DeviceTotal> out;
  for (const auto& [dev, d] : devices_) {
    DeviceTotal t = d.total;
    t.dev = dev;
    out.push_back(t);
  }
  return out;
}

}  // namespace blkrr
