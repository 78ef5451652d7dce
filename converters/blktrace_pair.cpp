#include "converters/blktrace.h"

namespace blkrr::blktrace {

namespace {
constexpr uint64_t kCompletionWaitNs = 10ull * 1000000000ull;
}

void Pairer::issue(const Request& r) {
  uint64_t seq = base_seq_ + pending_.size();
  pending_.push_back({r, false});
  if (pair_) by_key_[key_of(r.dev, r.sector)].push_back(seq);
}

uint64_t Pairer::take(DevT dev, uint64_t sector, bool& found) {
  auto it = by_key_.find(key_of(dev, sector));
  found = it != by_key_.end();
  if (!found) return 0;
  uint64_t seq = it->second.front();
  it->second.erase(it->second.begin());
  if (it->second.empty()) by_key_.erase(it);
  return seq;
}

void Pairer::complete(DevT dev, uint64_t sector, uint64_t time_ns, int32_t error) {
  set_now(time_ns);
  if (!pair_) return;
  bool found;
  uint64_t seq = take(dev, sector, found);
  if (!found) {
    ++counters_["completion without issue"];
    return;
  }
  Request& r = pending_[seq - base_seq_].r;
  if (time_ns < r.issue_ns) ++counters_["completion before issue (CPU clocks apart; latency 0)"];
  r.complete_ns = std::max(time_ns, r.issue_ns);
  r.error = error;
}

void Pairer::requeue(DevT dev, uint64_t sector) {
  if (!pair_) return;
  bool found;
  uint64_t seq = take(dev, sector, found);
  if (!found) return;
  pending_[seq - base_seq_].dead = true;
  ++counters_["requeued (issued again later)"];
}

void Pairer::forget_front_key() {
  const Request& r = pending_.front().r;
  auto it = by_key_.find(key_of(r.dev, r.sector));
  if (it == by_key_.end()) return;
  auto& q = it->second;
  for (auto qi = q.begin(); qi != q.end(); ++qi) {
    if (*qi == base_seq_) {
      q.erase(qi);
      break;
    }
  }
  if (q.empty()) by_key_.erase(it);
}

bool Pairer::pop(Request& out, bool at_end) {
  while (!pending_.empty() && pending_.front().dead) {
    pending_.pop_front();
    ++base_seq_;
  }
  if (pending_.empty()) return false;
  Request& r = pending_.front().r;
  if (pair_ && !r.completed()) {
    bool full = pending_.size() > kMaxInFlight;
    if (!at_end && !full && now_ <= r.issue_ns + kCompletionWaitNs) return false;
    r.rec_flags |= kRecCompletionNotSeen;
    forget_front_key();
    ++counters_["no completion event"];
    if (full) ++counters_["no completion event: given up, more than 262144 requests in flight"];
  }
  out = r;
  pending_.pop_front();
  ++base_seq_;
  return true;
}

}  // namespace blkrr::blktrace
