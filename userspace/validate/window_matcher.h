// The matching engine of the validator, streaming: replayed requests and
// block-layer records are added as they arrive, in any order; advance(w)
// resolves everything before the instant w (the caller has added every
// record before w) and frees it at once. Memory is bounded by the records
// not yet resolved: those of the last window before w, not the whole run.
//
//   WindowMatcher m(options);
//   m.add_replayed(r);  m.add_block(b);   // as they come
//   m.advance(now - window);              // every so often
//   Report rep = m.finish(losses);        // at the end: everything left
//
// A record that comes after advance() passed its time is too late to be
// matched: a replayed request is resolved as not served (missing), a block
// record as late (neither matched nor foreign); both are counted in the
// report (late_requests, late_blocks). When nothing is late (match_requests()
// feeds whole inputs in time order) the result is that of one sweep over
// everything, whenever advance() is called. See docs/validate.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/request.h"
#include "validate/validation.h"
#include "validate/sweep.h"
#include "validate/tally.h"

namespace blkrr::validate {
namespace detail {

// Resolved records waiting to be reported in arrival order.
struct RDone {
  RItem item;
  RState st;
};
struct BDone {
  Block b;
  bool served = false, late = false;
};

}  // namespace detail

class WindowMatcher {
 public:
  explicit WindowMatcher(const MatchOptions& o);
  WindowMatcher(const WindowMatcher&) = delete;
  WindowMatcher& operator=(const WindowMatcher&) = delete;

  // Sectors on the whole disk, times on the block layer's clock.
  void add_replayed(const ReplayedRequest& r);
  void add_block(const Request& b);
  // The same with the record's arrival index given: every index from 0 up
  // once, in any order (match_requests() feeds whole inputs in time order).
  void add_replayed(const ReplayedRequest& r, uint64_t index);
  void add_block(const Request& b, uint64_t index);
  // The instants the sweeps order by: a request's window start, a block
  // record's time (its issue, or its completion when the issue was not seen).
  uint64_t time_of(const ReplayedRequest& r) const { return data_.wstart(r); }
  static uint64_t time_of(const Request& b);
  // Resolves everything before w. Calls with a smaller w than before do nothing.
  void advance(uint64_t w);
  // Resolves everything left and returns the report.
  Report finish(const Losses& losses);

  // Everything before this instant is resolved.
  uint64_t done() const { return data_.done(); }
  // Records held now (added, not yet resolved and counted), and the most held at once.
  uint64_t held_requests() const;
  uint64_t held_blocks() const;
  uint64_t max_held_requests() const { return max_held_r_; }
  uint64_t max_held_blocks() const { return max_held_b_; }
  // The memory of the records held now, each counted at the most it takes
  // where it is held (checked by WindowMatcherHeld.BytesPerHeldRecord), and
  // the most at once. MatchOptions::max_held_bytes caps it.
  uint64_t held_bytes() const;
  // Of the requests held, those whose windows are open, and their bytes.
  uint64_t open_requests() const;
  uint64_t open_bytes() const { return open_requests() * kOpenBytes; }
  uint64_t max_held_bytes() const { return max_held_bytes_; }
  static constexpr uint64_t kWaitingBytes = 64;    // added, its window not open yet
  static constexpr uint64_t kOpenBytes = 400;      // a request whose window is open
  static constexpr uint64_t kResolvedBytes = 192;  // resolved, waiting to be reported in order
  // Records held as a count on an equal one that arrived just before them
  // (Sweep::add): they take no memory of their own.
  uint64_t identical_requests() const {
    return data_.identical_requests + flush_.identical_requests;
  }
  uint64_t identical_blocks() const { return data_.identical_blocks + flush_.identical_blocks; }

 private:
  void request_done(const detail::RItem& r, const detail::RState& st);
  void block_done(const detail::Block& b, const detail::BState& st, bool late);
  void drain();
  // False while `b` may still turn out to be the replayer's own probe.
  bool classify(const detail::BDone& d, detail::BlockClass& c) const;
  void note_held(uint64_t t);
  // MatchOptions::max_held_bytes: resolves the oldest records early.
  void enforce_cap();

  MatchOptions o_;
  NameTable names_;
  detail::Sweep data_;   // pass 1: same operation
  detail::Sweep other_;  // pass 2: another operation, on what pass 1 left
  detail::Sweep flush_;
  detail::Tally tally_;
  // Resolved records wait here until every earlier arrival is resolved: the
  // report counts and lists them in arrival order (heaps, lowest seq on top).
  std::vector<detail::RDone> rdone_;
  std::vector<detail::BDone> bdone_;
  uint64_t next_r_ = 0, next_b_ = 0;    // next to report
  uint64_t added_r_ = 0, added_b_ = 0;  // arrival counters
  uint64_t late_r_ = 0;
  uint64_t first_submit_ = UINT64_MAX, first_served_issue_ = UINT64_MAX;
  uint64_t max_held_r_ = 0, max_held_b_ = 0, max_held_bytes_ = 0;
  uint64_t latest_ = 0;  // the latest time of a record added
  uint64_t shrinks_ = 0, min_window_ = UINT64_MAX;
  bool own_ = false;
};

}  // namespace blkrr::validate
