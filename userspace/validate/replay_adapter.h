// Glue between the replay engine (replay/record.h) and the validator:
// converts the replayer's records and hands them to the live validator as
// they complete (a RecordSink).
// Header-only so that blkrr_validate does not depend on blkrr_replay.
#pragma once

#include <mutex>
#include <span>
#include <vector>

#include "replay/record.h"
#include "validate/live_validator.h"
#include "validate/validation.h"

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

// The replay's records for the validator. Register it with the replay's
// RecordBus. With stream_to(v), once the bus announced the start instant
// (on_start) every record goes to v->add_replayed() as it arrives, and
// nothing is kept here; records without a known start instant (or without a
// validator) are kept, converted (48 bytes each), for take() after the bus
// finished.
class ValidatorSink final : public replay::RecordSink {
 public:
  explicit ValidatorSink(uint64_t start_ns = 0) : start_ns_(start_ns) {}
  void stream_to(LiveValidator* v) { target_ = v; }
  // The start instant may be fixed after the sink was registered.
  void set_start(uint64_t start_ns) { start_ns_ = start_ns; }
  void on_start(uint64_t start_ns) override {
    std::lock_guard<std::mutex> lk(mu_);
    start_ns_ = start_ns;
    started_ = true;
  }
  void on_records(std::span<const replay::ReplayRecord> records) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (target_ != nullptr && started_) {
      batch_.clear();
      for (const auto& rec : records) batch_.push_back(from_replay_record(rec, start_ns_));
      target_->add_replayed(batch_);
      return;
    }
    if (reqs_.capacity() == 0) reqs_.reserve(1u << 16);
    for (const auto& rec : records) reqs_.push_back(from_replay_record(rec, 0));
  }
  // The requests kept, with the start instant known now.
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
  bool started_ = false;
  LiveValidator* target_ = nullptr;
  std::mutex mu_;
  std::vector<ReplayedRequest> reqs_, batch_;
};

}  // namespace blkrr::validate
