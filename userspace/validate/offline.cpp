#include "validate/offline.h"

#include "converters/load_format.h"
#include "converters/source.h"
#include "validate/matcher.h"

namespace blkrr::validate {

Result<ReplayInput> read_replay_input(const std::string& path) {
  auto rd = LoadReader::open(path);
  if (!rd) return rd.error();
  ReplayInput in;
  in.is_replay_result = rd->kind() == LoadKind::kReplay;
  LoadRecord rec;
  uint64_t id = 0;
  for (;;) {
    auto got = rd->next(rec);
    if (!got) return got.error();
    if (!*got) break;
    ReplayedRequest r;
    r.id = id++;
    r.sector = rec.sector;
    r.sectors = rec.sectors;
    r.op = rec.op;
    r.status = ReplayStatus::kDone;
    int64_t submit = rec.start_ns + (in.is_replay_result ? rec.delay_ns : 0);
    r.submit_ns = submit > 0 ? static_cast<uint64_t>(submit) : 0;
    if (in.is_replay_result && rec.duration_ns >= 0)
      r.complete_ns = r.submit_ns + static_cast<uint64_t>(rec.duration_ns);
    in.requests.push_back(r);
    if (in.is_replay_result) in.orig_start_ns.push_back(rec.start_ns);
  }
  return in;
}

Result<TraceInput> read_trace_input(const std::vector<std::string>& paths,
                                    const std::string& device) {
  SourceOptions so;
  so.device = device;
  auto src = open_source(paths, so);
  if (!src) return src.error();
  TraceInput t;
  t.format = std::string(input_format_name((*src)->info().format));
  Request r;
  for (;;) {
    auto got = (*src)->next(r);
    if (!got) return got.error();
    if (!*got) break;
    t.requests.push_back(r);
  }
  Counters c = (*src)->counters();
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

Report validate_offline(ReplayInput replay, const TraceInput& trace, const OfflineOptions& o) {
  MatchOptions mo = o.match;
  for (auto& r : replay.requests) r.sector += o.sector_offset;
  std::string how;
  if (o.offset_ns) {
    Alignment a;
    a.mode = Alignment::Mode::kOffset;
    a.offset_ns = *o.offset_ns;
    apply_alignment(a, replay.requests);
    how = "replay times shifted by the given offset of " +
          std::to_string(static_cast<double>(*o.offset_ns) / 1e9) + " s";
  } else {
    Alignment a = align_times(replay.requests, trace.requests, o.align);
    if (replay.orig_start_ns.size() == replay.requests.size() && a.mode != Alignment::Mode::kNone) {
      // The other time base: submit = replay_delay (fullspeed replays).
      std::vector<ReplayedRequest> alt = replay.requests;
      for (size_t i = 0; i < alt.size(); i++) {
        int64_t shift = replay.orig_start_ns[i];
        auto back = [&](uint64_t t) {
          int64_t v = static_cast<int64_t>(t) - shift;
          return v > 0 ? static_cast<uint64_t>(v) : uint64_t{0};
        };
        if (alt[i].complete_ns != kNoTime) alt[i].complete_ns = back(alt[i].complete_ns);
        alt[i].submit_ns = back(alt[i].submit_ns);
      }
      Alignment b = align_times(alt, trace.requests, o.align);
      if (b.mode == Alignment::Mode::kOffset &&
          (a.mode != Alignment::Mode::kOffset || b.votes > a.votes)) {
        a = b;
        replay.requests = std::move(alt);
        how = "submit times taken from replay_delay alone (fullspeed replay); ";
      }
    }
    apply_alignment(a, replay.requests);
    if (a.mode == Alignment::Mode::kOffset) {
      mo.post_slack_ns += a.spread_ns;
      // The vote bounds the offset by issue times only: a block completion
      // may look up to the spread (plus the clock error) later than the
      // replayer's.
      mo.clock_tolerance_ns = a.spread_ns + o.align.clock_error_ns;
    } else if (a.mode == Alignment::Mode::kLinear) {
      mo.pre_slack_ns = std::max(mo.pre_slack_ns, a.relaxed_slack_ns);
      mo.post_slack_ns = std::max(mo.post_slack_ns, a.relaxed_slack_ns);
      mo.clock_tolerance_ns = a.relaxed_slack_ns;
    }
    how += a.describe();
  }
  Report rep = match_requests(replay.requests, trace.requests, trace.losses, mo);
  rep.notes.push_back(how);
  if (!replay.is_replay_result)
    rep.notes.push_back(
        "REPLAY is a load: requests are expected near their intended start times, latencies "
        "are not compared");
  for (const auto& n : trace.notes) rep.notes.push_back(n);
  return rep;
}

}  // namespace blkrr::validate
