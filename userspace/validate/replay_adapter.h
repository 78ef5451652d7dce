// Glue between the replay engine (replay/record.h) and the validator:
// converts the replayer's records and collects them as a RecordSink.
// Header-only so that blkrr_validate does not depend on blkrr_replay.
#pragma once

#include <mutex>
#include <span>
#include <vector>

#include "replay/record.h"
#include "validate/model.h"

namespace blkrr::validate {

// `start_ns` is the CLOCK_MONOTONIC instant the record times are relative to.
inline ReplayedRequest from_replay_record(const replay::ReplayRecord& rec, uint64_t start_ns) {
  ReplayedRequest r;
  r.id = rec.req.seq;
  r.sector = rec.req.sector;
  r.sectors = rec.req.op == Op::kFlush ? 0 : rec.req.sectors;
  r.op = rec.req.op;
  if (rec.flags & replay::kReplayDropped) {
    r.status = ReplayStatus::kDropped;
  } else if (rec.flags & replay::kReplayNotStarted) {
    r.status = ReplayStatus::kNotStarted;
  } else {
    r.status = (rec.flags & replay::kReplayError) ? ReplayStatus::kFailed : ReplayStatus::kDone;
    r.submit_ns = start_ns + rec.submit_ns;
    r.complete_ns = start_ns + rec.complete_ns;
  }
  return r;
}

// Collects the replay's records for LiveValidator::finish(). Register it with
// the replay's RecordBus; take() after the bus finished. Each record is
// converted as it arrives (times relative to the start instant until take()),
// so the sink keeps 48 bytes per request, not the whole replay record.
class ValidatorSink final : public replay::RecordSink {
 public:
  explicit ValidatorSink(uint64_t start_ns = 0) : start_ns_(start_ns) {}
  // The start instant may be fixed after the sink was registered.
  void set_start(uint64_t start_ns) { start_ns_ = start_ns; }
  void on_records(std::span<const replay::ReplayRecord> records) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (reqs_.capacity() == 0) reqs_.reserve(1u << 16);
    for (const auto& rec : records) reqs_.push_back(from_replay_record(rec, 0));
  }
  // The requests, with the start instant known now.
  std::vector<ReplayedRequest> take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<ReplayedRequest> out;
    out.swap(reqs_);
    for (auto& r : out) {
      if (!r.submitted()) continue;
      r.submit_ns += start_ns_;
      r.complete_ns += start_ns_;
    }
    return out;
  }

 private:
  uint64_t start_ns_;
  std::mutex mu_;
  std::vector<ReplayedRequest> reqs_;
};

}  // namespace blkrr::validate
