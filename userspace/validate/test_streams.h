// Test helper (validate tests only): random replays seen from both sides,
// with everything the matcher has rules for: splits, merges, hot sectors
// written and read concurrently, missing, altered (op, short, larger),
// foreign I/O, flushes, dropped and never-started requests, records without
// a completion or an issue, the replayer's own probe. Each record carries the
// instant it reaches the validator (replayed requests when the replayer
// reaps them, block-layer records at their completion, records without a
// completion up to 1.5 s later), so that a stream can be fed in arrival order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/request.h"
#include "validate/validation.h"

namespace blkrr::validate::testing {

struct Arriving {
  uint64_t at = 0;  // arrival at the validator (CLOCK_MONOTONIC ns)
  bool block = false;
  size_t index = 0;  // into Stream::replayed or Stream::block
};

struct Stream {
  std::vector<ReplayedRequest> replayed;  // in arrival order
  std::vector<Request> block;             // in arrival order
  std::vector<Arriving> arrivals;         // both, in arrival order
  MatchOptions options;
};

struct StreamShape {
  uint64_t requests = 3000;
  uint64_t gap_ns = 20'000;  // between two submissions (on average)
  uint64_t max_latency_ns = 3'000'000;
  uint32_t hot_sectors = 16;    // every 4th request goes to one of these
  bool probe = false;           // the replayer's own probe before the start (own_pid)
  bool issue_not_seen = false;  // some records without an issue (a loss: verdict unknown)
  bool clean = false;           // nothing missing, altered or foreign, no flush: latencies known
};

constexpr uint64_t kStreamT0 = 1'000'000'000'000ull;
constexpr uint32_t kStreamPid = 4242;

inline Request stream_block(uint64_t sector, uint32_t sectors, Op op, uint64_t issue,
                            uint64_t complete, uint32_t pid, const char* comm) {
  Request b;
  b.sector = sector;
  b.bytes = sectors * 512;
  b.op = op;
  b.issue_ns = issue;
  b.complete_ns = complete;
  b.pid = b.tgid = pid;
  b.set_comm(comm);
  return b;
}

namespace detail {

struct Gen {
  std::mt19937_64 rng;
  const StreamShape& shape;
  std::vector<std::pair<uint64_t, ReplayedRequest>> r;  // (arrival, request)
  std::vector<std::pair<uint64_t, Request>> b;

  uint64_t pick(uint64_t n) { return n ? rng() % n : 0; }
  bool chance(uint32_t per_mille) { return pick(1000) < per_mille; }

  // Issue and completion of a block request inside [submit, complete].
  std::pair<uint64_t, uint64_t> inside(const ReplayedRequest& q) {
    uint64_t span = q.complete_ns - q.submit_ns;
    uint64_t issue = q.submit_ns + 1 + pick(span / 4 + 1);
    uint64_t done = q.complete_ns - 1 - pick(span / 4 + 1);
    return {issue, std::max(issue + 1, done)};
  }

  void emit(Request x, uint64_t arrival_delay = 0) {
    uint64_t at = x.completed() ? x.complete_ns : x.issue_ns + 1'000'000;
    if (x.rec_flags & kRecCompletionNotSeen) at = x.issue_ns + 200'000'000 + pick(1'300'000'000);
    b.emplace_back(at + arrival_delay, x);
  }

  void serve(const ReplayedRequest& q) {
    auto [issue, done] = inside(q);
    const uint32_t kind = static_cast<uint32_t>(pick(1000));
    Request x = stream_block(q.sector, q.sectors, q.op, issue, done, kStreamPid, "blkrr");
    if (shape.clean && kind < 40) return emit(x);
    if (kind < 10) return;  // missing
    if (kind < 20) {        // another operation
      x.op = q.op == Op::kRead ? Op::kWrite : Op::kRead;
    } else if (kind < 30 && q.sectors > 8) {  // short
      x.bytes = q.sectors / 2 * 512;
    } else if (kind < 40) {  // larger
      x.bytes = (q.sectors + 8) * 512;
    } else if (kind < 160 && q.sectors >= 16) {  // split in two or three, issued in any order
      uint32_t parts = q.sectors >= 24 && chance(500) ? 3 : 2;
      uint32_t step = q.sectors / parts;
      for (uint32_t p = 0; p < parts; p++) {
        auto [pi, pd] = inside(q);
        uint32_t len = p + 1 == parts ? q.sectors - p * step : step;
        emit(stream_block(q.sector + p * step, len, q.op, pi, pd, kStreamPid, "blkrr"));
      }
      return;
    } else if (kind < 170) {  // completion not seen: emitted later, issue only
      x.complete_ns = kNoTime;
      x.rec_flags = kRecCompletionNotSeen;
    } else if (kind < 175 && shape.issue_not_seen) {  // completion only
      x.issue_ns = x.complete_ns;
      x.rec_flags = kRecIssueNotSeen;
    } else if (kind < 185 && !shape.clean) {  // issued slightly before the submission
      uint64_t d = std::min(issue - q.submit_ns + pick(20'000), issue);
      x.issue_ns -= d;
      x.complete_ns -= d;
    }
    emit(x);
  }

  ReplayedRequest request(uint64_t id, uint64_t submit) {
    ReplayedRequest q;
    q.id = id;
    q.sector = id % 4 == 0 ? 4096 + pick(shape.hot_sectors) * 64 : 1'000'000 + pick(1'000'000) * 8;
    q.sectors = 8u << pick(5);                      // 4 KiB .. 64 KiB
    if (shape.clean && id % 4 == 0) q.sectors = 8;  // hot: one size, paired by time alone
    q.op = chance(300) ? Op::kWrite : Op::kRead;
    q.submit_ns = submit;
    uint64_t lat = 20'000 + pick(chance(50) ? shape.max_latency_ns : shape.max_latency_ns / 20);
    q.complete_ns = submit + lat;
    return q;
  }

  void add(uint64_t id, uint64_t submit) {
    ReplayedRequest q = request(id, submit);
    const uint32_t kind = static_cast<uint32_t>(pick(1000));
    if (kind < 10) {  // dropped (--cmode drop): never submitted, emitted at once
      q.status = ReplayStatus::kDropped;
      uint64_t at = q.submit_ns;
      q.submit_ns = 0;
      q.complete_ns = kNoTime;
      r.emplace_back(at, q);
      return;
    }
    if (kind < 30 && !shape.clean) {  // a flush, served by a flush in its window or not at all
      q.op = Op::kFlush;
      q.sectors = 0;
      r.emplace_back(q.complete_ns, q);
      if (!chance(100)) {
        auto [issue, done] = inside(q);
        emit(stream_block(0, 0, Op::kFlush, issue, done, kStreamPid, "blkrr"));
      }
      return;
    }
    if (kind < 40) q.status = ReplayStatus::kFailed;
    r.emplace_back(q.complete_ns, q);
    if (kind >= 40 && kind < 60 && !(shape.clean && id % 4 == 0)) {  // merged with the next
      ReplayedRequest q2 = q;
      q2.id = id + 1'000'000'000;
      q2.sector = q.sector + q.sectors;
      q2.submit_ns = q.submit_ns + 1000;
      q2.complete_ns = q.complete_ns + 500;
      r.emplace_back(q2.complete_ns, q2);
      emit(stream_block(q.sector, q.sectors * 2, q.op, q2.submit_ns + 500, q.complete_ns - 100,
                        kStreamPid, "blkrr"));
      return;
    }
    serve(q);
  }

  void foreign(uint64_t t) {
    uint64_t sector =
        chance(300) ? 4096 + pick(shape.hot_sectors) * 64 : 50'000'000 + pick(1000) * 8;
    Op op = chance(500) ? Op::kRead : Op::kWrite;
    emit(stream_block(sector, 8, op, t, t + 30'000 + pick(200'000), 777, "dd"));
  }
};

}  // namespace detail

// A replay of shape.requests requests; seed picks everything else.
inline Stream make_stream(uint64_t seed, const StreamShape& shape = {}) {
  detail::Gen g{std::mt19937_64(seed), shape, {}, {}};
  uint64_t t = kStreamT0;
  if (shape.probe)  // libblkid's probe 40 ms before the start, partly on hot sectors
    for (uint64_t k = 0; k < 64; k++) {
      uint64_t pt = t - 40'000'000 + k * 300'000;
      g.emit(stream_block(k < 32 ? 4096 + (k % shape.hot_sectors) * 64 : 9'000'000 + k * 8, 8,
                          Op::kRead, pt, pt + 20'000, kStreamPid, "blkrr"));
    }
  for (uint64_t i = 0; i < shape.requests; i++) {
    t += 1 + g.pick(2 * shape.gap_ns);
    g.add(i, t);
    if (!shape.clean && g.chance(20)) g.foreign(t + g.pick(shape.gap_ns));
    if (g.chance(5)) {  // interrupted: a request that never started, emitted at the end
      ReplayedRequest q = g.request(i + 2'000'000'000, 0);
      q.status = ReplayStatus::kNotStarted;
      q.submit_ns = 0;
      q.complete_ns = kNoTime;
      g.r.emplace_back(t + 2 * shape.max_latency_ns, q);
    }
  }
  Stream s;
  auto by_arrival = [](const auto& x, const auto& y) { return x.first < y.first; };
  std::stable_sort(g.r.begin(), g.r.end(), by_arrival);
  std::stable_sort(g.b.begin(), g.b.end(), by_arrival);
  for (auto& [at, q] : g.r) {
    s.arrivals.push_back({at, false, s.replayed.size()});
    s.replayed.push_back(q);
  }
  for (auto& [at, x] : g.b) {
    s.arrivals.push_back({at, true, s.block.size()});
    s.block.push_back(x);
  }
  std::stable_sort(s.arrivals.begin(), s.arrivals.end(),
                   [](const Arriving& x, const Arriving& y) { return x.at < y.at; });
  if (shape.probe) s.options.own_pid = kStreamPid;
  return s;
}

}  // namespace blkrr::validate::testing
