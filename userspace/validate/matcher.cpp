// Builds the report from what the sweeps resolved (tally.h): coverage,
// alterations, latencies, foreign I/O and the replayer's own probe, verdict.
// match_requests() runs the window matcher over whole inputs. See
// docs/validate.md for the rules.
#include "validate/matcher.h"

#include <algorithm>
#include <tuple>

#include "validate/tally.h"
#include "validate/window_matcher.h"

namespace blkrr::validate {
namespace detail {
namespace {

RequestRef ref_of(const ReplayedRequest& r) {
  return {r.id, r.sector, r.sectors, r.op, r.status};
}

}  // namespace

// A covered request: splits, `larger`, and its latency pair.
void Tally::covered(const ReplayedRequest& r, const RState& st) {
  const bool is_flush = r.op == Op::kFlush;
  rep_.covered++;
  if (st.pieces >= 2 && !is_flush) {
    rep_.split_requests++;
    rep_.split_pieces += st.pieces;
  }
  if (st.larger) {
    rep_.altered_count++;
    if (rep_.altered.size() < rep_.options.max_listed)
      rep_.altered.push_back({ref_of(r), AlterKind::kLarger, r.op, st.seen_lo,
                              static_cast<uint32_t>(st.seen_hi - st.seen_lo), st.covered});
  }
  if (r.complete_ns == kNoTime || r.status != ReplayStatus::kDone) return;
  if (st.completion_missing) {
    rep_.latency_unknown++;
    return;
  }
  uint64_t rl = r.complete_ns > r.submit_ns ? r.complete_ns - r.submit_ns : 0;
  uint64_t bl = st.last_complete > st.first_issue ? st.last_complete - st.first_issue : 0;
  if (bl > rl + kOverheadToleranceNs) rep_.latency_inconsistent++;
  replay_.add(static_cast<double>(rl) / 1e3);
  block_.add(static_cast<double>(bl) / 1e3);
  overhead_.add((static_cast<double>(rl) - static_cast<double>(bl)) / 1e3);
  if (rep_.options.per_request) rep_.per_request.push_back({r.id, rl, bl});
}

void Tally::not_covered(const ReplayedRequest& r, const RState& st) {
  if (st.covered > 0 || st.alt_op) {
    rep_.altered_count++;
    if (rep_.altered.size() < rep_.options.max_listed) {
      AlterKind k = st.covered > 0 ? AlterKind::kShort : AlterKind::kOp;
      rep_.altered.push_back({ref_of(r), k, k == AlterKind::kOp ? st.seen_op : r.op, st.seen_lo,
                              static_cast<uint32_t>(st.seen_hi - st.seen_lo),
                              k == AlterKind::kOp ? st.alt_covered : st.covered});
    }
    return;
  }
  rep_.missing_count++;
  if (rep_.missing.size() < rep_.options.max_listed) rep_.missing.push_back(ref_of(r));
}

void Tally::request(const ReplayedRequest& r, const RState& st) {
  rep_.replayed++;
  switch (r.status) {
    case ReplayStatus::kDone:
      rep_.done++;
      break;
    case ReplayStatus::kFailed:
      rep_.failed++;
      break;
    case ReplayStatus::kDropped:
      rep_.dropped++;
      rep_.expected_missing_count++;
      if (rep_.expected_missing.size() < rep_.options.max_listed)
        rep_.expected_missing.push_back(ref_of(r));
      return;
    case ReplayStatus::kNotStarted:
      rep_.not_started++;
      return;
  }
  rep_.submitted++;
  const bool is_flush = r.op == Op::kFlush;
  const bool full = is_flush ? st.pieces > 0 : st.covered >= r.sectors;
  if (is_flush && !full && !rep_.options.flush_reaches_device) {
    rep_.flushes_absorbed++;
    rep_.covered++;
  } else if (full) {
    covered(r, st);
  } else {
    not_covered(r, st);
  }
}

void Tally::foreign(const Block& b, std::string_view comm_view) {
  rep_.foreign_count++;
  rep_.foreign_bytes += b.bytes;
  std::string comm(comm_view);
  if (rep_.foreign.size() < rep_.options.max_listed)
    rep_.foreign.push_back({b.sector, sectors_of(b), b.op, b.pid, comm, b.issue_ns});
  auto& p = by_proc_[{b.pid, comm}];
  p.pid = b.pid;
  p.comm = comm;
  p.requests++;
  p.bytes += b.bytes;
}

void Tally::own_probe(const Block& b, std::string_view comm_view) {
  std::string comm(comm_view);
  auto it = std::find_if(rep_.own_probe.begin(), rep_.own_probe.end(),
                         [&](const OwnProbe& p) { return p.pid == b.pid && p.comm == comm; });
  if (it == rep_.own_probe.end()) {
    rep_.own_probe.push_back({b.pid, comm, 0, 0, b.issue_ns, b.issue_ns});
    it = rep_.own_probe.end() - 1;
  }
  it->requests++;
  it->bytes += b.bytes;
  it->first_ns = std::min(it->first_ns, b.issue_ns);
  it->last_ns = std::max(it->last_ns, b.issue_ns);
}

void Tally::block(const Block& b, BlockClass c, std::string_view comm) {
  rep_.observed++;
  if (b.rec_flags & kRecCompletionNotSeen) {
    completion_not_seen_++;
    if (c == BlockClass::kServed) completion_not_seen_served_++;
  }
  if (b.rec_flags & kRecIssueNotSeen) issue_not_seen_++;
  switch (c) {
    case BlockClass::kServed:
      rep_.matched_block++;
      break;
    case BlockClass::kOwnProbe:
      own_probe(b, comm);
      break;
    case BlockClass::kForeign:
      foreign(b, comm);
      break;
    case BlockClass::kLate:
      rep_.late_blocks++;
      break;
  }
}

void Tally::latency_summaries() {
  if (rep_.latency_inconsistent > 0) {
    // Overhead = replay latency - block latency cannot be negative when the
    // block requests really served the request: the pairing is wrong.
    rep_.latency_known = false;
    rep_.latency_reason = std::to_string(rep_.latency_inconsistent) + " of " +
                          std::to_string(replay_.count()) +
                          " requests were paired with block-layer I/O that took longer than the "
                          "replayer saw (negative overhead): the pairing is wrong, so no latency "
                          "is reported";
    rep_.per_request.clear();
    return;
  }
  rep_.replay_latency_us = replay_.summary();
  rep_.block_latency_us = block_.summary();
  rep_.overhead_us = overhead_.summary();
}

void Tally::verdict() {
  const uint64_t late = rep_.late_requests + rep_.late_blocks;
  if (rep_.losses.hides_requests()) {
    rep_.verdict = Verdict::kUnknown;
    rep_.verdict_reason = "the capture lost events, so requests may be missing from it";
  } else if (rep_.covered == rep_.submitted) {
    rep_.verdict = Verdict::kComplete;
    rep_.verdict_reason = "every submitted request was served by the block layer";
  } else if (late > 0) {
    rep_.verdict = Verdict::kUnknown;
    rep_.verdict_reason = std::to_string(late) +
                          " records came after the validation window had closed on them, so "
                          "requests not found may have been served (a longer --validate-window "
                          "keeps them)";
  } else {
    rep_.verdict = Verdict::kIncomplete;
    rep_.verdict_reason = std::to_string(rep_.submitted - rep_.covered) +
                          " submitted requests were not fully served as asked";
  }
  if (!rep_.latency_known) rep_.verdict_reason += "; latency unknown: " + rep_.latency_reason;
}

Report Tally::finish(const Losses& losses, uint64_t merged_block, uint64_t merged_requests,
                     uint64_t partly_foreign, uint64_t late_requests) {
  rep_.losses = losses;
  rep_.losses.strict_completions = rep_.options.strict_completions;
  rep_.losses.completion_not_seen += completion_not_seen_;
  rep_.losses.completion_not_seen_served += completion_not_seen_served_;
  rep_.losses.issue_not_seen_records += issue_not_seen_;
  rep_.merged_block = merged_block;
  rep_.merged_requests = merged_requests;
  rep_.partly_foreign = partly_foreign;
  rep_.late_requests = late_requests;
  latency_summaries();
  for (auto& [k, p] : by_proc_) rep_.foreign_by_process.push_back(std::move(p));
  by_proc_.clear();
  std::stable_sort(
      rep_.foreign_by_process.begin(), rep_.foreign_by_process.end(),
      [](const ForeignProcess& a, const ForeignProcess& b) { return a.requests > b.requests; });
  verdict();
  return std::move(rep_);
}

}  // namespace detail

Report match_requests(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& observed, const Losses& losses,
                      const MatchOptions& opts) {
  // Fed in time order, resolving as it goes, the matcher holds little at a
  // time; each record keeps its index as its arrival order.
  WindowMatcher m(opts);
  struct Item {
    uint64_t t;
    uint32_t i;
    bool block;
  };
  std::vector<Item> order;
  order.reserve(replayed.size() + observed.size());
  for (uint32_t i = 0; i < replayed.size(); i++)
    order.push_back({replayed[i].submitted() ? m.time_of(replayed[i]) : 0, i, false});
  for (uint32_t i = 0; i < observed.size(); i++)
    order.push_back({WindowMatcher::time_of(observed[i]), i, true});
  std::sort(order.begin(), order.end(), [](const Item& a, const Item& b) {
    return std::tie(a.t, a.block, a.i) < std::tie(b.t, b.block, b.i);
  });
  constexpr size_t kStep = 256;  // records between two advances
  size_t since = 0;
  for (const Item& it : order) {
    if (++since >= kStep && it.t > m.done()) {
      m.advance(it.t);  // everything before it.t has been added
      since = 0;
    }
    if (it.block)
      m.add_block(observed[it.i], it.i);
    else
      m.add_replayed(replayed[it.i], it.i);
  }
  return m.finish(losses);
}

}  // namespace blkrr::validate
