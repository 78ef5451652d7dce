// One replay per device. A replay takes a BSD lock (flock LOCK_EX|LOCK_NB) on
// the device node it writes to — the lock systemd and udev honour (udev does
// not probe a device while it is locked) — and writes its pid and start time
// to a holder file beside it, /run/blkrr/replay-MAJ:MIN.lock, so that a
// second replay can say who holds the device. Without --force a second
// replay is refused; with it, it goes on unlocked, with a warning.
//
// What it detects: another blkrr replay on the same device node, and any
// other program holding a BSD lock on it (named by its pid from /proc/locks).
// What it does not: plain openers that take no lock (fio, dd, a database),
// and a replay onto a partition while another replays onto its whole disk
// (different nodes; the exclusive open in target.cpp may still see them).
// `blkrr record` and `replay --validate` take no lock: they may run alongside.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::replay {

// Where holder files go; BLKRR_RUN_DIR overrides it (tests).
std::string lock_dir();

class DeviceLock {
 public:
  // Locks `path` (a block device node or, with --allow-file, a regular file)
  // through its own descriptor. Held by another: an error naming the holder
  // (exit 2), or with `force` an unlocked DeviceLock and a warning.
  static Result<DeviceLock> take(const std::string& path, bool force,
                                 std::vector<std::string>& warnings);
  DeviceLock() = default;
  DeviceLock(DeviceLock&& o) noexcept;
  DeviceLock& operator=(DeviceLock&& o) noexcept;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  ~DeviceLock();  // removes the holder file, then releases the lock

  bool held() const { return fd_ >= 0; }
  const std::string& holder_file() const { return holder_file_; }

 private:
  void release();
  int fd_ = -1;
  std::string holder_file_;  // written by this process, "" if none
};

// Who holds the BSD lock on `path`: "blkrr replay pid N since TIME" from its
// holder file, else "pid N (COMM)" from /proc/locks, else "another process".
std::string lock_holder(const std::string& path);

}  // namespace blkrr::replay
