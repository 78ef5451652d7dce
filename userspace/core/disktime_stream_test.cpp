#include "core/disktime_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace blkrr {
namespace {

Request req(DevT dev, uint64_t issue, uint64_t complete, uint64_t sector) {
  Request r;
  r.dev = dev;
  r.part = dev;
  r.issue_ns = issue;
  r.complete_ns = complete;
  r.sector = sector;
  r.disk_time_ns = 12345;  // replaced
  return r;
}

// Random overlapping requests on two devices, with idle periods between bursts.
std::vector<Request> random_load(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<Request> out;
  uint64_t t = 1000;
  for (size_t i = 0; i < n; i++) {
    t += rng() % 3 == 0 ? 5000 + rng() % 20000 : rng() % 300;
    const uint64_t len = rng() % 50 == 0 ? 200000 + rng() % 400000 : 1 + rng() % 4000;
    out.push_back(req(rng() % 2 ? 7 : 9, t, t + len, i));
  }
  return out;
}

std::map<DevT, uint64_t> unions(const std::vector<Request>& reqs) {
  std::map<DevT, std::vector<Interval>> iv;
  for (const auto& r : reqs)
    if (r.completed()) iv[r.dev].push_back({r.issue_ns, r.complete_ns});
  std::map<DevT, uint64_t> out;
  for (auto& [dev, v] : iv) out[dev] = union_length(v);
  return out;
}

// Feeds the records in completion order, releasing at `now - delay` after
// every `batch` records; returns what came out, by sector.
std::map<uint64_t, Request> stream(const std::vector<Request>& load, uint64_t delay, size_t batch,
                                   DiskTimeStream& s) {
  std::vector<Request> order = load;
  std::stable_sort(order.begin(), order.end(), [](const Request& a, const Request& b) {
    return a.complete_ns < b.complete_ns;
  });
  std::map<uint64_t, Request> out;
  auto sink = [&](const Request& r) { EXPECT_TRUE(out.emplace(r.sector, r).second); };
  for (size_t i = 0; i < order.size(); i++) {
    s.add(order[i]);
    if ((i + 1) % batch == 0 && order[i].complete_ns > delay)
      s.release(order[i].complete_ns - delay, sink);
  }
  s.finish(sink);
  EXPECT_EQ(s.held(), 0u);
  return out;
}

TEST(DiskTimeStream, WithEnoughDelayChargesExactlyTheOfflineRule) {
  const auto load = random_load(1, 5000);
  DiskTimeStream s;
  auto out = stream(load, 10'000'000, 16, s);  // delay longer than any request
  std::vector<Request> offline = load;
  compute_disk_times(offline);
  ASSERT_EQ(out.size(), load.size());
  // Two completions at the same instant may split their charge either way
  // (the first one applied takes it): compare those by their sum.
  std::map<std::pair<DevT, uint64_t>, std::pair<uint64_t, uint64_t>> at;  // stream, offline
  for (const auto& r : offline) {
    auto& p = at[{r.dev, r.complete_ns}];
    p.first += out.at(r.sector).disk_time_ns;
    p.second += r.disk_time_ns;
  }
  for (const auto& [k, p] : at) EXPECT_EQ(p.first, p.second) << "completion at " << k.second;
}

TEST(DiskTimeStream, LateRecordsKeepTheSumEqualToTheUnion) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    const auto load = random_load(seed, 3000);
    DiskTimeStream s;
    // Delay shorter than the long requests: they arrive behind the watermark.
    auto out = stream(load, 1000 + seed * 500, 1 + seed % 7, s);
    std::map<DevT, uint64_t> sum;
    for (const auto& [sector, r] : out) sum[r.dev] += r.disk_time_ns;
    EXPECT_EQ(sum, unions(load)) << "seed " << seed;
    for (const auto& t : s.totals()) EXPECT_EQ(t.busy_ns, sum[t.dev]) << "seed " << seed;
  }
}

TEST(DiskTimeStream, LateRequestFillsOnlyTheIdleTime) {
  DiskTimeStream s;
  std::vector<Request> out;
  auto sink = [&](const Request& r) { out.push_back(r); };
  s.add(req(1, 100, 200, 1));
  s.add(req(1, 300, 400, 2));
  s.release(1000, sink);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].disk_time_ns, 100u);
  EXPECT_EQ(out[1].disk_time_ns, 100u);
  // 150..1500: busy with the others in 150..200 and 300..400; idle 200..300
  // and 400..1000 before the watermark, then charged by the rule to 1500.
  s.add(req(1, 150, 1500, 3));
  s.release(2000, sink);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].disk_time_ns, 100u + 600u + 500u);
  // Entirely behind the watermark and inside busy time: charged nothing.
  s.add(req(1, 160, 190, 4));
  s.release(2000, sink);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[3].disk_time_ns, 0u);
  ASSERT_EQ(s.totals().size(), 1u);
  EXPECT_EQ(s.totals()[0].busy_ns, 1400u);  // union 100..1500
  EXPECT_EQ(s.totals()[0].completions, 4u);
}

TEST(DiskTimeStream, RecordsWithoutCompletionPassWithZero) {
  DiskTimeStream s;
  std::vector<Request> out;
  Request r = req(1, 100, kNoTime, 1);
  s.add(r);
  s.release(0, [&](const Request& x) { out.push_back(x); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].disk_time_ns, 0u);
  EXPECT_TRUE(s.totals().empty());
}

TEST(DiskTimeStream, HoldsRecordsUntilTheWatermarkPassesTheirCompletion) {
  DiskTimeStream s;
  size_t n = 0;
  auto sink = [&](const Request&) { n++; };
  s.add(req(1, 100, 500, 1));
  s.release(500, sink);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(s.held(), 1u);
  s.release(501, sink);
  EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace blkrr
