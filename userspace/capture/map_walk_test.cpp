#include "capture/map_walk.h"

#include <errno.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

// A map in memory behind the two calls: keys in order, one key whose lookup
// fails (deleted after it was listed), and the flags the lookups were given.
struct FakeMap {
  static inline std::map<uint32_t, uint64_t> entries;
  static inline uint32_t vanished = UINT32_MAX;
  static inline std::vector<uint64_t> flags_seen;
  static int next_key(int, const void* prev, void* next) {
    auto it = prev ? entries.upper_bound(*static_cast<const uint32_t*>(prev)) : entries.begin();
    if (it == entries.end()) return -ENOENT;
    *static_cast<uint32_t*>(next) = it->first;
    return 0;
  }
  static int lookup(int, const void* key, void* value, uint64_t flags) {
    flags_seen.push_back(flags);
    const uint32_t k = *static_cast<const uint32_t*>(key);
    if (k == vanished) return -ENOENT;
    *static_cast<uint64_t*>(value) = entries.at(k);
    return 0;
  }
};

using Seen = std::vector<std::pair<uint32_t, uint64_t>>;

TEST(MapWalk, VisitsEveryKeyOnceInTheKernelsOrder) {
  FakeMap::entries = {{7, 70}, {1, 10}, {4, 40}};
  FakeMap::vanished = UINT32_MAX;
  FakeMap::flags_seen.clear();
  Seen seen;
  for_each_map_entry<uint32_t, uint64_t, FakeMap>(
      -1, [&](const uint32_t& k, uint64_t& v) { seen.emplace_back(k, v); }, 4);
  EXPECT_EQ(seen, (Seen{{1, 10}, {4, 40}, {7, 70}}));
  EXPECT_EQ(FakeMap::flags_seen, (std::vector<uint64_t>{4, 4, 4}));
}

TEST(MapWalk, SkipsAKeyDeletedBeforeItsLookupAndGoesOn) {
  FakeMap::entries = {{1, 10}, {2, 20}, {3, 30}};
  FakeMap::vanished = 2;
  Seen seen;
  for_each_map_entry<uint32_t, uint64_t, FakeMap>(
      -1, [&](const uint32_t& k, uint64_t& v) { seen.emplace_back(k, v); });
  EXPECT_EQ(seen, (Seen{{1, 10}, {3, 30}}));
}

TEST(MapWalk, EmptyMapCallsNothing) {
  FakeMap::entries.clear();
  int calls = 0;
  for_each_map_entry<uint32_t, uint64_t, FakeMap>(-1, [&](const uint32_t&, uint64_t&) { calls++; });
  EXPECT_EQ(calls, 0);
}

// The same walk over a real BPF hash map (needs CAP_BPF).
TEST(MapWalk, RealHashMap) {
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "walk_test", sizeof(uint64_t), sizeof(uint32_t), 64,
                          nullptr);
  if (fd < 0)
    GTEST_SKIP() << "cannot create a BPF map (" << std::strerror(errno)
                 << "): needs root or CAP_BPF; the capture integration tests walk real maps";
  std::map<uint64_t, uint32_t> want;
  for (uint64_t k = 1; k <= 40; ++k) {
    const uint32_t v = static_cast<uint32_t>(k * 3);
    ASSERT_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
    want[k] = v;
  }
  std::map<uint64_t, uint32_t> seen;
  int calls = 0;
  for_each_map_entry<uint64_t, uint32_t>(fd, [&](const uint64_t& k, uint32_t& v) {
    seen[k] = v;
    calls++;
  });
  close(fd);
  EXPECT_EQ(calls, 40);
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace blkrr::capture
