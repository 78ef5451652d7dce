// When the loader runs the checker (bpf/capture.bpf.c, blkrr_check): a pass
// over the request map that finds requests the kernel finished without
// running the completion program. A pass walks every bucket of the map
// (about 1.3 ms here), so it does not run on every tick:
//   * every second (backstop; the only trigger without device state);
//   * on the next tick after a pass that marked suspects (their
//     confirmation: an entry is given up on the second pass that finds its
//     request not in flight);
//   * when a disk has requests pending but no event since the previous tick
//     (the symptom of a lost completion on an idle disk), once per such
//     state: a request that is merely slow does not trigger pass after pass.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace blkrr::capture {

struct DiskActivity {
  uint32_t disk = 0;
  uint64_t pending = 0;   // requests in flight in the device state
  uint64_t clock_ns = 0;  // time of the device's latest event
};

class CheckPolicy {
 public:
  static constexpr uint64_t kTickNs = 100'000'000;  // the loader's tick
  static constexpr uint64_t kBackstopNs = 1'000'000'000;

  // At each tick: the disks' state and the checker's suspect counter
  // (cumulative). True: run a pass now.
  bool tick(uint64_t now_ns, const std::vector<DiskActivity>& disks, uint64_t suspects_marked);

 private:
  struct Seen {
    uint64_t clock_ns = 0;
    uint64_t quiet_checked_clock_ns = UINT64_MAX;  // quiet state already checked
  };
  std::map<uint32_t, Seen> seen_;
  uint64_t last_run_ns_ = 0;
  bool ran_ = false;
  uint64_t suspects_at_run_ = 0;
};

}  // namespace blkrr::capture
