// Inputs and output of the replay validator: what the replayer did, what the
// block layer did, and the report comparing the two. See docs/validate.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/request.h"
#include "core/stats.h"
#include "core/trace_format.h"

namespace blkrr::validate {

// What happened to one request of the load in the replay.
enum class ReplayStatus : uint8_t {
  kDone,        // submitted and completed without error
  kFailed,      // submitted, completed with an error or a short transfer
  kDropped,     // deliberately not submitted (--cmode drop): expected missing
  kNotStarted,  // never submitted (replay interrupted): not checked
};
const char* status_name(ReplayStatus s);

// One request as the replayer submitted it. Sectors are on the whole disk
// (the partition offset applied); times are on the clock of the block-layer
// records (CLOCK_MONOTONIC for the live validator).
struct ReplayedRequest {
  uint64_t id = 0;  // sequence number of the request in the load (shown in reports)
  uint64_t sector = 0;
  uint32_t sectors = 0;  // 0 for a flush
  Op op = Op::kRead;
  ReplayStatus status = ReplayStatus::kDone;
  uint64_t submit_ns = 0;
  uint64_t complete_ns = kNoTime;  // kNoTime: completion time unknown

  bool submitted() const {
    return status == ReplayStatus::kDone || status == ReplayStatus::kFailed;
  }
};

struct MatchOptions {
  // A block-layer request serves a replayed request only if it was issued in
  // [submit - pre_slack, complete + post_slack] and completed before
  // complete + post_slack.
  uint64_t pre_slack_ns = 1'000'000;
  uint64_t post_slack_ns = 1'000'000;
  // Error of the time alignment between the replayer's and the block layer's
  // clocks: 0 live (one clock); offline the spread of the offset vote. A
  // block request up to this far outside [submit, complete] still counts as
  // strictly inside the request's window when pairing (see docs/validate.md).
  uint64_t clock_tolerance_ns = 0;
  // Window length after submit when the replayer's completion time is unknown.
  uint64_t open_window_ns = 1'000'000'000;
  // False when the device has no volatile write cache: the kernel then ends
  // flushes without sending a request, so unseen flushes are expected.
  bool flush_reaches_device = true;
  // Completion records the capture missed make the verdict "unknown" even
  // when the replayer saw those requests complete.
  bool strict_completions = false;
  size_t max_listed = 1000;  // cap of each list in the report (counts stay exact)
  bool per_request = false;  // keep the latency pair of every covered request
  // Times of the two sides could not be put on one clock (offline, see
  // align.h): windows are unbounded and each block request serves the
  // earliest submitted requests on its sectors (pairing by order and sector).
  bool by_order = false;
  // The replayer's own I/O before its first request (libblkid's probe of the
  // device during the safety checks) is reported as such, not as foreign: a
  // block request serving no replayed request, issued before the first one
  // was submitted (and before the first matched block request), by process
  // `own_pid` (0: by any process named `own_comm`; both empty: off).
  uint32_t own_pid = 0;
  std::string own_comm;
  // Live validation: how long after a time the validator waits for the
  // records of that time before it resolves what they could serve (records
  // that come later are "late"). 0: no window, whole inputs (blkrr validate).
  uint64_t window_ns = 0;
  // The records held unresolved (replayed and block-layer requests together)
  // take at most this many bytes, as WindowMatcher::held_bytes() counts them;
  // past it the oldest are resolved early, as if the window were shorter,
  // and records that then come for them are late (Report::window_shrinks,
  // min_window_ns). 0: no cap.
  uint64_t max_held_bytes = 0;
};

struct RequestRef {
  uint64_t id = 0;
  uint64_t sector = 0;
  uint32_t sectors = 0;
  Op op = Op::kRead;
  ReplayStatus status = ReplayStatus::kDone;
};

enum class AlterKind : uint8_t {
  kOp,      // the block layer saw these sectors with another operation
  kShort,   // only part of the sectors reached the block layer
  kLarger,  // fully served, but by a request that also carried foreign sectors
};
const char* alter_name(AlterKind k);

struct AlteredRequest {
  RequestRef req;
  AlterKind kind = AlterKind::kOp;
  Op seen_op = Op::kRead;
  uint64_t seen_sector = 0;  // extent of the block-layer requests involved
  uint32_t seen_sectors = 0;
  uint32_t covered_sectors = 0;  // sectors of the request they served
};

struct ForeignIo {
  uint64_t sector = 0;
  uint32_t sectors = 0;
  Op op = Op::kRead;
  uint32_t pid = 0;  // process id (tgid)
  std::string comm;
  uint64_t issue_ns = 0;
};

struct ForeignProcess {
  uint32_t pid = 0;
  std::string comm;
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

// Block requests of the replayer itself before its first request.
struct OwnProbe {
  uint32_t pid = 0;
  std::string comm;
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t first_ns = 0, last_ns = 0;  // issue times (block-layer clock)
};

struct LatencyPair {
  uint64_t id = 0;
  uint64_t replay_ns = 0;  // completion seen by the replayer - submission
  uint64_t block_ns = 0;   // last block-layer completion - first issue
};

// Events the capture lost, which can hide requests from the validator.
struct Losses {
  uint64_t ringbuf_full = 0;                // records the kernel could not queue
  uint64_t inflight_full = 0;               // issues the kernel could not track
  uint64_t completion_without_issue = 0;    // issues never seen
  uint64_t issue_not_seen_records = 0;      // records flagged "issue not seen"
  uint64_t completion_not_seen = 0;         // records without completion (all)
  uint64_t completion_not_seen_served = 0;  // ... of which served replayed requests
  uint64_t reader_lost = 0;                 // records lost in user space
  // BPF programs the kernel skipped (recursion on one CPU). A skipped
  // completion leaves a record flagged "completion not seen", a skipped issue
  // a completion without issue, a skipped block_io_start an attribution at
  // issue: those skips are explained. One that left no such trace may be an
  // issue and a completion of the same request both skipped: a request
  // missing from the capture.
  uint64_t programs_skipped = 0;
  uint64_t task_from_issue = 0;  // requests attributed at issue (no block_io_start seen)
  uint64_t skips_unexplained() const {
    uint64_t explained = completion_not_seen + completion_without_issue + task_from_issue;
    return programs_skipped > explained ? programs_skipped - explained : 0;
  }
  bool counters_missing = false;  // the trace carries no loss counters
  // Gaps between the rotated pieces given as the trace (a piece missing or
  // not ended cleanly): the requests of the gap are not in the trace.
  uint64_t trace_gaps = 0;
  bool strict_completions = false;
  // Losses that may hide a request (see docs/validate.md for the rule).
  bool hides_requests() const;
};

// What the live validator cost while the replay ran (steady measures of its
// overhead, independent of the machine's load).
struct ValidatorCost {
  uint64_t records = 0;        // block-layer records received
  uint64_t reader_cpu_ns = 0;  // CPU time of the consumer thread while attached
  uint64_t stop_cpu_ns = 0;    // CPU time of stop(): final drain and conversion
  uint64_t match_ns = 0;       // wall time of the matching after the run
  // The most replayed and block-layer requests the matcher held at once
  // (added and not yet resolved): its memory, bounded by the window.
  uint64_t max_held_requests = 0, max_held_blocks = 0;
  uint64_t max_held_bytes = 0;  // WindowMatcher::held_bytes(), the most at once
  // Records equal to the one that arrived just before them, held as a count
  // on it (a run of equal records takes one record's memory).
  uint64_t identical_requests = 0, identical_blocks = 0;
};

// Slack for rounding when checking that overhead = replay - block latency >= 0.
constexpr uint64_t kOverheadToleranceNs = 1000;

// A replay onto a stacked volume (dm, md: no requests of its own) validated
// through its stack: the requests of the disks below, taken back to the
// volume's sectors (core/volume_map.h), served the replayed requests; a
// mirror's (RAID1) writes are followed on each member. The report's other
// counts are in volume sectors.
struct StackCheck {
  std::string volume;  // "dm-0 (vg-data)"
  std::string stack;   // "dm-0 (vg-data) > vdb2 > vdb"
  std::string map;     // format_extents(): volume sectors -> disk sectors
  struct Disk {
    std::string name;       // "vdb"
    uint64_t requests = 0;  // block-layer requests seen on it in the volume's ranges
  };
  std::vector<Disk> disks;
  uint64_t volume_records = 0;  // volume pieces the disks' requests gave (the report's observed)
  uint64_t outside = 0;         // disk requests in a range the filter joined, outside the volume
  uint64_t split = 0;           // disk requests over two pieces of the volume: records added
  uint64_t mirror_writes = 0;   // writes seen on the members other than the first
  // Replayed requests over two or more pieces of the volume (chunks of a
  // stripe, segments), which the stack splits, and the pieces they became:
  // each piece is served by requests of the disk that holds it.
  uint64_t replayed_split = 0, replayed_pieces = 0;
  // One per member after the first (Extent::copy): the replayed writes and
  // how many of them that member's block layer served.
  struct Mirror {
    uint32_t copy = 0;
    std::string extents;  // where the copy lies: format_extents() of its extents
    uint64_t writes = 0, covered = 0, missing = 0;
    std::vector<RequestRef> missing_list;
  };
  std::vector<Mirror> mirrors;
};

enum class Verdict { kComplete, kIncomplete, kUnknown };
const char* verdict_name(Verdict v);

struct Report {
  // Replayed requests by status.
  uint64_t replayed = 0, submitted = 0, done = 0, failed = 0, dropped = 0, not_started = 0;
  uint64_t covered = 0;  // submitted requests whose every sector the block layer served
  uint64_t missing_count = 0, altered_count = 0, expected_missing_count = 0;
  uint64_t flushes_absorbed = 0;  // flushes ended by the kernel (no write cache), not counted
  // Block-layer requests.
  uint64_t observed = 0, matched_block = 0, foreign_count = 0, foreign_bytes = 0;
  uint64_t partly_foreign = 0;  // served replayed requests and carried foreign sectors
  uint64_t split_requests = 0, split_pieces = 0;   // requests served by >= 2 block requests
  uint64_t merged_block = 0, merged_requests = 0;  // block requests serving >= 2 requests
  // Records that came after the window had closed on their time (live, see
  // MatchOptions::window_ns): requests resolved as not served (counted in
  // missing too), block requests not matched (neither matched nor foreign).
  uint64_t late_requests = 0, late_blocks = 0;
  // The cap of MatchOptions::max_held_bytes was reached this many times; the
  // window then held as little as min_window_ns of time (0 when never).
  uint64_t window_shrinks = 0, min_window_ns = 0;
  std::vector<RequestRef> missing, expected_missing;
  std::vector<AlteredRequest> altered;
  std::vector<ForeignIo> foreign;
  std::vector<ForeignProcess> foreign_by_process;  // most requests first
  std::vector<OwnProbe> own_probe;                 // the replayer's own I/O before the run
  // Latencies of covered requests, microseconds.
  Summary replay_latency_us, block_latency_us, overhead_us;
  uint64_t latency_unknown = 0;  // covered, but a block completion time was not seen
  // Pairs whose block-layer latency exceeds the replayer's (negative
  // overhead, beyond kOverheadToleranceNs). The block requests served the
  // replayed request between its submission and the replayer seeing it
  // complete, so this cannot happen with a right pairing: the latency
  // summaries are then left empty and `latency_known` is false.
  uint64_t latency_inconsistent = 0;
  bool latency_known = true;
  std::string latency_reason;            // why latency_known is false
  std::vector<LatencyPair> per_request;  // only with MatchOptions::per_request
  Losses losses;
  Verdict verdict = Verdict::kUnknown;
  std::string verdict_reason;
  std::vector<std::string> notes;  // time alignment, assumptions, warnings
  MatchOptions options;
  ValidatorCost cost;         // live validation only (records == 0 otherwise)
  Counters capture_counters;  // the capture's counters (live), for diagnosis
  std::map<std::string, std::string> capture_features;  // what the capture ran with (live)
  std::optional<StackCheck> stack;                      // a replay onto a stacked volume (live)

  double completeness_pct() const {
    return submitted ? 100.0 * static_cast<double>(covered) / static_cast<double>(submitted)
                     : 100.0;
  }
};

// Reads the loss counters of a capture (Capture::counters() or the trailer of
// a native trace) into `l`.
void losses_from_counters(const Counters& c, Losses& l);

}  // namespace blkrr::validate
