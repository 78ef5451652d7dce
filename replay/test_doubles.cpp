#include "replay/test_doubles.h"

#include <algorithm>
#include <cstring>

namespace blkrr::replay::testing {

Request make_req(uint64_t t_ns, Op op, uint64_t sector, uint32_t sectors, uint32_t pid) {
  Request r;
  r.issue_ns = t_ns;
  r.op = op;
  r.sector = sector;
  r.bytes = sectors * 512;
  r.pid = pid;
  r.tgid = pid;
  return r;
}

Status FakeEngine::submit(std::span<const IoOp> ops) {
  const uint64_t now = clock_.now_ns();
  for (const IoOp& op : ops) {
    log.push_back({op, now});
    pending_.push_back({op, now, now + latency(op), order_++});
    in_flight_at_submit.push_back(static_cast<uint32_t>(pending_.size()));
  }
  return {};
}

Status FakeEngine::poll(std::vector<IoCompletion>& out) {
  const uint64_t now = clock_.now_ns();
  std::vector<Pending> due;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->done_ns <= now) {
      due.push_back(*it);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(due.begin(), due.end(), [](const Pending& a, const Pending& b) {
    return a.done_ns != b.done_ns ? a.done_ns < b.done_ns : a.order < b.order;
  });
  for (const Pending& p : due) {
    const IoOp& op = p.op;
    const uint64_t first = op.offset / 512;
    for (uint32_t i = 0; i < op.bytes / 512; ++i) {
      auto* b = static_cast<uint8_t*>(op.buf) + static_cast<size_t>(i) * 512;
      if (op.kind == IoKind::kWrite) {
        disk[first + i].assign(b, b + 512);
      } else if (op.kind == IoKind::kRead) {
        auto it = disk.find(first + i);
        if (it != disk.end())
          std::memcpy(b, it->second.data(), 512);
        else
          std::memset(b, 0, 512);
      }
    }
    out.push_back(IoCompletion{op.id, static_cast<int32_t>(op.bytes), p.submit_ns, p.done_ns});
  }
  return {};
}

Status FakeEngine::wait(std::vector<IoCompletion>& out, uint64_t until_ns) {
  ++waits;
  uint64_t next = until_ns + wake_late_ns;  // a timer wake-up comes late
  for (const Pending& p : pending_) next = std::min(next, p.done_ns);
  clock_.advance_to(next);
  return poll(out);
}

}  // namespace blkrr::replay::testing
