// A report of a long input holds bins, not requests: with the store's memory
// budget, the sort runs and the exact-percentile limit made small, a
// 30-hour replay of 300k requests goes through the disk-backed paths (spilled
// store, external merge sort, histogram percentiles). The test counts what
// is kept (samples in memory, rows per plot) and checks the results against
// exact computations over the same requests held in a vector here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "core/distribution.h"
#include "core/log_histogram.h"
#include "core/stats.h"
#include "report/report.h"
#include "report/report_fixtures.h"

namespace blkrr::report {
namespace {

using testing::slurp;
using testing::TempDir;

constexpr size_t kRequests = 300'000;

// 30 hours of a replay: bursts, 40 % reads, random and sequential positions,
// lognormal latencies, delays with a few late requests (reordered issues).
std::vector<Sample> long_replay() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> lat(-7, 1.3);
  std::vector<Sample> v;
  v.reserve(kRequests);
  double t = 0, step = 30 * 3600.0 / kRequests;
  uint64_t pos = 0;
  for (size_t i = 0; i < kRequests; ++i) {
    t += -std::log(1 - u(rng)) * step;
    Sample s;
    s.t_ns = static_cast<uint64_t>(t * 1e9);
    s.op = u(rng) < 0.4 ? kSampleRead : kSampleWrite;
    s.sectors = 8u << static_cast<unsigned>(u(rng) * 4);
    pos = u(rng) < 0.5 ? pos + s.sectors : static_cast<uint64_t>(u(rng) * 1e8);
    s.sector = pos;
    s.flags = kSampleHasLatency | kSampleHasDelay;
    s.latency_ns = static_cast<uint64_t>(lat(rng) * 1e9) + 1000;
    s.delay_ns = u(rng) < 0.03 ? 2'000'000'000 : static_cast<int64_t>(u(rng) * 50'000);
    v.push_back(s);
  }
  // In completion order, as replay results are written.
  std::stable_sort(v.begin(), v.end(), [](const Sample& a, const Sample& b) {
    return a.complete_ns() < b.complete_ns();
  });
  return v;
}

// Small limits for one test, restored afterwards.
class SmallLimits {
 public:
  SmallLimits() : budget_(SampleStore::memory_budget()) {
    SampleStore::set_memory_budget(4 * SampleStore::kChunk * sizeof(Sample));
    set_default_sort_run(40'000);
    Distribution::set_default_exact_limit(20'000);
  }
  ~SmallLimits() {
    SampleStore::set_memory_budget(budget_);
    set_default_sort_run(0);
    Distribution::set_default_exact_limit(Distribution::kDefaultExactLimit);
  }

 private:
  uint64_t budget_;
};

// Distinct sectors touched: intervals sorted and merged.
uint64_t distinct_sectors(std::vector<Sample> v) {
  std::sort(v.begin(), v.end(),
            [](const Sample& a, const Sample& b) { return a.sector < b.sector; });
  uint64_t total = 0, end = 0;
  for (const auto& s : v) {
    uint64_t b = std::max(s.sector, end);
    if (s.end_sector() > b) total += s.end_sector() - b;
    end = std::max(end, s.end_sector());
  }
  return total;
}

TEST(LongInput, ReportKeepsBinsNotRequestsAndStaysExact) {
  SmallLimits limits;
  auto v = long_replay();
  Dataset d;
  d.label = "long";
  d.path = "long.replay.gz";
  d.kind = DataKind::kReplay;
  d.samples = SampleStore::from(v);
  ASSERT_TRUE(d.samples.status().ok());
  EXPECT_TRUE(d.samples.spilled());
  EXPECT_EQ(d.samples.memory_samples(), 4 * SampleStore::kChunk);  // of 300k

  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  o.want_static = o.want_dynamic = true;
  auto r = make_report(testing::datasets(std::move(d)), o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto js = nlohmann::json::parse(slurp(dir.path() + "/report.json"));

  // The page and report.json say how the numbers were computed.
  std::string method = js["method"];
  EXPECT_NE(method.find("300000 requests"), std::string::npos) << method;
  EXPECT_NE(method.find("in a temporary file"), std::string::npos) << method;
  EXPECT_NE(method.find("exact, no sampling"), std::string::npos) << method;
  EXPECT_NE(method.find("log-bucketed histograms"), std::string::npos) << method;
  EXPECT_NE(slurp(dir.path() + "/index.html").find("How this report was computed"),
            std::string::npos);

  // Percentiles from the histogram agree with the exact ones within the stated error.
  std::vector<double> lat;
  lat.reserve(v.size());
  for (const auto& s : v) lat.push_back(static_cast<double>(s.latency_ns) / 1e6);
  std::sort(lat.begin(), lat.end());
  auto sum = js["dynamic"]["long"]["latency_ns"]["all"];  // integer ns (docs/json.md)
  EXPECT_EQ(sum["percentiles"], "histogram");
  EXPECT_DOUBLE_EQ(sum["percentile_rel_error"].get<double>(), LogHistogram::kRelError);
  for (auto [key, p] : {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}, {"p999", 99.9}}) {
    double exact_ns = percentile_sorted(lat, p) * 1e6;
    EXPECT_NEAR(sum[key].get<double>(), exact_ns, exact_ns * LogHistogram::kRelError + 1) << key;
  }

  // Disk-backed sorted passes are exact: working set, seek distance, reordering.
  auto st = js["static"]["long"];
  EXPECT_DOUBLE_EQ(st["working_set_total_mib"].get<double>(),
                   static_cast<double>(distinct_sectors(v)) * 512 / (1024.0 * 1024.0));
  auto by_t = v;
  std::stable_sort(by_t.begin(), by_t.end(),
                   [](const Sample& a, const Sample& b) { return a.t_ns < b.t_ns; });
  double seek = 0;
  for (size_t i = 1; i < by_t.size(); ++i) {
    uint64_t pe = by_t[i - 1].end_sector(), s = by_t[i].sector;
    seek += static_cast<double>(s < pe ? pe - s : s - pe);
  }
  EXPECT_NEAR(st["seek_avg_sectors"].get<double>(), seek / (kRequests - 1), 1e-6);
  auto by_issue = v;
  std::stable_sort(by_issue.begin(), by_issue.end(),
                   [](const Sample& a, const Sample& b) { return a.issue_ns() < b.issue_ns(); });
  uint64_t highest = 0, reordered = 0;
  for (const auto& s : by_issue) {
    if (s.t_ns < highest)
      ++reordered;
    else
      highest = s.t_ns;
  }
  ASSERT_GT(reordered, 0u);
  std::string headline = js["summary"]["numbers"][0];
  EXPECT_NE(headline.find("300000 requests"), std::string::npos) << headline;
  double pct = 100.0 * static_cast<double>(reordered) / kRequests;
  bool named = false;
  for (const auto& f : js["summary"]["findings"])
    named |= f["text"].get<std::string>().find(fmt_significant(pct) + " % of the requests") !=
             std::string::npos;
  EXPECT_TRUE(named) << "reordering of " << pct << " % not in the findings";

  // What is kept per plot depends on the bins: at most ~1000 bins per time
  // plot, per-second series capped at kMaxSeriesWindows windows.
  for (const auto& f : js["data_files"]) {
    std::string path = f.get<std::string>();
    std::string text = slurp(dir.path() + "/" + path);
    auto rows = std::count(text.begin(), text.end(), '\n');
    size_t limit = path.find("-plot.csv") != std::string::npos ? 2 * 1000 + 1
                   : path.find("-1s.csv") != std::string::npos ? 20000 + 2
                   : path.find("-sonar-") != std::string::npos ? 480 * 320 + 1
                                                               : SIZE_MAX;
    EXPECT_LE(static_cast<size_t>(rows), limit) << path;
  }
}

}  // namespace
}  // namespace blkrr::report
