// The replay target: locked (device_lock.h) and opened O_DIRECT and, unless
// --force, O_EXCL after the safety checks, with its size and logical block size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/device.h"
#include "core/fd.h"
#include "core/result.h"
#include "replay/device_lock.h"

namespace blkrr::replay {

struct TargetOptions {
  bool allow_file = false;  // --allow-file: a regular file is fine (tests)
  bool force = false;       // --force: write over signatures / mounted / locked devices anyway
  bool direct = true;       // O_DIRECT (--no-direct turns it off; results are FAKE)
  bool dry_run = false;     // open read-only, the device is never touched
};

struct Target {
  DeviceLock lock;  // released after fd is closed (members end in reverse order)
  Fd fd;
  std::string path;
  bool is_file = false;
  uint64_t size_bytes = 0;
  uint32_t logical_block = 512;
  uint32_t nr_requests = 0;           // the device queue's request slots (sysfs), 0 unknown
  std::string description;            // "/dev/loop3 (block device, 1.0 GiB, logical block 512)"
  std::vector<std::string> warnings;  // safety findings overridden by --force
};

// Why blkrr refuses to write to `path` given what the probe found, or nullopt
// when the device is safe to use.
std::optional<std::string> safety_refusal(const std::string& path, const DeviceSafety& s);

Result<Target> open_target(const std::string& path, const TargetOptions& o);

// The queue depth to use on `t`: `requested`, or the device queue's request
// slots when there are fewer (with a warning in t.warnings). Past them a
// non-blocking io_uring submission gets EAGAIN and io_uring hands the
// request to a worker thread, which issues it late and out of order.
uint32_t fit_queue_depth(uint32_t requested, Target& t);

}  // namespace blkrr::replay
