#include "cli/replay_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

using testing::Argv;
using testing::kind_of;
using testing::parse_printing;

// A load that need not exist (parsing opens none) and a DEVICE that does:
// a path with a slash that exists is taken as it is (core/device.h).
const std::string kLoad = "prod.load.gz";
const std::string kDev = "/dev/null";

Result<ReplayArgs> parse(std::initializer_list<std::string> opts) {
  std::vector<std::string> v = {"replay"};
  v.insert(v.end(), opts);
  v.push_back(kLoad);
  v.push_back(kDev);
  Argv a(std::move(v));
  return parse_replay_args(a.argc(), a.argv());
}

TEST(ReplayArgs, DefaultsAndPositionals) {
  auto r = parse({});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const replay::SessionOptions& o = r->session;
  EXPECT_FALSE(r->help_printed);
  EXPECT_EQ(o.load, kLoad);
  EXPECT_EQ(o.device, kDev);
  EXPECT_TRUE(o.more_pieces.empty());
  EXPECT_EQ(o.queue_depth, 128u);
  EXPECT_EQ(o.threads, 16u);
  EXPECT_EQ(o.spin_ns, 100'000u);
  EXPECT_TRUE(o.adaptive_spin);
  EXPECT_EQ(o.compensation, replay::Compensation::kAuto);
  EXPECT_TRUE(o.direct);
  EXPECT_EQ(o.rt_priority, 0);
  EXPECT_FALSE(o.start_at_unix.has_value());
  EXPECT_EQ(o.source.repeat, 1u);
  EXPECT_EQ(o.source.format, InputFormat::kAuto);
  EXPECT_FALSE(o.scale);
  EXPECT_FALSE(o.progress);  // run_replay's question
  EXPECT_EQ(o.json_path, "");
  EXPECT_EQ(o.command_line, "replay prod.load.gz /dev/null");
  EXPECT_EQ(r->validate_window_ns, 5'000'000'000u);
  EXPECT_FALSE(r->json_stdout || r->validate || r->fail_incomplete || r->quiet || r->overwrite ||
               r->exact_percentiles);
}

TEST(ReplayArgs, LoadAndDeviceAreRequired) {
  Argv one{"replay", kLoad};
  EXPECT_EQ(kind_of(parse_replay_args(one.argc(), one.argv())), ErrorKind::kUsage);
}

TEST(ReplayArgs, HelpRunsNothing) {
  std::string out;
  auto r = parse_printing(parse_replay_args, {"replay", "--help"}, out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("Usage: blkrr replay [options] LOAD DEVICE"), std::string::npos);
}

TEST(ReplayArgs, WrapAndScaleExcludeEachOther) {
  EXPECT_EQ(kind_of(parse({"--wrap", "--scale"})), ErrorKind::kUsage);
  auto s = parse({"--scale"});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->session.scale);
  auto w = parse({"--wrap"});
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w->session.scale);
}

TEST(ReplayArgs, ExtraArgumentsMustBePiecesOfOneRecording) {
  // Files that are not pieces of one rotated recording (these do not exist).
  Argv extra{"replay", kLoad, "run.json", kDev};
  auto r = parse_replay_args(extra.argc(), extra.argv());
  EXPECT_EQ(kind_of(r), ErrorKind::kUsage);
}

TEST(ReplayArgs, DeviceNamesAreResolved) {
  Argv unknown{"replay", kLoad, "nosuchdev0"};
  EXPECT_EQ(kind_of(parse_replay_args(unknown.argc(), unknown.argv())), ErrorKind::kUsage);
}

TEST(ReplayArgs, InputFormatIsKnown) {
  EXPECT_EQ(kind_of(parse({"--from", "nope"})), ErrorKind::kUsage);
  auto r = parse({"--from", "native"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.source.format, InputFormat::kNative);
}

TEST(ReplayArgs, RepeatAtLeastOnce) {
  EXPECT_EQ(kind_of(parse({"--repeat", "0"})), ErrorKind::kUsage);
  auto r = parse({"--repeat", "3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.source.repeat, 3u);
}

TEST(ReplayArgs, QueueDepthInRange) {
  EXPECT_EQ(kind_of(parse({"--queue-depth", "0"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--queue-depth", "65537"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--bottleneck", "65537"})), ErrorKind::kUsage);
  auto r = parse({"--queue-depth", "65536"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.queue_depth, 65536u);
  auto b = parse({"--bottleneck", "1"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->session.queue_depth, 1u);
}

TEST(ReplayArgs, ThreadsInRange) {
  EXPECT_EQ(kind_of(parse({"--threads", "0"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--threads", "4097"})), ErrorKind::kUsage);
  auto r = parse({"--threads", "4096", "-e", "threads"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.threads, 4096u);
  EXPECT_EQ(r->session.engine, replay::EngineKind::kThreads);
}

TEST(ReplayArgs, RealtimePriorityInRangeAndSleepsToDeadlines) {
  EXPECT_EQ(kind_of(parse({"--realtime", "100"})), ErrorKind::kUsage);
  auto r = parse({"--realtime", "99"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.rt_priority, 99);
  EXPECT_EQ(r->session.spin_ns, 0u);  // no spinning under SCHED_FIFO unless asked
  auto s = parse({"--realtime", "5", "--spin-us", "50"});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->session.spin_ns, 50'000u);
}

TEST(ReplayArgs, SpinAtMostOneSecond) {
  EXPECT_EQ(kind_of(parse({"--spin-us", "1000001"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--realtime", "5", "--spin-us", "2000000"})), ErrorKind::kUsage);
  auto r = parse({"--spin-us", "1000000", "--fixed-spin"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.spin_ns, 1'000'000'000u);
  EXPECT_FALSE(r->session.adaptive_spin);
}

TEST(ReplayArgs, SwitchesSetTheirSessionOption) {
  auto r = parse({"--no-compensation", "--no-direct", "--start-at", "1800000000", "--speedup",
                  "2.5", "--start", "1m", "-D", "1.5s", "--exact-percentiles", "-q"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const replay::SessionOptions& o = r->session;
  EXPECT_EQ(o.compensation, replay::Compensation::kOff);
  EXPECT_FALSE(o.direct);
  ASSERT_TRUE(o.start_at_unix.has_value());
  EXPECT_EQ(*o.start_at_unix, 1800000000.0);
  EXPECT_EQ(o.schedule.speedup, 2.5);
  EXPECT_EQ(o.schedule.window_start_ns, 60'000'000'000u);
  EXPECT_EQ(o.schedule.window_duration_ns, 1'500'000'000u);
  EXPECT_TRUE(r->exact_percentiles);
  EXPECT_TRUE(r->quiet);
}

TEST(ReplayArgs, BadOptionValuesAreUsageErrors) {
  EXPECT_EQ(kind_of(parse({"--timing", "nope"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--start", "1q"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--speedup", "x"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-n"})), ErrorKind::kUsage);  // removed: --dry-run
}

TEST(ReplayArgs, DependencyRulesAndQuantileInRange) {
  auto d = parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->session.schedule.deps.think, DependencyOptions::Think::kWork);
  EXPECT_EQ(d->session.schedule.deps.think_quantile, 10u);
  EXPECT_EQ(d->session.schedule.deps.async, DependencyOptions::Async::kSlots);
  auto r = parse({"--dep-think", "recorded", "--dep-think-quantile", "100", "--dep-async",
                  "completion", "--dep-window", "2ms"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->session.schedule.deps.think, DependencyOptions::Think::kRecorded);
  EXPECT_EQ(r->session.schedule.deps.think_quantile, 100u);
  EXPECT_EQ(r->session.schedule.deps.async, DependencyOptions::Async::kCompletion);
  EXPECT_EQ(r->session.schedule.deps.thread_window_ns, 2'000'000u);
  auto z = parse({"--dep-think-quantile", "0"});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->session.schedule.deps.think_quantile, 0u);
  EXPECT_EQ(kind_of(parse({"--dep-think-quantile", "101"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--dep-think-quantile", "-1"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--dep-think-quantile", "x"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--dep-think", "raw"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--dep-async", "depth"})), ErrorKind::kUsage);
}

TEST(ReplayArgs, CompensationOnOffOrByRuleNotBoth) {
  auto on = parse({"--compensation"});
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_EQ(on->session.compensation, replay::Compensation::kOn);
  auto off = parse({"--no-compensation", "--dep-think", "recorded"});
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->session.compensation, replay::Compensation::kOff);
  EXPECT_EQ(kind_of(parse({"--compensation", "--no-compensation"})), ErrorKind::kUsage);
}

TEST(ReplayArgs, ReapSpinOffByDefaultAndInRange) {
  auto d = parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->session.reap_spin_ns, 0u);
  auto s = parse({"--reap-spin-us", "50"});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->session.reap_spin_ns, 50'000u);
  auto m = parse({"--reap-spin-us", "1000"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->session.reap_spin_ns, 1'000'000u);
  EXPECT_EQ(kind_of(parse({"--reap-spin-us", "1001"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--reap-spin-us", "-1"})), ErrorKind::kUsage);
}

TEST(ReplayArgs, FailIncompleteNeedsValidate) {
  EXPECT_EQ(kind_of(parse({"--fail-incomplete"})), ErrorKind::kUsage);
  auto r = parse({"--validate", "--fail-incomplete"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->validate);
  EXPECT_TRUE(r->fail_incomplete);
}

TEST(ReplayArgs, ValidateWindowNeedsValidate) {
  EXPECT_EQ(kind_of(parse({"--validate-window", "1s"})), ErrorKind::kUsage);
  auto r = parse({"--validate", "--validate-window", "2s"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->validate_window_ns, 2'000'000'000u);
}

TEST(ReplayArgs, ValidateNeedsRealIo) {
  EXPECT_EQ(kind_of(parse({"--validate", "--fake-io"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"--validate", "--dry-run"})), ErrorKind::kUsage);
  auto r = parse({"--fake-io", "--dry-run"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->session.fake_io);
  EXPECT_TRUE(r->session.dry_run);
}

TEST(ReplayArgs, JsonOnStandardOutputOrInAFile) {
  EXPECT_EQ(kind_of(parse({"-j", "--json-file", "x.json"})), ErrorKind::kUsage);
  auto j = parse({"-j"});
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(j->json_stdout);
  EXPECT_EQ(j->session.json_path, "");  // "-" only once the outputs are checked
  auto f = parse({"--json-file", "x.json", "--overwrite"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->session.json_path, "x.json");
  EXPECT_TRUE(f->overwrite);
}

TEST(ReplayArgs, OneWriterOfStandardOutput) {
  EXPECT_EQ(kind_of(parse({"-j", "-o", "-"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->session.output, "-");
}

}  // namespace
}  // namespace blkrr::cli
