// blkrr replay --validate end to end on loop devices: a real replay is
// complete, requests dropped by --cmode drop are reported as exactly the
// expected-missing ones, not as failures, and a small validation window keeps
// the result exact.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "converters/load_format.h"
#include "tests/integration/test_loop_device.h"

namespace blkrr {
namespace {

const std::string kBlkrr = BLKRR_BINARY;

bool need_root() {
  return geteuid() == 0 && access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

std::string tmp(const std::string& name) {
  return "/dev/shm/blkrr-rv-" + std::to_string(getpid()) + "-" + name;
}

int run(const std::string& cmd) {
  int st = std::system((cmd + " 2>" + tmp("stderr.txt")).c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

TEST(ReplayValidate, RealLoadWindowIsComplete) {
  if (!need_root()) GTEST_SKIP() << "needs root and BTF (BPF validator on a loop device)";
  auto dev = testing::LoopDevice::create(1ull << 30);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  std::string js = tmp("complete.json");
  int rc = run(kBlkrr + " replay " + BLKRR_TEST_DATA + "/linux-mysql.load.gz " + dev->path() +
               " --start 5 --duration 4 --validate --fail-incomplete --quiet --json-file " + js);
  ASSERT_EQ(rc, 0) << "exit status of blkrr replay --validate --fail-incomplete";
  auto j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  const auto& v = j["validation"];
  EXPECT_EQ(v["verdict"], "complete") << v.dump(1);
  EXPECT_DOUBLE_EQ(v["completeness_pct"].get<double>(), 100.0);
  EXPECT_TRUE(v["missing"].empty());
  EXPECT_TRUE(v["altered"].empty());
  EXPECT_EQ(v["block_requests"]["foreign"], 0);
  EXPECT_GT(j["requests"]["done"].get<uint64_t>(), 50u);
  std::remove(js.c_str());
  std::remove(tmp("stderr.txt").c_str());
}

TEST(ReplayValidate, DroppedRequestsAreExactlyTheExpectedMissing) {
  if (!need_root()) GTEST_SKIP() << "needs root and BTF (BPF validator on a loop device)";
  auto dev = testing::LoopDevice::create(256ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  // 40 pairs: a 1 MiB write, and 1 us later a 4 KiB write inside it (still in
  // flight: --cmode drop drops it); plus unrelated reads.
  std::string load = tmp("drop.load.gz");
  {
    auto w = LoadWriter::create(load, LoadKind::kLoad, {"crafted overlapping writes"});
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (int i = 0; i < 40; ++i) {
      int64_t t = int64_t{i} * 3'000'000;
      uint64_t base = uint64_t(i) * 4096;
      ASSERT_TRUE(w->write({t, base, 2048, Op::kWrite}).ok());
      ASSERT_TRUE(w->write({t + 1000, base + 8, 8, Op::kWrite}).ok());
      ASSERT_TRUE(w->write({t + 1'500'000, 300000 + uint64_t(i) * 64, 8, Op::kRead}).ok());
    }
    ASSERT_TRUE(w->close().ok());
  }
  std::string js = tmp("drop.json");
  int rc = run(kBlkrr + " replay " + load + " " + dev->path() +
               " --cmode drop --strong 0 --validate --fail-incomplete --quiet --json-file " + js);
  ASSERT_EQ(rc, 0) << "dropped requests must not make the replay incomplete";
  auto j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  uint64_t dropped = j["requests"]["dropped"].get<uint64_t>();
  EXPECT_GT(dropped, 30u) << "the crafted overlaps were not dropped";
  const auto& v = j["validation"];
  EXPECT_EQ(v["verdict"], "complete") << v.dump(1);
  EXPECT_TRUE(v["missing"].empty());
  ASSERT_EQ(v["expected_missing"].size(), dropped);
  for (const auto& m : v["expected_missing"]) {
    EXPECT_EQ(m["sectors"], 8) << m.dump();
    EXPECT_EQ(m["op"], "write") << m.dump();
  }
  std::remove(js.c_str());
  std::remove(load.c_str());
  std::remove(tmp("stderr.txt").c_str());
}

// A full-speed replay of the whole linux-mysql load (80,794 requests, about
// 1-2 s here) validated within a 100 ms window: the matcher resolves
// requests during the run and holds only part of them, and the result is
// still exact (every request covered, nothing late, no foreign I/O).
TEST(ReplayValidate, SmallWindowStaysExactAtFullSpeed) {
  if (!need_root()) GTEST_SKIP() << "needs root and BTF (BPF validator on a loop device)";
  auto dev = testing::LoopDevice::create(1ull << 30);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  std::string js = tmp("window.json");
  int rc = run(kBlkrr + " replay " + BLKRR_TEST_DATA + "/linux-mysql.load.gz " + dev->path() +
               " --timing fullspeed --validate --validate-window 100ms --fail-incomplete --quiet "
               "--json-file " +
               js);
  ASSERT_EQ(rc, 0) << "exit status of blkrr replay --validate --fail-incomplete";
  auto j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  const auto& v = j["validation"];
  EXPECT_EQ(v["verdict"], "complete") << v.dump(1);
  EXPECT_EQ(v["settings"]["validate_window_ns"], 100'000'000u);
  EXPECT_EQ(v["requests"]["submitted"], 80794u);
  EXPECT_EQ(v["requests"]["covered"], 80794u);
  EXPECT_EQ(v["requests"]["late"], 0u);
  EXPECT_EQ(v["block_requests"]["late"], 0u);
  EXPECT_EQ(v["block_requests"]["foreign"], 0u);
  EXPECT_EQ(v["block_requests"]["matched"], v["block_requests"]["observed"]);
  const uint64_t held = v["validator_cost"]["max_held_requests"].get<uint64_t>();
  std::fprintf(stderr, "most requests held at once: %llu of 80794\n",
               static_cast<unsigned long long>(held));
  EXPECT_GT(held, 0u);
  // Without the window every request is held to the end; with it about
  // 100 ms of the run plus the delivery lag (15-40 % of this 1 s run here).
  EXPECT_LT(held, 80794u * 3 / 4) << "the window did not resolve requests during the run";
  std::remove(js.c_str());
  std::remove(tmp("stderr.txt").c_str());
}

}  // namespace
}  // namespace blkrr
