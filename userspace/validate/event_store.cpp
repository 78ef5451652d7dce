#include "validate/event_store.h"

#include <cstring>

namespace blkrr::validate {

namespace {
constexpr size_t kMaxTable = 65535;
}

EventStore::EventStore() {
  // The first chunk before the replay starts: the common case (< 65,536
  // requests per chunk) never allocates in add(). Zeroed here, so that its
  // pages are not faulted in during the run either.
  chunks_.emplace_back(new Compact[kChunk]());
}

uint16_t EventStore::dev_index(DevT dev, DevT part) {
  std::pair<DevT, DevT> k{dev, part};
  if (last_dev_ < devs_.size() && devs_[last_dev_] == k) return last_dev_;
  auto it = dev_ids_.find(k);
  if (it != dev_ids_.end()) return last_dev_ = it->second;
  if (devs_.size() >= kMaxTable) {
    overflows_++;
    return last_dev_ = static_cast<uint16_t>(devs_.size() - 1);
  }
  last_dev_ = static_cast<uint16_t>(devs_.size());
  devs_.push_back(k);
  dev_ids_.emplace(k, last_dev_);
  return last_dev_;
}

EventStore::Compact& EventStore::slot() {
  size_t c = size_ / kChunk;
  if (c == chunks_.size()) chunks_.emplace_back(new Compact[kChunk]);
  return chunks_[c][size_ % kChunk];
}

void EventStore::add(const Request& r) {
  Compact& e = slot();
  e.issue_ns = r.issue_ns;
  e.complete_ns = r.complete_ns;
  e.sector = r.sector;
  e.bytes = r.bytes;
  e.pid = r.pid;
  e.tgid = r.tgid;
  e.error = r.error;
  e.flags = r.flags;
  e.comm = comms_.intern(r.comm);
  e.dev = dev_index(r.dev, r.part);
  e.op = static_cast<uint8_t>(r.op);
  e.rec_flags = r.rec_flags;
  size_++;
}

std::vector<Request> EventStore::take() {
  std::vector<Request> out;
  out.reserve(size_);
  for (size_t i = 0; i < size_; i++) {
    const Compact& e = chunks_[i / kChunk][i % kChunk];
    Request r;
    r.issue_ns = e.issue_ns;
    r.complete_ns = e.complete_ns;
    r.sector = e.sector;
    r.bytes = e.bytes;
    r.pid = e.pid;
    r.tgid = e.tgid;
    r.error = e.error;
    r.flags = e.flags;
    r.op = static_cast<Op>(e.op);
    r.rec_flags = e.rec_flags;
    r.comm = comms_.at(e.comm);
    r.dev = devs_[e.dev].first;
    r.part = devs_[e.dev].second;
    out.push_back(r);
    if ((i + 1) % kChunk == 0) chunks_[i / kChunk].reset();  // converted: free it now
  }
  chunks_.clear();
  size_ = 0;
  return out;
}

}  // namespace blkrr::validate
