// Test doubles for the replay loop: a clock that only moves when told to and
// an engine whose operations take a scripted time on that clock.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "converters/source.h"
#include "replay/replay_clock.h"
#include "replay/engine.h"

namespace blkrr::replay::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(uint64_t t0 = 1'000'000'000) : now_(t0) {}
  uint64_t now_ns() override { return now_; }
  void sleep_until(uint64_t t) override { advance_to(t); }
  void relax(uint64_t t) override { advance_to(t); }
  uint64_t realtime_ns() override { return now_ + realtime_offset; }
  void advance_to(uint64_t t) {
    if (t > now_) now_ = t;
  }
  uint64_t realtime_offset = 1'700'000'000'000'000'000ull;

 private:
  uint64_t now_;
};

// Every operation completes `latency(op)` after its submission; what was
// submitted is logged in order. Reads return the bytes of `disk` (writes
// store into it), so verification can be tested.
class FakeEngine final : public Engine {
 public:
  explicit FakeEngine(FakeClock& clock) : clock_(clock) {}
  std::string_view name() const override { return "fake"; }
  Status submit(std::span<const IoOp> ops) override;
  Status poll(std::vector<IoCompletion>& out) override;
  Status wait(std::vector<IoCompletion>& out, uint64_t until_ns) override;
  uint32_t in_flight() const override { return static_cast<uint32_t>(pending_.size()); }

  struct Submitted {
    IoOp op;
    uint64_t at_ns;
  };
  std::vector<Submitted> log;
  std::vector<uint32_t> in_flight_at_submit;  // in flight right after each submission
  std::function<uint64_t(const IoOp&)> latency = [](const IoOp&) { return 100'000ull; };
  std::map<uint64_t, std::vector<uint8_t>> disk;  // sector -> 512 bytes
  uint64_t wake_late_ns = 0;                      // wait() without a completion returns this late
  uint64_t waits = 0;                             // wait() calls (the loop went to sleep)

 private:
  struct Pending {
    IoOp op;
    uint64_t submit_ns, done_ns, order;
  };
  FakeClock& clock_;
  std::vector<Pending> pending_;
  uint64_t order_ = 0;
};

// A RequestSource over a vector.
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<Request> reqs, bool absolute_time = false)
      : reqs_(std::move(reqs)) {
    info_.absolute_time = absolute_time;
  }
  Result<bool> next(Request& out) override {
    if (pos_ >= reqs_.size()) return false;
    out = reqs_[pos_++];
    return true;
  }
  void set_sorted(bool sorted) { info_.sorted_by_issue = sorted; }

 private:
  std::vector<Request> reqs_;
  size_t pos_ = 0;
};

Request make_req(uint64_t t_ns, Op op, uint64_t sector, uint32_t sectors, uint32_t pid = 0);

}  // namespace blkrr::replay::testing
