// The comparison of a replay with its original (like with like, fidelity
// apart from how the devices answered), interrupted replays, plots scaled to
// short inputs, one throughput unit, and the report directory's rules.
#include "report/compare_report.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "report/report.h"
#include "report/static_series.h"
#include "report/summary.h"
#include "report/report_fixtures.h"

namespace blkrr::report {
namespace {

using testing::exists;
using testing::slurp;
using testing::TempDir;

// 100 requests of 4 KiB, one every `step_ns`; `latency_us` each (0: none).
Dataset steady(const std::string& label, DataKind kind, uint64_t latency_us,
               uint64_t step_ns = 10'000'000) {
  Dataset d;
  d.label = label;
  d.path = label + (kind == DataKind::kReplay ? ".replay.gz" : ".blkrr");
  d.kind = kind;
  for (uint64_t i = 0; i < 100; ++i) {
    Sample s;
    s.t_ns = i * step_ns;
    s.sector = 8 * i;
    s.sectors = 8;
    s.op = i % 2 ? kSampleWrite : kSampleRead;
    if (latency_us) s.flags |= kSampleHasLatency;
    if (kind == DataKind::kReplay) s.flags |= kSampleHasDelay;
    s.latency_ns = latency_us * 1000;
    s.delay_ns = kind == DataKind::kReplay ? 20'000 : 0;
    d.samples.push_back(s);
  }
  return d;
}

// The replay's SUMMARY line as blkrr replay writes it (replay/results.cpp,
// validate/report_io.cpp), with the block-layer latency --validate measured.
const char* kValidatedSummary =
    R"(SUMMARY: {"interrupted":false,"requests":{"planned":100,"done":100},)"
    R"("validation":{"verdict":"complete","latency_ns":{"block":{"count":100,"p50":25700,)"
    R"("p90":30000,"p99":41000,"p999":41000,"mean":26000,"max":41000}}}})";

nlohmann::json compare(const std::string& dir, Dataset orig, Dataset replay) {
  ReportOptions o;
  o.out_dir = dir;
  o.gnuplot = "blkrr-no-such-gnuplot";
  o.compare = true;
  auto r = make_report(testing::datasets(std::move(orig), std::move(replay)), o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return nlohmann::json::parse(slurp(dir + "/report.json"));
}

// Against the trace "NOT a faithful replay" (user-space latency against the
// trace's block-layer latency), against the load made from it "faithful":
// the replay's fidelity is now judged on the replay alone, the same both ways.
TEST(CompareLikeWithLike, OneReplayGetsOneVerdictAgainstTraceAndLoad) {
  TempDir a, b;
  auto vs_trace =
      compare(a.path(), steady("orig", DataKind::kTrace, 19), steady("run", DataKind::kReplay, 50));
  auto vs_load =
      compare(b.path(), steady("orig", DataKind::kLoad, 0), steady("run", DataKind::kReplay, 50));
  const std::string want =
      "run vs orig: replay fidelity (was the load reproduced): 100 of 100 requests (100 %), mean "
      "request size 100 % of the original's, achieved 100 % of the demanded rate, p99 issue error "
      "20.0 us, 0 % reordered: faithful.";
  EXPECT_EQ(vs_trace["summary"]["fidelity"][0], want);
  EXPECT_EQ(vs_load["summary"]["fidelity"][0], want);
  // How the devices answered is said apart, and never compares two layers.
  EXPECT_EQ(vs_trace["summary"]["devices"][0],
            "run vs orig: how the devices answered (no fidelity criterion; another device may "
            "answer differently): latencies of different layers, not compared: the original's is "
            "measured in the block layer (median 19.0 us), the replay's in user space (median "
            "50.0 us); replay with --validate to measure its block-layer latency.");
  EXPECT_EQ(vs_load["summary"]["devices"][0],
            "run vs orig: how the devices answered (no fidelity criterion; another device may "
            "answer differently): the original has no latencies (a load without durations) to "
            "compare with.");
  EXPECT_EQ(vs_trace["fidelity"]["latency_ks_layers"]["run"], "block layer vs user space");
  EXPECT_EQ(vs_trace["fidelity"]["latency_layers"]["orig"][0]["latency"], "block layer");
  EXPECT_EQ(vs_trace["fidelity"]["latency_layers"]["run"][0]["latency"], "user space");
  EXPECT_NE(slurp(a.path() + "/index.html").find("different layers, not like with like"),
            std::string::npos);
}

// With --validate the replay has its block-layer latency: that is what the
// trace's is compared with, and the page, JSON and CSV say so.
TEST(CompareLikeWithLike, AValidatedReplayIsComparedInTheBlockLayer) {
  TempDir dir;
  Dataset run = steady("run", DataKind::kReplay, 50);
  run.info.push_back(kValidatedSummary);
  apply_info_markers(run);
  ASSERT_TRUE(run.block_latency.has_value());
  EXPECT_EQ(run.validation_verdict, "COMPLETE");
  EXPECT_EQ(run.planned, 100u);
  auto js = compare(dir.path(), steady("orig", DataKind::kTrace, 19), std::move(run));
  EXPECT_EQ(js["summary"]["devices"][0],
            "run vs orig: how the devices answered (no fidelity criterion; another device may "
            "answer differently): latency measured in the block layer on both sides: median "
            "25.7 us vs 19.0 us (1.35x), p99 41.0 us vs 19.0 us (2.16x).");
  EXPECT_NE(
      js["summary"]["fidelity"][0].get<std::string>().find(", --validate: COMPLETE: faithful."),
      std::string::npos)
      << js["summary"]["fidelity"][0];
  const auto& layers = js["fidelity"]["latency_layers"]["run"];
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1]["latency"], "block layer (--validate)");
  EXPECT_EQ(layers[1]["p50_ns"], 25700);
  EXPECT_EQ(slurp(dir.path() + "/data/cmp-latency-layers.csv"),
            "label,role,latency,p50_ns,p99_ns\n"
            "orig,original,block layer,19000,19000\n"
            "run,replay,user space,50000,50000\n"
            "run,replay,block layer (--validate),25700,41000\n");
}

// Real data: the blktrace capture tests/data/blktrace/fio-randrw (block-layer
// latencies), the load made from it and a replay of that load with --validate
// onto a loop device (tests/data/replay/README.md says how they were made).
TEST(CompareLikeWithLike, ARealValidatedReplayAgainstItsTraceAndItsLoad) {
  const std::string data = BLKRR_TEST_DATA;
  auto trace = load_dataset(std::vector<std::string>{data + "/blktrace/fio-randrw.blktrace.0",
                                                     data + "/blktrace/fio-randrw.blktrace.1"},
                            "orig");
  auto load = load_dataset(data + "/replay/fio-randrw.load.gz", "orig");
  auto replay = load_dataset(data + "/replay/fio-randrw-validated.replay.gz", "lab");
  auto replay2 = load_dataset(data + "/replay/fio-randrw-validated.replay.gz", "lab");
  ASSERT_TRUE(trace.ok() && load.ok() && replay.ok() && replay2.ok());
  EXPECT_EQ(trace->latency_layer(), LatencyLayer::kBlock);
  EXPECT_EQ(replay->latency_layer(), LatencyLayer::kUserSpace);
  ASSERT_TRUE(replay->block_latency.has_value());
  EXPECT_EQ(replay->block_latency->count, 6000u);
  EXPECT_EQ(replay->validation_verdict, "COMPLETE");
  EXPECT_EQ(replay->planned, 6000u);
  TempDir a, b;
  auto vs_trace = compare(a.path(), std::move(*trace), std::move(*replay));
  auto vs_load = compare(b.path(), std::move(*load), std::move(*replay2));
  const std::string verdict = vs_trace["summary"]["fidelity"][0];
  EXPECT_EQ(verdict, vs_load["summary"]["fidelity"][0]);
  EXPECT_EQ(verdict.rfind("lab vs orig: replay fidelity (was the load reproduced): 6000 of 6000 "
                          "requests (100 %), mean request size 100 % of the original's",
                          0),
            0u)
      << verdict;
  EXPECT_NE(verdict.find("--validate: COMPLETE"), std::string::npos) << verdict;
  const std::string devices = vs_trace["summary"]["devices"][0];
  EXPECT_NE(devices.find("latency measured in the block layer on both sides: median "),
            std::string::npos)
      << devices;
}

// A replay that lost requests or fell behind is unfaithful whatever it is compared with.
TEST(CompareLikeWithLike, AnIncompleteReplayIsNotFaithful) {
  FidelityFacts f;
  f.replay = "r";
  f.original = "o";
  f.requests = 40;
  f.demanded = 100;
  f.interrupted = true;
  f.validation_verdict = "INCOMPLETE";
  auto w = fidelity_findings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].warn);
  EXPECT_EQ(w[0].text,
            "r vs o: replay fidelity (was the load reproduced): 40 of 100 requests (40.0 %), mean "
            "request size 100 % of the original's, --validate: INCOMPLETE: NOT a faithful replay "
            "(interrupted, requests missing, the block layer did not see every request).");
}

// An interrupted replay was reported like one that ran to its end.
TEST(InterruptedReplay, IsLabelledInTheNumbersAndWhatLooksWrong) {
  Dataset run = steady("run", DataKind::kReplay, 50);
  run.info.push_back(R"(SUMMARY: {"interrupted":true,"requests":{"planned":400,"done":100}})");
  apply_info_markers(run);
  EXPECT_TRUE(run.interrupted);
  auto t = timing_of(run, 1'000'000'000);
  ASSERT_TRUE(t.ok());
  Facts f = facts_of(run, &*t);
  auto w = findings(f);
  ASSERT_FALSE(w.empty());
  EXPECT_TRUE(w[0].warn);
  EXPECT_EQ(w[0].text,
            "run: INTERRUPTED replay (Ctrl-C or a signal): it covers 100 of the 400 requests the "
            "load demanded (25.0 %); every number here describes only the part that ran.");
  const std::string h = headline(f);
  EXPECT_EQ(h.substr(h.find("; INTERRUPTED")), "; INTERRUPTED after 100 of 400 requests");
  // A replay that stopped by itself (a failing device) says why.
  Dataset stopped = steady("st", DataKind::kReplay, 50);
  stopped.info.push_back(
      R"(SUMMARY: {"requests":{"planned":400,"failures":{"stop_reason":"the device is gone"}}})");
  apply_info_markers(stopped);
  auto ws = findings(facts_of(stopped, nullptr));
  EXPECT_EQ(ws[0].text.rfind("st: the replay stopped early (the device is gone): it covers 100 "
                             "of the 400",
                             0),
            0u)
      << ws[0].text;
}

// An 8-second trace got 60 s and 10-minute working-set and seek windows.
TEST(PlotsFitTheData, AShortTraceGetsWindowsScaledToItsLength) {
  EXPECT_EQ(static_windows_ns(3'600'000'000'000),
            (std::vector<uint64_t>{1'000'000'000, 6'000'000'000, 60'000'000'000, 600'000'000'000}));
  EXPECT_EQ(static_windows_ns(8'000'000'000),
            (std::vector<uint64_t>{10'000'000, 60'000'000, 600'000'000, 6'000'000'000}));
  EXPECT_EQ(static_windows_ns(0).front(), 1'000'000u);  // 1 ms at the least
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  Dataset d = steady("short", DataKind::kTrace, 19, 80'000'000);  // 7.92 s of requests
  ASSERT_TRUE(make_report(testing::datasets(std::move(d)), o).ok());
  auto js = nlohmann::json::parse(slurp(dir.path() + "/report.json"));
  std::vector<std::string> tags;
  for (const auto& [k, v] : js["static"]["short"]["working_set_max_mib"].items()) tags.push_back(k);
  EXPECT_EQ(tags, (std::vector<std::string>{"10ms", "600ms", "60ms", "6s"}));  // sorted
  EXPECT_TRUE(exists(dir.path() + "/data/static-short-seek-600ms.csv"));
  EXPECT_FALSE(exists(dir.path() + "/plots/ws-600s-lin.gp"));
}

// MiB/s in the summary, MB/s in the tables: now MiB/s everywhere.
TEST(PlotsFitTheData, ThroughputIsInMiBEverywhere) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  ASSERT_TRUE(make_report(testing::datasets(steady("t", DataKind::kTrace, 19)), o).ok());
  const std::string html = slurp(dir.path() + "/index.html");
  EXPECT_EQ(html.find("MB/s"), std::string::npos);
  EXPECT_NE(html.find("MiB/s"), std::string::npos);
  auto js = nlohmann::json::parse(slurp(dir.path() + "/report.json"));
  // 100 requests of 4 KiB a second: 0.390625 MiB/s in each full second.
  EXPECT_DOUBLE_EQ(js["static"]["t"]["mibs_per_second"]["max"].get<double>(), 0.390625);
  const std::string rate = slurp(dir.path() + "/data/static-t-rate-1s.csv");
  EXPECT_EQ(rate.substr(0, rate.find('\n')), "t_s,read_iops,write_iops,read_mibs,write_mibs");
}

// The issue-error histogram's tail was invisible on a linear count axis.
TEST(PlotsFitTheData, IssueErrorCountsAreOnALogAxis) {
  TempDir dir;
  auto js =
      compare(dir.path(), steady("orig", DataKind::kTrace, 19), steady("r", DataKind::kReplay, 50));
  const std::string gp = slurp(dir.path() + "/plots/cmp-issue-error.gp");
  EXPECT_NE(gp.find("set logscale y"), std::string::npos) << gp;
  EXPECT_NE(gp.find("($3 > 0 ? $3 : 1/0)"), std::string::npos) << gp;
  EXPECT_NE(slurp(dir.path() + "/plots/delay-histogram.gp").find("set logscale y"),
            std::string::npos);
}

// Two inputs with one label: the error named renaming files, not -l.
TEST(ReportErrors, OneLabelTwiceSuggestsLabelOption) {
  TempDir dir;
  ReportOptions o;
  o.out_dir = dir.path();
  o.gnuplot = "blkrr-no-such-gnuplot";
  auto r = make_report(
      testing::datasets(steady("x", DataKind::kTrace, 19), steady("x", DataKind::kTrace, 19)), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_NE(r.error().message.find("-l NAME"), std::string::npos) << r.error().message;
}

// `report -o a/b/` refused because a/ was missing; an existing report was replaced silently.
TEST(ReportErrors, TheDirectoryIsMadeWithItsParentsAndAReportIsNotReplaced) {
  TempDir dir;
  const std::string out = dir.path() + "/a/b";
  ASSERT_TRUE(check_report_dir(out, {}, {}, Existing::kRefuse).ok());
  ReportOptions o;
  o.out_dir = out;
  o.gnuplot = "blkrr-no-such-gnuplot";
  ASSERT_TRUE(make_report(testing::datasets(steady("t", DataKind::kTrace, 19)), o).ok());
  EXPECT_TRUE(exists(out + "/index.html"));
  auto again = check_report_dir(out, {}, {}, Existing::kRefuse);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message,
            "-o " + out +
                " holds index.html of an earlier run; blkrr replaces no file unless asked: give "
                "--overwrite to replace them, or another directory");
  EXPECT_TRUE(check_report_dir(out, {}, {}, Existing::kReplace).ok());
}

// As an unprivileged user, in a directory that exists: "create the parent
// directory first" pointed the wrong way; the reason is the permission.
TEST(ReportErrors, AnUnwritableParentIsNamedWithThePermission) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string parent = dir.path() + "/locked";
  ASSERT_EQ(::mkdir(parent.c_str(), 0555), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // root may write anywhere: check as nobody
    ::close(fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
    auto st = check_report_dir(parent + "/rep", {}, {}, Existing::kRefuse);
    std::string m = st.ok() ? "ok" : st.error().message;
    ssize_t n = ::write(fds[1], m.data(), m.size());
    ::_exit(n < 0 ? 3 : 0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(msg, "-o " + parent + "/rep: cannot create it in " + parent +
                     ": Permission denied; you may not write in " + parent +
                     "; choose a directory you can write to");
}

}  // namespace
}  // namespace blkrr::report
