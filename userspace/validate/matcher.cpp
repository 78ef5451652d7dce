// Runs the matcher's sweeps (sweep.h) and builds the report: coverage,
// alterations, latencies, foreign I/O and the replayer's own probe, verdict.
// See docs/validate.md for the rules.
#include "validate/matcher.h"

#include <algorithm>
#include <limits>
#include <map>

#include "core/distribution.h"
#include "validate/sweep.h"

namespace blkrr::validate {
namespace {

using detail::BState;
using detail::Matcher;
using detail::Mode;
using detail::RState;
using detail::sectors_of;

RequestRef ref_of(const ReplayedRequest& r) {
  return {r.id, r.sector, r.sectors, r.op, r.status};
}

void run_passes(Matcher& m, const std::vector<ReplayedRequest>& replayed,
                const std::vector<Request>& observed) {
  // Pass 1: same operation (data), and flushes; pass 2: other operations on
  // what is left.
  std::vector<uint32_t> r_data, r_flush, b_data, b_flush;
  for (uint32_t i = 0; i < replayed.size(); i++) {
    const auto& r = replayed[i];
    if (!r.submitted()) continue;
    if (r.op == Op::kFlush)
      r_flush.push_back(i);
    else if (r.sectors > 0)
      r_data.push_back(i);
  }
  for (uint32_t i = 0; i < observed.size(); i++)
    (observed[i].op == Op::kFlush ? b_flush : b_data).push_back(i);
  m.pass(r_data, b_data, Mode::kSameOp);
  m.pass(r_flush, b_flush, Mode::kFlush);
  std::vector<uint32_t> r_left, b_left;
  for (uint32_t i : r_data)
    if (m.rstates()[i].covered == 0) r_left.push_back(i);
  for (uint32_t i : b_data)
    if (m.bstates()[i].assigned == 0) b_left.push_back(i);
  if (!r_left.empty() && !b_left.empty()) m.pass(r_left, b_left, Mode::kOtherOp);
}

// Past Distribution's exact limit, histograms (constant memory).
struct Latencies {
  Distribution replay, block, overhead;
};

// A covered request: splits, `larger`, and its latency pair.
void count_covered(Report& rep, const ReplayedRequest& r, const RState& st, Latencies& lat) {
  const bool is_flush = r.op == Op::kFlush;
  rep.covered++;
  if (st.pieces >= 2 && !is_flush) {
    rep.split_requests++;
    rep.split_pieces += st.pieces;
  }
  if (st.larger) {
    rep.altered_count++;
    if (rep.altered.size() < rep.options.max_listed)
      rep.altered.push_back({ref_of(r), AlterKind::kLarger, r.op, st.seen_lo,
                             static_cast<uint32_t>(st.seen_hi - st.seen_lo), st.covered});
  }
  if (r.complete_ns == kNoTime || r.status != ReplayStatus::kDone) return;
  if (st.completion_missing) {
    rep.latency_unknown++;
    return;
  }
  uint64_t rl = r.complete_ns > r.submit_ns ? r.complete_ns - r.submit_ns : 0;
  uint64_t bl = st.last_complete > st.first_issue ? st.last_complete - st.first_issue : 0;
  if (bl > rl + kOverheadToleranceNs) rep.latency_inconsistent++;
  lat.replay.add(static_cast<double>(rl) / 1e3);
  lat.block.add(static_cast<double>(bl) / 1e3);
  lat.overhead.add((static_cast<double>(rl) - static_cast<double>(bl)) / 1e3);
  if (rep.options.per_request) rep.per_request.push_back({r.id, rl, bl});
}

void count_not_covered(Report& rep, const ReplayedRequest& r, const RState& st) {
  if (st.covered > 0 || st.alt_op) {
    rep.altered_count++;
    if (rep.altered.size() < rep.options.max_listed) {
      AlterKind k = st.covered > 0 ? AlterKind::kShort : AlterKind::kOp;
      rep.altered.push_back({ref_of(r), k, k == AlterKind::kOp ? st.seen_op : r.op, st.seen_lo,
                             static_cast<uint32_t>(st.seen_hi - st.seen_lo),
                             k == AlterKind::kOp ? st.alt_covered : st.covered});
    }
    return;
  }
  rep.missing_count++;
  if (rep.missing.size() < rep.options.max_listed) rep.missing.push_back(ref_of(r));
}

void count_replayed(Report& rep, const std::vector<ReplayedRequest>& replayed, const Matcher& m) {
  Latencies lat;
  for (uint32_t i = 0; i < replayed.size(); i++) {
    const ReplayedRequest& r = replayed[i];
    const RState& st = m.rstates()[i];
    switch (r.status) {
      case ReplayStatus::kDone:
        rep.done++;
        break;
      case ReplayStatus::kFailed:
        rep.failed++;
        break;
      case ReplayStatus::kDropped:
        rep.dropped++;
        rep.expected_missing_count++;
        if (rep.expected_missing.size() < rep.options.max_listed)
          rep.expected_missing.push_back(ref_of(r));
        continue;
      case ReplayStatus::kNotStarted:
        rep.not_started++;
        continue;
    }
    rep.submitted++;
    bool is_flush = r.op == Op::kFlush;
    bool full = is_flush ? st.pieces > 0 : st.covered >= r.sectors;
    if (is_flush && !full && !rep.options.flush_reaches_device) {
      rep.flushes_absorbed++;
      rep.covered++;
    } else if (full) {
      count_covered(rep, r, st, lat);
    } else {
      count_not_covered(rep, r, st);
    }
  }
  if (rep.latency_inconsistent > 0) {
    // Overhead = replay latency - block latency cannot be negative when the
    // block requests really served the request: the pairing is wrong.
    rep.latency_known = false;
    rep.latency_reason = std::to_string(rep.latency_inconsistent) + " of " +
                         std::to_string(lat.replay.count()) +
                         " requests were paired with block-layer I/O that took longer than the "
                         "replayer saw (negative overhead): the pairing is wrong, so no latency is "
                         "reported";
    rep.per_request.clear();
    return;
  }
  rep.replay_latency_us = lat.replay.summary();
  rep.block_latency_us = lat.block.summary();
  rep.overhead_us = lat.overhead.summary();
}

uint32_t pid_of(const Request& b) {
  return b.tgid ? b.tgid : b.pid;
}

void add_foreign(Report& rep, const Request& b,
                 std::map<std::pair<uint32_t, std::string>, ForeignProcess>& by_proc) {
  rep.foreign_count++;
  rep.foreign_bytes += b.bytes;
  std::string comm(b.comm_view());
  uint32_t pid = pid_of(b);
  if (rep.foreign.size() < rep.options.max_listed)
    rep.foreign.push_back({b.sector, sectors_of(b), b.op, pid, comm, b.issue_ns});
  auto& p = by_proc[{pid, comm}];
  p.pid = pid;
  p.comm = comm;
  p.requests++;
  p.bytes += b.bytes;
}

// Block requests issued before this instant by the replayer's process are
// its own probe: before the first submission (when times are mapped) and
// before the first block request that served a replayed request.
uint64_t own_probe_end(const std::vector<ReplayedRequest>& replayed,
                       const std::vector<Request>& observed, const Matcher& m,
                       const MatchOptions& o) {
  uint64_t end = std::numeric_limits<uint64_t>::max();
  if (!o.by_order)
    for (const auto& r : replayed)
      if (r.submitted()) end = std::min(end, r.submit_ns);
  for (uint32_t i = 0; i < observed.size(); i++)
    if (m.bstates()[i].assigned > 0 || m.bstates()[i].served > 0)
      end = std::min(end, observed[i].issue_ns);
  return end;
}

bool is_own_probe(const Request& b, const MatchOptions& o, uint64_t end) {
  if (b.issue_ns >= end) return false;
  if (o.own_pid != 0) return pid_of(b) == o.own_pid;
  return !o.own_comm.empty() && b.comm_view() == o.own_comm;
}

void add_own_probe(Report& rep, const Request& b) {
  uint32_t pid = pid_of(b);
  std::string comm(b.comm_view());
  auto it = std::find_if(rep.own_probe.begin(), rep.own_probe.end(),
                         [&](const OwnProbe& p) { return p.pid == pid && p.comm == comm; });
  if (it == rep.own_probe.end()) {
    rep.own_probe.push_back({pid, comm, 0, 0, b.issue_ns, b.issue_ns});
    it = rep.own_probe.end() - 1;
  }
  it->requests++;
  it->bytes += b.bytes;
  it->first_ns = std::min(it->first_ns, b.issue_ns);
  it->last_ns = std::max(it->last_ns, b.issue_ns);
}

void count_block(Report& rep, const std::vector<ReplayedRequest>& replayed,
                 const std::vector<Request>& observed, const Matcher& m) {
  const MatchOptions& o = rep.options;
  const bool own = o.own_pid != 0 || !o.own_comm.empty();
  const uint64_t own_end = own ? own_probe_end(replayed, observed, m, o) : 0;
  std::map<std::pair<uint32_t, std::string>, ForeignProcess> by_proc;
  for (uint32_t i = 0; i < observed.size(); i++) {
    const Request& b = observed[i];
    const BState& st = m.bstates()[i];
    bool served = st.assigned > 0 || st.served > 0;
    if (b.rec_flags & kRecCompletionNotSeen) {
      rep.losses.completion_not_seen++;
      if (served) rep.losses.completion_not_seen_served++;
    }
    if (b.rec_flags & kRecIssueNotSeen) rep.losses.issue_not_seen_records++;
    if (served) {
      rep.matched_block++;
    } else if (own && is_own_probe(b, o, own_end)) {
      add_own_probe(rep, b);
    } else {
      add_foreign(rep, b, by_proc);
    }
  }
  for (auto& [k, p] : by_proc) rep.foreign_by_process.push_back(std::move(p));
  std::stable_sort(
      rep.foreign_by_process.begin(), rep.foreign_by_process.end(),
      [](const ForeignProcess& a, const ForeignProcess& b) { return a.requests > b.requests; });
}

void set_verdict(Report& rep) {
  if (rep.losses.hides_requests()) {
    rep.verdict = Verdict::kUnknown;
    rep.verdict_reason = "the capture lost events, so requests may be missing from it";
  } else if (rep.covered == rep.submitted) {
    rep.verdict = Verdict::kComplete;
    rep.verdict_reason = "every submitted request was served by the block layer";
  } else {
    rep.verdict = Verdict::kIncomplete;
    rep.verdict_reason = std::to_string(rep.submitted - rep.covered) +
                         " submitted requests were not fully served as asked";
  }
  if (!rep.latency_known) rep.verdict_reason += "; latency unknown: " + rep.latency_reason;
}

}  // namespace

Report match_requests(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& observed, const Losses& losses,
                      const MatchOptions& opts) {
  Report rep;
  rep.options = opts;
  rep.losses = losses;
  rep.losses.strict_completions = opts.strict_completions;
  rep.replayed = replayed.size();
  rep.observed = observed.size();
  Matcher m(replayed, observed, opts);
  run_passes(m, replayed, observed);
  rep.merged_block = m.merged_block;
  rep.merged_requests = m.merged_requests;
  rep.partly_foreign = m.partly_foreign;
  count_replayed(rep, replayed, m);
  count_block(rep, replayed, observed, m);
  set_verdict(rep);
  return rep;
}

}  // namespace blkrr::validate
