#include "report/summary.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

// n requests, one per millisecond, each 1 ms long (reads of 4 KiB).
std::vector<Sample> steady_samples(size_t n) {
  std::vector<Sample> v;
  for (size_t i = 0; i < n; ++i) {
    Sample s;
    s.t_ns = i * 1'000'000;
    s.sectors = 8;
    s.flags = kSampleHasLatency;
    s.latency_ns = 1'000'000;
    v.push_back(s);
  }
  return v;
}

Dataset dataset(const std::vector<Sample>& v) {
  Dataset d;
  d.label = "t";
  d.kind = DataKind::kTrace;
  d.samples = SampleStore::from(v);
  return d;
}
Dataset steady(size_t n) {
  return dataset(steady_samples(n));
}

// The facts as the report computes them (with the input's Timing).
Facts facts_of(const Dataset& d) {
  auto t = timing_of(d, 1'000'000'000);
  EXPECT_TRUE(t.ok());
  return blkrr::report::facts_of(d, t.ok() ? &*t : nullptr);
}

TEST(Summary, SteadyLoadLooksFine) {
  Facts f = facts_of(steady(1000));
  EXPECT_EQ(f.latency_n, 1000u);
  EXPECT_DOUBLE_EQ(f.lat_p99_ns, 1e6);
  EXPECT_EQ(f.outliers, 0u);
  auto w = findings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FALSE(w[0].warn);
  EXPECT_EQ(w[0].text,
            "t: nothing looks wrong: no stall of 1 s or more, no latency above 10x the p99.");
  EXPECT_EQ(headline(f),
            "t: 1000 requests over 1 s, 1000 IOPS, 3.91 MiB/s; latency p50 1.00 ms, p99 1.00 ms "
            "(n = 1000)");
}

// A load wrapped onto a smaller device is listed, not "nothing looks wrong".
TEST(Summary, AWrappedLoadIsListed) {
  Dataset d = steady(1000);
  d.wraparound_factor = 478.6;
  auto w = findings(facts_of(d));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].warn);
  EXPECT_EQ(
      w[0].text.rfind("t: the load was wrapped onto a smaller device: it addresses 479 times", 0),
      0u)
      << w[0].text;
  d.wraparound_factor = 1.0;  // it fitted exactly
  EXPECT_FALSE(findings(facts_of(d))[0].warn);
}

TEST(Summary, StallAndOutlierAreNamed) {
  auto v = steady_samples(1000);
  v[500].latency_ns = 3'000'000'000;  // one request hangs 3 s, nothing else runs
  for (size_t i = 501; i < v.size(); ++i) v[i].t_ns += 3'000'000'000;
  Facts f = facts_of(dataset(v));
  EXPECT_DOUBLE_EQ(f.stall_s, 3.0);
  EXPECT_DOUBLE_EQ(f.stall_at_s, 0.5);
  EXPECT_EQ(f.stall_inflight, 1u);
  EXPECT_EQ(f.outliers, 1u);
  auto w = findings(f);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].warn);
  EXPECT_EQ(w[0].text,
            "t: stall: no request completed for 3 s from t = 0.500 s while 1 request(s) were "
            "in flight.");
  EXPECT_EQ(w[1].text,
            "t: latency outliers: 1 request(s) took more than 10x the p99 of 1.00 ms; the "
            "slowest took 3.00 s, issued at t = 0.500 s.");
}

TEST(Summary, FewSamplesGiveNoPercentiles) {
  Facts f = facts_of(steady(3));
  EXPECT_EQ(headline(f).substr(headline(f).find("latency")), "latency p50 1.00 ms, p99 - (n = 3)");
  EXPECT_EQ(f.outliers, 0u);
}

TEST(Summary, ReplayRulesFire) {
  Facts f;
  f.label = "r";
  f.iops = 50;
  f.demanded_iops = 100;
  f.issue_n = 1000;
  f.issue_p99_ns = 5e6;
  f.reordered_percent = 2.5;
  f.pushed_back = 4;
  auto w = findings(f);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].text, "r: the replay fell behind its schedule: p99 issue error 5.00 ms.");
  EXPECT_EQ(w[1].text, "r: achieved 50.0 IOPS, 50.0 % of the demanded 100 IOPS.");
  EXPECT_EQ(w[2].text, "r: 2.50 % of the requests were issued out of their recorded order.");
  EXPECT_FALSE(w[3].warn);
}

TEST(Summary, FidelityVerdict) {
  FidelityFacts f;
  f.replay = "r1";
  f.original = "orig";
  f.requests = f.demanded = 1000;
  f.achieved_ratio = 0.98;
  f.issue_p99_ns = 20e3;
  f.reordered_percent = 0.0;
  auto w = fidelity_findings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FALSE(w[0].warn);
  EXPECT_EQ(w[0].text,
            "r1 vs orig: replay fidelity (was the load reproduced): 1000 of 1000 requests (100 %), "
            "mean request size 100 % of the original's, achieved 98.0 % of the demanded rate, p99 "
            "issue error 20.0 us, 0 % reordered: faithful.");
  f.issue_p99_ns = 5e6;
  f.size_ratio = 0.5;
  EXPECT_TRUE(fidelity_findings(f)[0].warn);
  EXPECT_NE(fidelity_findings(f)[0].text.find("NOT a faithful replay (sizes changed, behind "
                                              "schedule)."),
            std::string::npos)
      << fidelity_findings(f)[0].text;
}

TEST(Summary, WhenNamesWallClock) {
  EXPECT_EQ(when(83, 1e9), "t = 83 s (01:48:03 UTC)");
}

}  // namespace
}  // namespace blkrr::report
