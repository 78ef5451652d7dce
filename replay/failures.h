// The requests of a replay that the device failed: counted by errno, the
// first of them listed, and whether the replay stopped early because of them
// (--stop-on-error, or the device went away).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/record.h"

namespace blkrr::replay {

struct FailedRequest {
  uint64_t seq = 0;  // the request's index in the load
  Op op = Op::kRead;
  uint64_t sector = 0;  // on the target
  uint32_t sectors = 0;
  int32_t result = 0;      // the completion's result: -errno, or the bytes of a short transfer
  uint64_t submit_ns = 0;  // after the start instant
};

struct Failures {
  static constexpr size_t kMaxListed = 100;
  uint64_t count = 0;
  std::map<std::string, uint64_t> by_errno;  // "EIO" -> n; "short" for short transfers
  std::vector<FailedRequest> listed;         // the first kMaxListed
  // Why the replay stopped before the end of the load, or "" (it did not,
  // or a signal stopped it).
  std::string stop_reason;
  bool device_gone = false;

  void add(const FailedRequest& f);
  // "write of 8 sectors at sector 2048 (request 17) returned EIO (Input/output error)"
  static std::string describe(const FailedRequest& f);
};

// "EIO" for 5; "errno 300" for a number without a name.
std::string errno_name(int err);

// The summary's requests.failures: {by_errno, listed: [{request, op, sector,
// sectors, errno, result, submit_ns}], listed_max, stop_reason, device_gone}.
nlohmann::json failures_json(const Failures& f);

// Whether a block device node still names a device the kernel has: the
// node's device number under /sys/dev/block (scsi_debug's `delete`, a USB
// disk pulled out). A regular file is always present.
bool device_still_present(const std::string& path);

}  // namespace blkrr::replay
