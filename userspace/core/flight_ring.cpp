#include "core/flight_ring.h"

#include <zlib.h>

#include <algorithm>

#include "core/record_codec.h"

namespace blkrr {

namespace {

bool in_window(const Request& r, uint64_t start, uint64_t end) {
  return r.issue_ns >= start && r.issue_ns < end;
}

}  // namespace

void FlightRing::add(const Request& r) {
  pending_.push_back(r);
}

Status FlightRing::seal() {
  if (!pending_.empty()) {
    auto b = std::make_shared<RingBlock>();
    encode_records(pending_, shuffled_);
    pack_columns(shuffled_, pending_.size(), packed_);
    uLongf len = compressBound(static_cast<uLong>(packed_.size()));
    b->zdata.resize(len);
    // Level 1: the ring compresses every request, a dump reads few of them.
    const int zr = compress2(b->zdata.data(), &len, packed_.data(), packed_.size(), 1);
    if (zr != Z_OK)
      return Error(ErrorKind::kFailed,
                   "--ring: compressing a block failed (zlib " + std::to_string(zr) + ")");
    b->zdata.resize(len);
    b->zdata.shrink_to_fit();
    b->nrec = static_cast<uint32_t>(pending_.size());
    b->raw_len = static_cast<uint32_t>(packed_.size());
    for (const auto& r : pending_) {
      b->min_issue = std::min(b->min_issue, r.issue_ns);
      b->max_issue = std::max(b->max_issue, r.issue_ns);
    }
    bytes_ += b->zdata.size() + sizeof(RingBlock);
    records_ += b->nrec;
    blocks_.push_back(std::move(b));
    pending_.clear();
  }
  while (front_ < blocks_.size() && bytes() > max_bytes_) {
    evicted_mem_ += blocks_[front_]->nrec;
    memory_floor_ns_ = std::max(memory_floor_ns_, blocks_[front_]->max_issue + 1);
    drop_front();
  }
  return {};
}

void FlightRing::drop_front() {
  bytes_ -= blocks_[front_]->zdata.size() + sizeof(RingBlock);
  records_ -= blocks_[front_]->nrec;
  blocks_[front_].reset();
  ++front_;
  if (front_ > 64 && front_ * 2 > blocks_.size()) {  // compact now and then
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<ptrdiff_t>(front_));
    front_ = 0;
  }
}

void FlightRing::evict_before(uint64_t keep_from) {
  while (front_ < blocks_.size() && blocks_[front_]->max_issue < keep_from) drop_front();
}

RingSnapshot FlightRing::snapshot(uint64_t start, uint64_t end) const {
  RingSnapshot s;
  s.start = start;
  s.end = end;
  for (size_t i = front_; i < blocks_.size(); ++i)
    if (blocks_[i]->max_issue >= start && blocks_[i]->min_issue < end)
      s.blocks.push_back(blocks_[i]);
  for (const auto& r : pending_)
    if (in_window(r, start, end)) s.pending.push_back(r);
  return s;
}

Status RingSnapshot::for_each(const std::function<Status(const Request&)>& each) const {
  std::vector<uint8_t> packed, shuffled;
  std::vector<Request> recs;
  for (const auto& b : blocks) {
    packed.resize(b->raw_len);
    uLongf len = b->raw_len;
    if (uncompress(packed.data(), &len, b->zdata.data(), b->zdata.size()) != Z_OK ||
        len != b->raw_len || !unpack_columns(packed.data(), len, b->nrec, shuffled))
      return Error(ErrorKind::kInternal,
                   "--ring: a block in memory does not decode (a bug: please report it)");
    decode_records(shuffled, b->nrec, recs);
    for (const auto& r : recs)
      if (in_window(r, start, end)) BLKRR_TRY(each(r));
  }
  for (const auto& r : pending) BLKRR_TRY(each(r));
  return {};
}

}  // namespace blkrr
