#include "validate/offline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "converters/load_format.h"
#include "converters/source.h"
#include "validate/matcher.h"

namespace blkrr::validate {

namespace {

Error no_requests(const LoadReader& rd, const std::string& path) {
  const char* what = rd.kind() == LoadKind::kReplay ? "replay result" : "load";
  std::string why = rd.has_header() ? std::string("a ") + what + " header but not one request line"
                                    : "no header and no request line (an empty file?)";
  return Error(ErrorKind::kBadInput,
               "nothing to validate: " + path + " has " + why +
                   "; give the replay result (-o FILE of blkrr replay) of a replay that ran "
                   "requests");
}

}  // namespace

Result<ReplayInput> read_replay_input(const std::string& path) {
  auto rd = LoadReader::open(path);
  if (!rd) return rd.error();
  ReplayInput in;
  in.is_replay_result = rd->kind() == LoadKind::kReplay;
  std::vector<int64_t> orig, delay, duration;
  LoadRecord rec;
  for (uint64_t id = 0;; id++) {
    auto got = rd->next(rec);
    if (!got) return got.error();
    if (!*got) break;
    ReplayedRequest r;
    r.id = id;
    r.sector = rec.sector;
    r.sectors = rec.sectors;
    r.op = rec.op;
    r.status = ReplayStatus::kDone;
    in.requests.push_back(r);
    orig.push_back(rec.start_ns);
    delay.push_back(in.is_replay_result ? rec.delay_ns : 0);
    duration.push_back(in.is_replay_result ? rec.duration_ns : -1);
  }
  if (in.requests.empty()) return no_requests(*rd, path);
  in.warnings = source_warnings(rd->counters());
  if (in.is_replay_result) {
    auto t = timing_from_info(rd->info_lines(), path);
    if (!t) return t.error();
    in.timing = *t;
    in.origin = origin_from_info(rd->info_lines());
  }
  for (size_t i = 0; i < in.requests.size(); i++) {
    ReplayedRequest& r = in.requests[i];
    int64_t submit = in.is_replay_result ? in.timing.submit_ns(orig[i], delay[i]) : orig[i];
    r.submit_ns = submit > 0 ? static_cast<uint64_t>(submit) : 0;
    if (duration[i] >= 0) r.complete_ns = r.submit_ns + static_cast<uint64_t>(duration[i]);
  }
  if (in.is_replay_result && !in.timing.known) {
    in.orig_start_ns = std::move(orig);
    in.delay_ns = std::move(delay);
  }
  return in;
}

uint64_t ReplayInput::span_ns() const {
  uint64_t span = 0;
  for (const auto& r : requests) span = std::max({span, r.submit_ns, r.complete_ns});
  return span;
}

namespace {
// The trace's host, devices and wall-clock span, for check_pairing().
void set_extent(const SourceInfo& info, TraceInput& t) {
  if (info.trace_header) {
    t.extent.host = info.trace_header->host;
    t.extent.devices = info.trace_header->devices;
  }
  if (!t.realtime_to_trace_ns || t.requests.empty()) return;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& r : t.requests) {
    lo = std::min(lo, r.issue_ns);
    hi = std::max(hi, r.completed() ? r.complete_ns : r.issue_ns);
  }
  const int64_t first = static_cast<int64_t>(lo) - *t.realtime_to_trace_ns;
  const int64_t last = static_cast<int64_t>(hi) - *t.realtime_to_trace_ns;
  if (first <= 0 || last <= 0) return;
  t.extent.first_unix_ns = static_cast<uint64_t>(first);
  t.extent.last_unix_ns = static_cast<uint64_t>(last);
}

// A record that repeats the one before it in every field the matcher uses:
// no device issues two requests at the same nanosecond on the same sectors,
// so it is the same record written twice (a corrupt or crafted trace).
bool same_record(const Request& a, const Request& b) {
  return a.issue_ns == b.issue_ns && a.complete_ns == b.complete_ns && a.sector == b.sector &&
         a.bytes == b.bytes && a.op == b.op && a.dev == b.dev && a.part == b.part &&
         a.pid == b.pid && a.tgid == b.tgid && a.rec_flags == b.rec_flags && a.error == b.error;
}

}  // namespace

Result<TraceInput> read_trace_input(const std::vector<std::string>& paths,
                                    const std::string& device) {
  SourceOptions so;
  so.device = device;
  auto src = open_source(paths, so);
  if (!src) return src.error();
  TraceInput t;
  const SourceInfo& info = (*src)->info();
  t.format = std::string(input_format_name(info.format));
  if (info.trace_header && info.trace_header->real_anchor_ns && info.trace_header->mono_anchor_ns)
    t.realtime_to_trace_ns = static_cast<int64_t>(info.trace_header->mono_anchor_ns) -
                             static_cast<int64_t>(info.trace_header->real_anchor_ns);
  Request r;
  uint64_t identical = 0;
  for (;;) {
    auto got = (*src)->next(r);
    if (!got) return got.error();
    if (!*got) break;
    if (!t.requests.empty() && same_record(t.requests.back(), r)) {
      ++identical;  // one record repeated: held once, whatever its count
      continue;
    }
    t.requests.push_back(r);
  }
  t.identical_records = identical;
  if (identical)
    t.notes.push_back(std::to_string(identical) +
                      " block-layer records repeated the one before them (same times, sector, "
                      "size, operation, device and process) and were taken as that one record: "
                      "a duplicated record, not I/O");
  set_extent(info, t);
  Counters c = (*src)->counters();
  t.warnings = source_warnings(c);
  t.losses.trace_gaps = rotated_piece_gaps(c);
  if (t.format == "native") {
    Counters capture;
    bool truncated = false;
    const std::string prefix = "capture: ";
    for (const auto& [k, v] : c) {
      if (k.rfind(prefix, 0) == 0) capture[k.substr(prefix.size())] = v;
      if (k.rfind("truncated trace", 0) == 0) {
        truncated = true;
        t.notes.push_back(k);
      }
    }
    losses_from_counters(capture, t.losses);
    if (capture.empty() || truncated) {
      t.losses.counters_missing = true;
      t.notes.push_back("the trace has no loss counters (recording did not end cleanly)");
    }
  } else {
    t.notes.push_back("a " + t.format +
                      " trace does not record its own losses; the verdict assumes none");
  }
  if (!(*src)->info().has_completion)
    t.notes.push_back("the trace has no completion times: only issue times are compared");
  return t;
}

namespace {

// A replay result without timing settings: the vote is also run on the
// other time base, submit = replay_delay (fullspeed replays).
void try_delay_base(ReplayInput& replay, const TraceInput& trace, const AlignOptions& ao,
                    Alignment& a, std::string& how) {
  if (replay.delay_ns.size() != replay.requests.size() || a.mode == Alignment::Mode::kNone) return;
  std::vector<ReplayedRequest> alt = replay.requests;
  for (size_t i = 0; i < alt.size(); i++) {
    const uint64_t d = replay.delay_ns[i] > 0 ? static_cast<uint64_t>(replay.delay_ns[i]) : 0;
    if (alt[i].complete_ns != kNoTime)
      alt[i].complete_ns = d + (alt[i].complete_ns - alt[i].submit_ns);
    alt[i].submit_ns = d;
  }
  Alignment b = align_times(alt, trace.requests, ao);
  if (b.mode == Alignment::Mode::kOffset &&
      (a.mode != Alignment::Mode::kOffset || b.votes > a.votes)) {
    a = b;
    replay.requests = std::move(alt);
    how =
        "no timing settings in the replay result; submit times taken from replay_delay alone "
        "(fullspeed replay); ";
  }
}

// --start-at: the start instant on the trace's clock, when the trace carries
// clock anchors. A cross-check of the vote, or the offset when no vote wins.
void use_start_at(const ReplayInput& replay, const TraceInput& trace, const AlignOptions& ao,
                  Alignment& a, std::string& how) {
  if (!replay.timing.start_at_unix || !trace.realtime_to_trace_ns) return;
  const int64_t hint =
      std::llround(*replay.timing.start_at_unix * 1e9) + *trace.realtime_to_trace_ns;
  char buf[200];
  if (a.mode == Alignment::Mode::kOffset) {
    std::snprintf(buf, sizeof buf,
                  "; the --start-at instant recorded in the replay gives an offset %.3f ms away",
                  static_cast<double>(a.offset_ns - hint) / 1e6);
    how += buf;
    return;
  }
  Alignment h = votes_at(replay.requests, trace.requests, hint, ao);
  if (h.votes < 3 ||
      static_cast<double>(h.votes) < ao.min_agreement * static_cast<double>(h.sampled))
    return;
  h.spread_ns = 2'000'000;  // the replayer starts within 1 ms of the instant; clocks may drift
  a = h;
  how +=
      "offset from the --start-at instant recorded in the replay and the trace's clock anchors; ";
}

Alignment choose_alignment(ReplayInput& replay, const TraceInput& trace, const OfflineOptions& o,
                           std::string& how) {
  if (o.offset_ns) {
    Alignment a = votes_at(replay.requests, trace.requests, *o.offset_ns, o.align);
    how = "replay times shifted by the given offset of " +
          std::to_string(static_cast<double>(*o.offset_ns) / 1e9) + " s; ";
    return a;
  }
  Alignment a = align_times(replay.requests, trace.requests, o.align);
  if (!replay.timing.known) try_delay_base(replay, trace, o.align, a, how);
  std::string start_at;
  use_start_at(replay, trace, o.align, a, a.mode == Alignment::Mode::kOffset ? start_at : how);
  how += a.describe() + start_at;
  return a;
}

}  // namespace

Report validate_offline(ReplayInput replay, const TraceInput& trace, const OfflineOptions& o) {
  MatchOptions mo = o.match;
  for (auto& r : replay.requests) r.sector += o.sector_offset;
  std::string how;
  Alignment a = choose_alignment(replay, trace, o, how);
  apply_alignment(a, replay.requests);
  if (a.mode == Alignment::Mode::kOffset) {
    mo.post_slack_ns += a.spread_ns;
    // The vote bounds the offset by issue times only: a block completion
    // may look up to the spread (plus the clock error) later than the
    // replayer's.
    mo.clock_tolerance_ns = a.spread_ns + o.align.clock_error_ns;
  } else if (a.mode == Alignment::Mode::kOrder) {
    mo.by_order = true;
  }
  // The replayer's own probe of the device before its first request.
  if (replay.timing.pid)
    mo.own_pid = replay.timing.pid;
  else if (replay.timing.known)
    mo.own_comm = "blkrr";
  Report rep = match_requests(replay.requests, trace.requests, trace.losses, mo);
  if (replay.is_replay_result) rep.notes.push_back("replay timing: " + replay.timing.describe());
  rep.notes.push_back(how);
  if (!rep.own_probe.empty() && !replay.timing.pid)
    rep.notes.push_back(
        "the replay result does not record the replayer's process id (older blkrr): its own "
        "probe was recognized by the name 'blkrr' and the time before the first request");
  if (!replay.is_replay_result)
    rep.notes.push_back(
        "REPLAY is a load: requests are expected near their intended start times, latencies "
        "are not compared");
  for (const auto& n : trace.notes) rep.notes.push_back(n);
  return rep;
}

}  // namespace blkrr::validate
