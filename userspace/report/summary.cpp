#include "report/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/distribution.h"
#include "core/stats.h"
#include "report/csv.h"
#include "report/fidelity.h"
#include "report/provenance.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

constexpr double kStallMinS = 1.0;        // a completion gap this long with work queued...
constexpr double kStallTimesP99 = 10;     // ...and this many times the p99 latency
constexpr double kTailRatio = 20;         // p99 / p50 above this: a long tail
constexpr double kIssueErrorNs = 1e6;     // replay p99 issue error above 1 ms: behind schedule
constexpr double kAchievedRatio = 0.9;    // replays reaching less than 90 % of the demanded rate
constexpr double kReorderPercent = 1;     // more than 1 % issued out of order
constexpr double kCompleteRatio = 0.999;  // fewer of the demanded requests: incomplete
constexpr double kSizeTolerance = 0.01;   // mean request size off by more: sizes changed

std::string pct(double v) {
  return fmt_significant(v) + " %";
}

// "it covers 2000 of the 10000 requests the load demanded (20.0 %)".
std::string covered(const Facts& f) {
  if (!f.planned || *f.planned == 0) return "it covers " + std::to_string(f.requests) + " requests";
  return "it covers " + std::to_string(f.requests) + " of the " + std::to_string(*f.planned) +
         " requests the load demanded (" +
         pct(100.0 * static_cast<double>(f.requests) / static_cast<double>(*f.planned)) + ")";
}

}  // namespace

Facts facts_of(const Dataset& d, const Timing* t) {
  Facts f;
  f.label = d.label;
  const SampleBounds& b = d.samples.bounds();
  f.requests = b.count;
  f.fake = d.fake;
  f.wraparound_factor = d.wraparound_factor;
  f.start_unix = provenance_of(d).start_unix;
  f.interrupted = d.interrupted;
  f.stop_reason = d.stop_reason;
  f.planned = d.planned;
  f.bytes = b.read_bytes + b.write_bytes;
  if (b.count == 0) return f;
  uint64_t first = b.issue_min, last = d.has_latency() ? b.complete_max : b.issue_max;
  f.duration_s = static_cast<double>(last - first) / 1e9;
  if (f.duration_s > 0) {
    f.iops = static_cast<double>(f.requests) / f.duration_s;
    f.bytes_per_s = static_cast<double>(b.read_bytes + b.write_bytes) / f.duration_s;
  }
  if (!t) return f;
  const Distribution& lat = t->latency_ms[0];
  f.latency_n = lat.count();
  if (f.latency_n) {
    f.lat_p50_ns = lat.percentile(50) * 1e6;
    f.lat_p99_ns = lat.percentile(99) * 1e6;
    f.lat_max_ns = t->lat_max_ns;
    f.lat_max_at_s = t->lat_max_at_s;
    f.outliers = t->outliers;
    f.stall_s = t->stall_s;
    f.stall_at_s = t->stall_at_s;
    f.stall_inflight = t->stall_inflight;
  }
  if (d.has_delay() && t->delay_ms[0].count()) {
    f.issue_n = t->delay_ms[0].count();
    f.issue_p99_ns = t->delay_ms[0].percentile(99) * 1e6;
    f.pushed_back = b.pushed_back;
    if (b.t_max > b.t_min)
      f.demanded_iops =
          static_cast<double>(b.count) / (static_cast<double>(b.t_max - b.t_min) / 1e9);
    f.reordered_percent = t->by_issue.percent();
  }
  return f;
}

std::string when(double t_s, std::optional<double> start_unix) {
  std::string s = "t = " + fmt_elapsed(t_s);
  if (start_unix) {
    std::string utc = fmt_utc(*start_unix + t_s);
    s += " (" + utc.substr(11) + ")";
  }
  return s;
}

std::vector<Finding> findings(const Facts& f) {
  std::vector<Finding> out;
  auto warn = [&](std::string t) { out.push_back({true, f.label + ": " + std::move(t)}); };
  if (f.fake) warn("FAKE RESULT (dry run or no O_DIRECT): its timings do not describe a device.");
  if (f.interrupted || !f.stop_reason.empty())
    warn(std::string(f.interrupted ? "INTERRUPTED replay (Ctrl-C or a signal)"
                                   : "the replay stopped early (" + f.stop_reason + ")") +
         ": " + covered(f) + "; every number here describes only the part that ran.");
  if (f.wraparound_factor && *f.wraparound_factor > 1)
    warn("the load was wrapped onto a smaller device: it addresses " +
         fmt_significant(*f.wraparound_factor) +
         " times the device's size, so requests past the end were folded onto its start; "
         "locality, caching and the device's answers differ from the original's.");
  if (f.stall_s >= kStallMinS && f.stall_s * 1e9 >= kStallTimesP99 * f.lat_p99_ns)
    warn("stall: no request completed for " + fmt_elapsed(f.stall_s) + " from " +
         when(f.stall_at_s, f.start_unix) + " while " + std::to_string(f.stall_inflight) +
         " request(s) were in flight.");
  if (f.outliers > 0)
    warn("latency outliers: " + std::to_string(f.outliers) + " request(s) took more than " +
         fmt_num(kOutlierTimesP99) + "x the p99 of " + fmt_duration_ns(f.lat_p99_ns) +
         "; the slowest took " + fmt_duration_ns(f.lat_max_ns) + ", issued at " +
         when(f.lat_max_at_s, f.start_unix) + ".");
  if (percentile_supported(f.latency_n, 99) && f.lat_p50_ns > 0 &&
      f.lat_p99_ns > kTailRatio * f.lat_p50_ns)
    warn("long latency tail: p99 " + fmt_duration_ns(f.lat_p99_ns) + " is " +
         fmt_significant(f.lat_p99_ns / f.lat_p50_ns) + " times the median " +
         fmt_duration_ns(f.lat_p50_ns) + ".");
  if (f.issue_p99_ns && percentile_supported(f.issue_n, 99) && *f.issue_p99_ns > kIssueErrorNs)
    warn("the replay fell behind its schedule: p99 issue error " +
         fmt_duration_ns(*f.issue_p99_ns) + ".");
  if (f.demanded_iops && *f.demanded_iops > 0 && f.iops < kAchievedRatio * *f.demanded_iops)
    warn("achieved " + fmt_significant(f.iops) + " IOPS, " + pct(100 * f.iops / *f.demanded_iops) +
         " of the demanded " + fmt_significant(*f.demanded_iops) + " IOPS.");
  if (f.reordered_percent && *f.reordered_percent > kReorderPercent)
    warn(pct(*f.reordered_percent) + " of the requests were issued out of their recorded order.");
  if (f.pushed_back > 0)
    out.push_back({false, f.label + ": " + std::to_string(f.pushed_back) +
                              " request(s) were pushed back (issued later to keep an order)."});
  if (std::none_of(out.begin(), out.end(), [](const Finding& x) { return x.warn; })) {
    std::string t = f.label + ": nothing looks wrong";
    if (f.latency_n) t += ": no stall of 1 s or more, no latency above 10x the p99";
    if (f.reordered_percent) t += ", reordering at most 1 %";
    if (!f.latency_n) t += " in the request stream (no completions recorded, so no latency checks)";
    out.push_back({false, t + "."});
  }
  return out;
}

std::string headline(const Facts& f) {
  std::string s = f.label + ": " + std::to_string(f.requests) + " requests over " +
                  fmt_elapsed(f.duration_s) + ", " + fmt_significant(f.iops) + " IOPS, " +
                  fmt_bytes(f.bytes_per_s) + "/s";
  if (f.latency_n) {
    auto cell = [&](double v, double p) {
      return percentile_supported(f.latency_n, p) ? fmt_duration_ns(v) : std::string("-");
    };
    s += "; latency p50 " + cell(f.lat_p50_ns, 50) + ", p99 " + cell(f.lat_p99_ns, 99) +
         " (n = " + std::to_string(f.latency_n) + ")";
  }
  if (f.issue_p99_ns)
    s += "; issue error p99 " +
         (percentile_supported(f.issue_n, 99) ? fmt_duration_ns(*f.issue_p99_ns) : "-") +
         " (n = " + std::to_string(f.issue_n) + ")";
  if (f.interrupted) s += "; INTERRUPTED";
  if (f.interrupted && f.planned)
    s += " after " + std::to_string(f.requests) + " of " + std::to_string(*f.planned) + " requests";
  return s;
}

std::vector<Finding> fidelity_findings(const FidelityFacts& f) {
  std::string t = f.replay + " vs " + f.original + ": replay fidelity (was the load reproduced): ";
  double done = f.demanded ? static_cast<double>(f.requests) / static_cast<double>(f.demanded) : 1;
  t += std::to_string(f.requests) + " of " + std::to_string(f.demanded) + " requests (" +
       pct(100 * done) + "), mean request size " + pct(100 * f.size_ratio) + " of the original's";
  if (f.achieved_ratio) t += ", achieved " + pct(100 * *f.achieved_ratio) + " of the demanded rate";
  if (f.issue_p99_ns) t += ", p99 issue error " + fmt_duration_ns(*f.issue_p99_ns);
  if (f.reordered_percent) t += ", " + pct(*f.reordered_percent) + " reordered";
  if (!f.validation_verdict.empty()) t += ", --validate: " + f.validation_verdict;
  std::vector<std::string> why;
  if (f.interrupted) why.push_back("interrupted");
  if (done < kCompleteRatio) why.push_back("requests missing");
  if (!f.validation_verdict.empty() && f.validation_verdict != "COMPLETE")
    why.push_back("the block layer did not see every request");
  if (std::fabs(f.size_ratio - 1) > kSizeTolerance) why.push_back("sizes changed");
  if (f.achieved_ratio && *f.achieved_ratio < kAchievedRatio) why.push_back("rate not reached");
  if (f.issue_p99_ns && *f.issue_p99_ns > kIssueErrorNs) why.push_back("behind schedule");
  if (f.reordered_percent && *f.reordered_percent > kReorderPercent) why.push_back("reordered");
  std::string reasons;
  for (const auto& w : why) reasons += (reasons.empty() ? "" : ", ") + w;
  return {{!why.empty(),
           t + (why.empty() ? ": faithful." : ": NOT a faithful replay (" + reasons + ").")}};
}

FidelityFacts fidelity_facts(const Facts& fo, const Dataset& rep, const Facts& fr) {
  FidelityFacts ff;
  ff.replay = fr.label;
  ff.original = fo.label;
  ff.requests = fr.requests;
  ff.demanded = rep.planned.value_or(fo.requests);
  auto mean_size = [](const Facts& f) {
    return f.requests ? static_cast<double>(f.bytes) / static_cast<double>(f.requests) : 0.0;
  };
  if (mean_size(fo) > 0) ff.size_ratio = mean_size(fr) / mean_size(fo);
  if (fr.demanded_iops && *fr.demanded_iops > 0) ff.achieved_ratio = fr.iops / *fr.demanded_iops;
  if (percentile_supported(fr.issue_n, 99)) ff.issue_p99_ns = fr.issue_p99_ns;
  ff.reordered_percent = fr.reordered_percent;
  ff.interrupted = fr.interrupted || !fr.stop_reason.empty();
  ff.validation_verdict = rep.validation_verdict;
  return ff;
}

DeviceFacts device_facts(const Dataset& orig, const Facts& fo, const Dataset& rep,
                         const Facts& fr) {
  DeviceFacts df;
  df.replay = fr.label;
  df.original = fo.label;
  auto side = [](LatencyLayer l, const Facts& f) {
    LatencySide s;
    s.layer = f.latency_n ? l : LatencyLayer::kNone;
    if (percentile_supported(f.latency_n, 50)) s.p50_ns = f.lat_p50_ns;
    if (percentile_supported(f.latency_n, 99)) s.p99_ns = f.lat_p99_ns;
    return s;
  };
  df.orig = side(orig.latency_layer(), fo);
  df.rep = side(rep.latency_layer(), fr);
  df.replay_has_block = rep.block_latency.has_value();
  // Like with like: the replay's block layer (--validate) against a block-layer original.
  if (rep.block_latency &&
      (df.orig.layer == LatencyLayer::kBlock || df.orig.layer == LatencyLayer::kNone)) {
    df.rep.layer = LatencyLayer::kBlock;
    df.rep.p50_ns = rep.block_latency->p50;
    df.rep.p99_ns = rep.block_latency->count >= 100 ? std::optional<double>(rep.block_latency->p99)
                                                    : std::nullopt;
  }
  return df;
}

Finding device_finding(const DeviceFacts& f) {
  std::string t =
      f.replay + " vs " + f.original + ": how the devices answered (no fidelity criterion";
  t += "; another device may answer differently): ";
  auto cell = [](std::optional<double> v) { return v ? fmt_duration_ns(*v) : std::string("-"); };
  auto ratio = [](std::optional<double> a, std::optional<double> b) {
    return a && b && *b > 0 ? " (" + fmt_significant(*a / *b) + "x)" : std::string();
  };
  if (f.orig.layer == LatencyLayer::kNone)
    return {false, t + "the original has no latencies (a load without durations) to compare with."};
  if (f.rep.layer == LatencyLayer::kNone) return {false, t + "the replay has no latencies."};
  std::string lo = layer_name(f.orig.layer), lr = layer_name(f.rep.layer);
  if (f.orig.layer == f.rep.layer) {
    t += "latency measured in the " + lo + " on both sides: median " + cell(f.rep.p50_ns) + " vs " +
         cell(f.orig.p50_ns) + ratio(f.rep.p50_ns, f.orig.p50_ns) + ", p99 " + cell(f.rep.p99_ns) +
         " vs " + cell(f.orig.p99_ns) + ratio(f.rep.p99_ns, f.orig.p99_ns) + ".";
    return {false, t};
  }
  t += "latencies of different layers, not compared: the original's is measured " +
       std::string(f.orig.layer == LatencyLayer::kLoad ? lo : "in the " + lo) + " (median " +
       cell(f.orig.p50_ns) + "), the replay's in " + lr + " (median " + cell(f.rep.p50_ns) + ")";
  if (f.orig.layer == LatencyLayer::kBlock && !f.replay_has_block)
    t += "; replay with --validate to measure its block-layer latency";
  return {false, t + "."};
}

}  // namespace blkrr::report
