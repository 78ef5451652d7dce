// End-to-end tests of the report: shipped real loads, FAKE stamp, --bins
// re-reports, summary statistics and fidelity numbers in report.json.
#include "report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/trace_format.h"
#include "report/compare_report.h"
#include "report/report_fixtures.h"

namespace blkrr::report {
namespace {

using testing::exists;
using testing::slurp;
using testing::TempDir;

// Rows of a CSV data file (header excluded), as numbers.
std::vector<std::vector<double>> read_csv(const std::string& path) {
  std::vector<std::vector<double>> rows;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (std::getline(f, line)) {
    std::vector<double> r;
    size_t b = 0;
    while (b <= line.size()) {
      size_t e = line.find(',', b);
      if (e == std::string::npos) e = line.size();
      r.push_back(std::strtod(line.substr(b, e - b).c_str(), nullptr));
      b = e + 1;
    }
    rows.push_back(r);
  }
  return rows;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(slurp(path));
}

struct Shipped {
  const char* name;
  size_t requests, reads, writes, seconds;
  uint64_t distinct_sectors;
};
// Expected values computed independently (awk/python over the text files).
const Shipped kShipped[] = {{"linux-mysql", 80794, 7187, 73607, 3600, 1140481},
                            {"windows-mssql", 42976, 2528, 40448, 3063, 1234226}};

class ShippedLoad : public ::testing::TestWithParam<Shipped> {};

TEST_P(ShippedLoad, StaticReportHasTheExpectedSeriesAndPlots) {
  const Shipped& s = GetParam();
  auto d = load_dataset(std::string(BLKRR_TEST_DATA) + "/" + s.name + ".load.gz", "");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->samples.size(), s.requests);
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  std::vector<Dataset> data;
  data.push_back(std::move(*d));
  auto r = make_report(data, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string base = dir.path() + "/data/static-" + s.name;

  auto rate = read_csv(base + "-rate-1s.csv");
  ASSERT_EQ(rate.size(), s.seconds);
  double reads = 0, writes = 0;
  for (const auto& row : rate) {
    reads += row[1];
    writes += row[2];
  }
  EXPECT_EQ(reads, s.reads);
  EXPECT_EQ(writes, s.writes);

  auto cum = read_csv(base + "-ws-cumulative.csv");
  ASSERT_EQ(cum.size(), s.seconds);
  EXPECT_NEAR(cum.back()[1], s.distinct_sectors * 512.0 / (1024 * 1024), 1e-6);
  for (size_t i = 1; i < cum.size(); ++i) ASSERT_GE(cum[i][1], cum[i - 1][1]);
  for (const char* w : {"1s", "6s", "60s", "600s"}) {
    auto ws = read_csv(base + "-ws-" + w + ".csv");
    uint64_t win = std::stoull(w);
    EXPECT_EQ(ws.size(), (s.seconds + win - 1) / win) << w;
    auto seek = read_csv(base + "-seek-" + w + ".csv");
    double seeks = 0;
    for (const auto& row : seek) seeks += row[1];
    EXPECT_EQ(seeks, s.requests - 1) << w;
  }
  auto sizes = read_csv(base + "-sizes.csv");
  double n = 0;
  for (const auto& row : sizes) n += row[1] + row[2];
  EXPECT_EQ(n, s.requests);
  auto pos = read_csv(base + "-positions.csv");
  EXPECT_EQ(pos.size(), 50u);

  auto js = read_json(dir.path() + "/report.json");
  EXPECT_EQ(js["static"][s.name]["requests"], s.requests);
  EXPECT_EQ(js["static"][s.name]["iops_per_second"]["count"], s.seconds);
  std::string html = slurp(dir.path() + "/index.html");
  EXPECT_NE(html.find("Working set per 60 s window"), std::string::npos);
  EXPECT_NE(html.find("Requests per second (1 s windows)"), std::string::npos);
  EXPECT_EQ(html.find("FAKE RESULT"), std::string::npos);
  // The summary, then the groups; each plot links to the CSV it draws.
  size_t summary = html.find("<h2>Summary</h2>"), much = html.find("<h2 id=\"how-much\">");
  ASSERT_NE(much, std::string::npos);
  EXPECT_LT(summary, much);
  EXPECT_NE(html.find(std::string("<a href=\"data/static-") + s.name + "-sizes.csv\">"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"plots/size-histogram.gp\">"), std::string::npos);

  if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed: PNGs not checked";
  EXPECT_TRUE(r->render.ran);
  EXPECT_EQ(r->render.produced, r->plots) << r->render.message;
  EXPECT_EQ(r->plots, 23u);
  for (const auto& p : js["plots"]) {
    std::string png = slurp(dir.path() + "/" + p.get<std::string>());
    ASSERT_GT(png.size(), 1000u) << p;
    EXPECT_EQ(png.substr(1, 3), "PNG") << p;
  }
  EXPECT_NE(html.find("data:image/png;base64,iVBOR"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Report, ShippedLoad, ::testing::ValuesIn(kShipped),
                         [](const auto& param_info) {
                           std::string n = param_info.param.name;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// A replay of ten requests with latencies 1..10 ms, set points 0..90 ms.
Dataset small_replay(const std::string& label, bool fake) {
  Dataset d;
  d.label = label;
  d.path = label + ".replay.gz";
  d.kind = DataKind::kReplay;
  d.fake = fake;
  for (int i = 0; i < 10; ++i) {
    Sample s;
    s.t_ns = static_cast<uint64_t>(i) * 10'000'000;
    s.sector = 1000 + 8 * static_cast<uint64_t>(i);
    s.sectors = 8;
    s.op = i % 2 ? kSampleWrite : kSampleRead;
    s.flags = kSampleHasLatency | kSampleHasDelay;
    s.delay_ns = 0;
    s.latency_ns = static_cast<uint64_t>(i + 1) * 1'000'000;
    d.samples.push_back(s);
  }
  return d;
}

TEST(Report, SummaryStatisticsMatchHandComputedValues) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  std::vector<Dataset> data = testing::datasets(small_replay("ten", false));
  auto r = make_report(data, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->render.ran);
  EXPECT_NE(r->render.message.find("not found"), std::string::npos);
  auto js = read_json(dir.path() + "/report.json");
  auto lat = js["dynamic"]["ten"]["latency_ns"]["all"];  // integer ns (docs/json.md)
  EXPECT_EQ(lat["count"], 10);
  EXPECT_EQ(lat["min"], 1000000);
  EXPECT_EQ(lat["p50"], 5500000);
  EXPECT_EQ(lat["mean"], 5500000);
  EXPECT_EQ(lat["p75"], 7750000);
  EXPECT_EQ(lat["p90"], 9100000);
  EXPECT_EQ(lat["p95"], 9550000);
  EXPECT_EQ(lat["p99"], 9910000);
  EXPECT_EQ(lat["p999"], 9991000);
  EXPECT_EQ(lat["max"], 10000000);
  EXPECT_EQ(lat["stddev"], 3027650);
  auto rd = js["dynamic"]["ten"]["latency_ns"]["read"];  // 1,3,5,7,9
  EXPECT_EQ(rd["p50"], 5000000);
  // Data and scripts are there even without gnuplot; the page says why no plots.
  EXPECT_TRUE(exists(dir.path() + "/plots/sonar.gp"));
  EXPECT_TRUE(exists(dir.path() + "/data/dyn-ten-sonar-reads.csv"));
  EXPECT_EQ(read_csv(dir.path() + "/data/dyn-ten-sonar-reads.csv").size(), 5u);
  EXPECT_NE(slurp(dir.path() + "/index.html").find("was not found"), std::string::npos);
}

TEST(Report, FakeReplayGetsTheStampOthersDoNot) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  std::vector<Dataset> data = testing::datasets(small_replay("dry", true));
  ASSERT_TRUE(make_report(data, o).ok());
  for (const char* p :
       {"sonar", "latency-histogram", "delay-setpoint", "throughput-iops", "inflight"})
    EXPECT_NE(slurp(dir.path() + "/plots/" + p + ".gp").find("'FAKE RESULT'"), std::string::npos)
        << p;
  EXPECT_NE(slurp(dir.path() + "/index.html").find("class=\"fake\""), std::string::npos);
  EXPECT_EQ(read_json(dir.path() + "/report.json")["dynamic"]["dry"]["fake"], true);

  TempDir real;
  o.out_dir = real.path();
  std::vector<Dataset> good = testing::datasets(small_replay("real", false));
  ASSERT_TRUE(make_report(good, o).ok());
  EXPECT_EQ(slurp(real.path() + "/plots/sonar.gp").find("FAKE"), std::string::npos);
  EXPECT_EQ(slurp(real.path() + "/index.html").find("class=\"fake\""), std::string::npos);
}

TEST(Report, BinsReReportFromSavedData) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  std::vector<Dataset> data = testing::datasets(small_replay("ten", true));
  ASSERT_TRUE(make_report(data, o).ok());
  EXPECT_EQ(read_csv(dir.path() + "/data/dyn-ten-latency-histogram.csv").size(), 50u);
  ReportOptions again;
  again.out_dir = dir.path();
  again.gnuplot = o.gnuplot;
  again.bins = 4;
  auto r = rereport(again);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto h = read_csv(dir.path() + "/data/dyn-ten-latency-histogram.csv");
  ASSERT_EQ(h.size(), 4u);
  double n = 0;
  for (const auto& row : h) n += row[2] + row[3];
  EXPECT_EQ(n, 10);
  EXPECT_NEAR(h[0][0], 1.0, 1e-12);  // logarithmic buckets over [1, 10] ms
  EXPECT_NEAR(h[3][1], 10.0, 1e-12);
  auto js = read_json(dir.path() + "/report.json");
  EXPECT_EQ(js["options"]["bins"], 4);
  EXPECT_EQ(js["dynamic"]["ten"]["fake"], true);  // the marker survives the saved form
}

TEST(Report, ReReportWithoutEarlierReportIsAClearError) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  auto r = rereport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no earlier report"), std::string::npos);
}

// Original: 4 requests at 0, 10, 20, 30 ms with 1 ms latency.
// Replay a: delays 0, 0, 15, 0 ms (the third is issued after the fourth).
// Replay b: exact.
Dataset four(const std::string& label, DataKind kind, std::vector<int64_t> delay_ms) {
  Dataset d;
  d.label = label;
  d.kind = kind;
  for (size_t i = 0; i < 4; ++i) {
    Sample s;
    s.t_ns = i * 10'000'000;
    s.sector = 8 * i;
    s.sectors = 8;
    s.flags = kSampleHasLatency | (kind == DataKind::kReplay ? kSampleHasDelay : 0);
    s.latency_ns = 1'000'000;
    s.delay_ns = delay_ms.empty() ? 0 : delay_ms[i] * 1'000'000;
    d.samples.push_back(s);
  }
  return d;
}

TEST(Fidelity, OrderAndRunMetrics) {
  auto a = four("a", DataKind::kReplay, {0, 0, 15, 0});
  auto ta = timing_of(a, 1'000'000'000);
  ASSERT_TRUE(ta.ok());
  OrderFidelity of = order_fidelity(*ta);
  EXPECT_EQ(of.total, 4u);
  EXPECT_EQ(of.issue_reordered, 1u);
  EXPECT_DOUBLE_EQ(of.issue_percent, 25.0);
  EXPECT_EQ(of.completion_reordered, 1u);
  RunMetrics m = run_metrics(a, &*ta);
  EXPECT_NEAR(m.duration_s, 0.036, 1e-12);
  EXPECT_NEAR(m.iops, 4 / 0.036, 1e-9);
  EXPECT_NEAR(*m.issue_error_mean_ms, 3.75, 1e-12);
  EXPECT_NEAR(*m.latency_mean_ms, 1.0, 1e-12);
  Dataset orig = four("o", DataKind::kTrace, {});
  auto to = timing_of(orig, 1'000'000'000);
  ASSERT_TRUE(to.ok());
  RunMetrics o = run_metrics(orig, &*to);
  EXPECT_NEAR(o.duration_s, 0.031, 1e-12);
  EXPECT_FALSE(o.issue_error_mean_ms.has_value());
  EXPECT_NEAR(*o.inflight_mean, 4.0 / 31.0, 1e-12);
}

TEST(Fidelity, CompareReport) {
  TempDir dir;
  ReportOptions opt;
  opt.out_dir = dir.path();
  opt.gnuplot = "blkrr-no-such-gnuplot";
  opt.compare = true;
  std::vector<Dataset> data = testing::datasets(four("orig", DataKind::kTrace, {}),
                                                four("a", DataKind::kReplay, {0, 0, 15, 0}),
                                                four("b", DataKind::kReplay, {0, 0, 0, 0}));
  auto r = make_report(data, opt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto f = read_json(dir.path() + "/report.json")["fidelity"];
  EXPECT_EQ(f["original"], "orig");
  EXPECT_DOUBLE_EQ(f["reordering"]["a"]["issue_order_percent"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(f["reordering"]["b"]["issue_order_percent"].get<double>(), 0.0);
  // Time at level 0: 27 of 31 ms (original, b) vs 32 of 36 ms (a).
  EXPECT_NEAR(f["concurrency_ks"]["a"].get<double>(), 32.0 / 36 - 27.0 / 31, 1e-12);
  EXPECT_NEAR(f["concurrency_ks"]["b"].get<double>(), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(f["latency_ks"]["a"].get<double>(), 0.0);
  EXPECT_EQ(f["issue_error_ns"]["a"]["max"], 15000000);
  auto u = f["uncertainty"]["requests per second"];
  double ia = 4 / 0.036, ib = 4 / 0.031, ref = 4 / 0.031;
  EXPECT_EQ(u["n"], 2);
  EXPECT_NEAR(u["mean"].get<double>(), (ia + ib) / 2, 1e-9);
  EXPECT_NEAR(u["original"].get<double>(), ref, 1e-9);
  EXPECT_NEAR(u["bias_rel_rms"].get<double>(), std::sqrt(std::pow((ia - ref) / ref, 2) / 2), 1e-12);
  EXPECT_NEAR(u["reproducibility_sd"].get<double>(), std::fabs(ia - ib) / std::sqrt(2.0), 1e-9);
  EXPECT_FALSE(u["expanded_rel_k2"].is_null());
  std::string html = slurp(dir.path() + "/index.html");
  EXPECT_NE(html.find("Kolmogorov-Smirnov"), std::string::npos);
  EXPECT_NE(html.find("RFC 4737"), std::string::npos);
  EXPECT_NE(html.find("U (k=2)"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::report

namespace blkrr::report {
namespace {

// A native trace with two processes: per-process views from the real reader.
TEST(Report, PerProcessViewsFromANativeTrace) {
  TempDir dir;
  std::string path = dir.path() + "/t.blkrr";
  {
    TraceHeader h;
    h.host = "test";
    auto w = TraceWriter::create(path, h);
    ASSERT_TRUE(w.ok()) << w.error().message;
    auto req = [](uint64_t issue_us, uint64_t sector, uint32_t bytes, Op op, uint32_t tgid,
                  const char* comm, uint64_t disk_us) {
      Request q;
      q.issue_ns = 1'000'000'000 + issue_us * 1000;
      q.complete_ns = q.issue_ns + 500'000;
      q.disk_time_ns = disk_us * 1000;
      q.sector = sector;
      q.bytes = bytes;
      q.op = op;
      q.tgid = q.pid = tgid;
      q.set_comm(comm);
      return q;
    };
    // In completion order, not issue order.
    ASSERT_TRUE(w->append(req(100, 1000, 4096, Op::kWrite, 7, "mysqld", 300)).ok());
    ASSERT_TRUE(w->append(req(0, 0, 65536, Op::kRead, 9, "backup", 400)).ok());
    ASSERT_TRUE(w->append(req(200, 2000, 8192, Op::kWrite, 7, "mysqld", 200)).ok());
    Request flush = req(300, 0, 0, Op::kFlush, 7, "mysqld", 0);
    ASSERT_TRUE(w->append(flush).ok());
    ASSERT_TRUE(w->close({}).ok());
  }
  auto d = load_dataset(path, "");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->kind, DataKind::kTrace);
  ASSERT_EQ(d->samples.size(), 3u);
  EXPECT_EQ(d->other_requests, 1u);
  ASSERT_EQ(d->procs.size(), 2u);
  auto v = d->samples.to_vector();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)[1].t_ns, 0u);  // rebased on the earliest issue
  EXPECT_EQ((*v)[0].t_ns, 100'000u);
  EXPECT_EQ((*v)[0].latency_ns, 500'000u);
  TempDir out;
  ReportOptions o;
  o.out_dir = out.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  std::vector<Dataset> data;
  data.push_back(std::move(*d));
  ASSERT_TRUE(make_report(data, o).ok());
  // tgid,comm,requests,bytes,disk_time_s,disk_time_percent; by disk time.
  std::string procs = slurp(out.path() + "/data/static-t-processes.csv");
  EXPECT_EQ(procs,
            "tgid,comm,requests,bytes,disk_time_s,disk_time_percent\n"
            "7,mysqld,2,12288,0.0005,55.55555556\n"
            "9,backup,1,65536,0.0004,44.44444444\n");
  // mysqld: sizes 8 and 16 sectors; seeks from the end of the previous request
  // in issue order: 128 -> 1000 = 872 sectors, 1008 -> 2000 = 992 sectors.
  std::string dist = slurp(out.path() + "/data/static-t-process-distributions.csv");
  EXPECT_NE(dist.find("7,mysqld,size_sectors,8,1\n"), std::string::npos) << dist;
  EXPECT_NE(dist.find("7,mysqld,size_sectors,16,1\n"), std::string::npos) << dist;
  EXPECT_NE(dist.find("7,mysqld,seek_sectors,512,2\n"), std::string::npos) << dist;
  EXPECT_NE(dist.find("9,backup,size_sectors,128,1\n"), std::string::npos) << dist;
  EXPECT_EQ(dist.find("9,backup,seek"), std::string::npos) << dist;  // first request: no seek
  auto js = read_json(out.path() + "/report.json");
  EXPECT_EQ(js["static"]["t"]["processes"][0]["comm"], "mysqld");
  EXPECT_EQ(js["dynamic"]["t"]["latency_ns"]["all"]["p50"], 500000);
}

}  // namespace
}  // namespace blkrr::report

namespace blkrr::report {
namespace {

// 30 hours need windows wider than 1 s (at most 20000 per series): the
// per-second rates and the time axis stay right (they were 6x too high and
// 6x too short when 6 s windows were drawn as seconds).
TEST(Report, LongSpansKeepPerSecondRatesAndTheirTimeAxis) {
  Dataset d;
  d.label = "day";
  d.path = "day.load.gz";
  const uint64_t n = 40'000, span_ns = 30ull * 3600 * 1'000'000'000;
  for (uint64_t i = 0; i < n; ++i) {
    Sample s;
    s.t_ns = i * (span_ns / (n - 1));
    s.sector = i * 8;
    s.sectors = 8;
    s.op = i % 2 ? kSampleWrite : kSampleRead;
    d.samples.push_back(s);
  }
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  ASSERT_TRUE(make_report(testing::datasets(std::move(d)), o).ok());
  auto js = read_json(dir.path() + "/report.json");
  double mean = js["static"]["day"]["iops_per_second"]["mean"].get<double>();
  EXPECT_NEAR(mean, static_cast<double>(n) / (30 * 3600), 0.001) << "requests per second";
  auto rows = read_csv(dir.path() + "/data/static-day-rate-1s.csv");
  ASSERT_GE(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1][0] - rows[0][0], 6.0);  // 6 s windows: 18000 of them
  EXPECT_EQ(rows.size(), 18000u);
  auto plot = read_csv(dir.path() + "/data/static-day-rate-1s-iops-plot.csv");
  ASSERT_FALSE(plot.empty());
  EXPECT_NEAR(plot.back()[0], 30.0, 0.05);  // hours since start
  std::string html = slurp(dir.path() + "/index.html");
  EXPECT_NE(html.find("Requests per second (6 s windows)"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::report

namespace blkrr::report {
namespace {

// An input without read or write requests (only flushes) still gives a report.
TEST(Report, EmptyInputsStillReport) {
  Dataset load;
  load.label = "none";
  load.path = "none.load.gz";
  load.other_requests = 3;
  Dataset replay;
  replay.label = "empty";
  replay.path = "empty.replay.gz";
  replay.kind = DataKind::kReplay;
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  o.want_static = o.want_dynamic = true;
  auto r = make_report(testing::datasets(std::move(load), std::move(replay)), o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto js = read_json(dir.path() + "/report.json");
  EXPECT_EQ(js["static"]["none"]["requests"], 0);
  EXPECT_EQ(js["static"]["none"]["other_requests"], 3);
  EXPECT_NE(slurp(dir.path() + "/index.html").find("none: 0 requests"), std::string::npos);
}

TEST(ReportErrors, NothingToReportIsAUsageErrorAndAMissingEarlierReportNotFound) {
  ReportOptions o;
  o.out_dir = ::testing::TempDir() + "/blkrr-report-errors";
  auto none = make_report({}, o);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, ErrorKind::kUsage);
  auto again = rereport(o);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace blkrr::report
