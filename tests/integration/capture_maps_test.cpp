// The capture's kernel objects without a device: the fallback-vmlinux object
// loads here, and the sweeper and idle check on maps of the programs' layout.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <optional>

#include "capture/bpf_types.h"
#include "capture/features.h"
#include "capture/load_plan.h"
#include "capture/sweeper.h"
#include "tests/integration/test_capture_skip.h"
#include "core/fd.h"

namespace blkrr::testing {
namespace {

// The object compiled against bpf/vmlinux_fallback.h (for build machines
// without /sys/kernel/btf/vmlinux) loads here with the programs this
// kernel's features call for: CO-RE relocated every access.
TEST(CaptureMaps, FallbackVmlinuxObjectLoadsOnThisKernel) {
  SKIP_UNLESS_CAPTURE();
  auto f = capture::features();
  ASSERT_TRUE(f) << f.error().message;
  bpf_object* obj = bpf_object__open_file(BLKRR_BPF_FALLBACK_OBJ, nullptr);
  ASSERT_NE(obj, nullptr) << BLKRR_BPF_FALLBACK_OBJ;
  int want = 0;
  // With every optional program, stacked volumes' block_bio_queue and the
  // bio-level programs too.
  for (const auto& [name, on] :
       capture::program_autoload(capture::plan_programs(*f, true, false, true, true))) {
    bpf_program* p = bpf_object__find_program_by_name(obj, name.c_str());
    ASSERT_NE(p, nullptr) << name;
    bpf_program__set_autoload(p, on);
    want += on;
  }
  int err = bpf_object__load(obj);
  EXPECT_EQ(err, 0) << "loading " << BLKRR_BPF_FALLBACK_OBJ << ": " << strerror(-err);
  int n = 0;
  bpf_program* p = nullptr;
  bpf_object__for_each_program(p, obj) n += bpf_program__fd(p) >= 0;
  EXPECT_EQ(n, want);
  EXPECT_GE(n, 3);  // issue, complete, requeue at least
  bpf_object__close(obj);
}

// The sweeper on maps of the program's layout: only INFLIGHT entries older
// than the device's threshold go, the correction counter and the generation
// move, and only matching entries come back for emission.
TEST(CaptureMaps, SweeperDeletesOnlyStaleInflightEntries) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (BPF maps)";
  int inflight =
      bpf_map_create(BPF_MAP_TYPE_HASH, "t_inflight", 8, sizeof(blkrr_inflight), 64, nullptr);
  int devstate = bpf_map_create(BPF_MAP_TYPE_HASH, "t_devstate", 4, sizeof(capture::DevStateValue),
                                8, nullptr);
  int sweep_req = bpf_map_create(BPF_MAP_TYPE_HASH, "t_sweep", 4, 8, 8, nullptr);
  ASSERT_GE(inflight, 0);
  ASSERT_GE(sweep_req, 0);
  // devstate without a spin lock here (no BTF): the sweeper's BPF_F_LOCK
  // lookup then fails and every disk gets the 5 s floor.
  const uint64_t now = mono_ns() + 100'000'000'000ull;
  const uint32_t disk = make_dev(7, 3);
  auto put = [&](uint64_t key, uint64_t age_ns, uint32_t state, uint8_t emit) {
    blkrr_inflight e{};
    e.issue_ns = now - age_ns;
    e.disk = disk;
    e.state = state;
    e.emit = emit;
    e.sector = key;
    ASSERT_EQ(bpf_map_update_elem(inflight, &key, &e, BPF_ANY), 0);
  };
  put(1, 6'000'000'000ull, BLKRR_RQ_INFLIGHT, 1);  // stale, emitted
  put(2, 7'000'000'000ull, BLKRR_RQ_INFLIGHT, 0);  // stale, filtered out
  put(3, 1'000'000'000ull, BLKRR_RQ_INFLIGHT, 1);  // young
  put(4, 60'000'000'000ull, BLKRR_RQ_STARTED, 1);  // not issued: never swept
  put(5, 60'000'000'000ull, BLKRR_RQ_DONE, 1);     // finished: never swept
  volatile __u64 gen = 0;
  capture::Sweeper sw(inflight, devstate, sweep_req, &gen);
  auto res = sw.sweep(now);
  EXPECT_EQ(res.deleted, 2u);
  ASSERT_EQ(res.emitted.size(), 1u);
  EXPECT_EQ(res.emitted[0].sector, 1u);
  EXPECT_EQ(gen, 1u);
  uint64_t corr = 0;
  ASSERT_EQ(bpf_map_lookup_elem(sweep_req, &disk, &corr), 0);
  EXPECT_EQ(corr, 2u);
  for (uint64_t k : {3ull, 4ull, 5ull}) {
    blkrr_inflight e{};
    EXPECT_EQ(bpf_map_lookup_elem(inflight, &k, &e), 0) << k;
  }
  // Nothing more to do: the counter and generation stay.
  res = sw.sweep(now);
  EXPECT_EQ(res.deleted, 0u);
  EXPECT_EQ(gen, 1u);
  close(inflight);
  close(devstate);
  close(sweep_req);
}

// The idle check on maps of the program's layout: an INFLIGHT entry on a
// disk the kernel counts idle is a suspect on the first pass and given up on
// the second; busy or unknown disks, other states and an entry re-issued in
// between (new issue time) are left alone.
TEST(CaptureMaps, IdleCheckGivesUpOnlyTwiceSeenEntriesOfIdleDisks) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (BPF maps)";
  Fd inflight(
      bpf_map_create(BPF_MAP_TYPE_HASH, "t_inflight", 8, sizeof(blkrr_inflight), 64, nullptr));
  Fd devstate(bpf_map_create(BPF_MAP_TYPE_HASH, "t_devstate", 4, sizeof(capture::DevStateValue), 8,
                             nullptr));
  Fd sweep_req(bpf_map_create(BPF_MAP_TYPE_HASH, "t_sweep", 4, 8, 8, nullptr));
  ASSERT_TRUE(inflight && devstate && sweep_req);
  const uint32_t idle = make_dev(7, 1), busy = make_dev(7, 2), unknown = make_dev(7, 3);
  auto put = [&](uint64_t key, uint32_t disk, uint32_t state, uint64_t issue_ns) {
    blkrr_inflight e{};
    e.issue_ns = issue_ns;
    e.disk = disk;
    e.state = state;
    e.emit = 1;
    e.sector = key;
    ASSERT_EQ(bpf_map_update_elem(inflight.get(), &key, &e, BPF_ANY), 0);
  };
  put(1, idle, BLKRR_RQ_INFLIGHT, 100);
  put(2, idle, BLKRR_RQ_INFLIGHT, 200);
  put(3, idle, BLKRR_RQ_DONE, 300);
  put(4, busy, BLKRR_RQ_INFLIGHT, 400);
  put(5, unknown, BLKRR_RQ_INFLIGHT, 500);
  auto kernel = [&](uint32_t d) -> std::optional<uint64_t> {
    if (d == idle) return 0;
    if (d == busy) return 3;
    return std::nullopt;
  };
  volatile __u64 gen = 0;
  capture::Sweeper sw(inflight.get(), devstate.get(), sweep_req.get(), &gen);
  uint64_t marked = 0;
  auto res = sw.check_idle(kernel, &marked);
  EXPECT_EQ(res.deleted, 0u) << "one sighting is not proof";
  EXPECT_EQ(marked, 2u);
  put(2, idle, BLKRR_RQ_INFLIGHT, 250);  // re-issued meanwhile: a new request
  res = sw.check_idle(kernel, &marked);
  EXPECT_EQ(res.deleted, 1u);
  ASSERT_EQ(res.emitted.size(), 1u);
  EXPECT_EQ(res.emitted[0].sector, 1u);
  EXPECT_EQ(marked, 3u);  // key 2 marked again
  uint64_t corr = 0;
  ASSERT_EQ(bpf_map_lookup_elem(sweep_req.get(), &idle, &corr), 0);
  EXPECT_EQ(corr, 1u);
  EXPECT_EQ(gen, 1u);
  for (uint64_t k : {2ull, 3ull, 4ull, 5ull}) {
    blkrr_inflight e{};
    EXPECT_EQ(bpf_map_lookup_elem(inflight.get(), &k, &e), 0) << k;
  }
  res = sw.check_idle(kernel, &marked);
  EXPECT_EQ(res.deleted, 1u);  // key 2, seen twice with the same issue time
}

}  // namespace
}  // namespace blkrr::testing
