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
// the replay's RecordBus; take() after the bus finished.
class ValidatorSink final : public replay::RecordSink {
 public:
  explicit ValidatorSink(uint64_t start_ns = 0) : start_ns_(start_ns) {}
  // The start instant may be fixed after the sink was registered.
  void set_start(uint64_t start_ns) { start_ns_ = start_ns; }
  void on_records(std::span<const replay::ReplayRecord> records) override {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& rec : records) recs_.push_back(rec);
  }
  // The records converted with the start instant known now.
  std::vector<ReplayedRequest> take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<ReplayedRequest> out;
    out.reserve(recs_.size());
    for (const auto& rec : recs_) out.push_back(from_replay_record(rec, start_ns_));
    recs_.clear();
    recs_.shrink_to_fit();
    return out;
  }

 private:
  uint64_t start_ns_;
  std::mutex mu_;
  std::vector<replay::ReplayRecord> recs_;
};

}  // namespace blkrr::validate
