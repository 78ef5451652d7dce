#include "replay/target.h"
#include "core/units.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace blkrr::replay {

std::optional<std::string> safety_refusal(const std::string& path, const DeviceSafety& s) {
  if (s.mounted)
    return path + " is in use: mounted on " + s.mount_point +
           " (unmount it, or pass --force to destroy its contents anyway)";
  if (!s.signature.empty())
    return "libblkid finds a " + s.signature + " on " + path +
           "; a replay overwrites it (wipefs the device, or pass --force)";
  if (s.has_partitions)
    return path + " has partitions; a replay overwrites them (pass --force to proceed)";
  if (s.holders)
    return path + " is used by device-mapper or md (sysfs holders); pass --force to proceed";
  return std::nullopt;
}

namespace {

// open(2), retried for up to 3 s while an exclusive open fails with EBUSY: a
// replay that just ended (its lock released) may hold the device a little
// longer, until the kernel tears its io_uring down (asynchronously), with the
// device registered as a fixed file.
int open_exclusive(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  for (int i = 0; fd < 0 && errno == EBUSY && (flags & O_EXCL) && i < 60; ++i) {
    ::usleep(50'000);
    fd = ::open(path.c_str(), flags);
  }
  return fd;
}

}  // namespace

Result<Target> open_target(const std::string& path, const TargetOptions& o) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return Error::system("cannot open replay device '" + path + "'", errno);
  Target t;
  t.path = path;
  if (S_ISREG(st.st_mode)) {
    if (!o.allow_file)
      return Error(ErrorKind::kUsage,
                   "refusing to replay onto '" + path +
                       "': it is a regular file, not a block device (pass --allow-file for tests)");
    t.is_file = true;
  } else if (!S_ISBLK(st.st_mode)) {
    return Error(ErrorKind::kUsage, "refusing to replay onto '" + path + "': not a block device");
  }
  if (!t.is_file) {
    auto safety = probe_device_safety(path);
    if (!safety) return safety.error().context("checking " + path + " before the replay");
    if (auto why = safety_refusal(path, *safety)) {
      if (!o.force && !o.dry_run) return Error(ErrorKind::kUsage, "refusing to replay: " + *why);
      t.warnings.push_back("overridden by --force: " + *why);
    }
  }
  if (!o.dry_run) {
    auto lock = DeviceLock::take(path, o.force, t.warnings);
    if (!lock) return lock.error();
    t.lock = std::move(*lock);
  }
  int flags = (o.dry_run ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  if (o.direct) flags |= O_DIRECT;
  // EBUSY while mounted or held exclusively (device-mapper, md, mkfs); plain
  // openers (fio, dd) are not seen.
  if (!t.is_file && !o.dry_run && !o.force) flags |= O_EXCL;
  int fd = open_exclusive(path, flags);
  if (fd < 0) {
    int e = errno;
    if (e == EBUSY && (flags & O_EXCL))
      return Error(ErrorKind::kUsage,
                   "refusing to replay: " + path +
                       " is in use: another program opened it exclusively (EBUSY: a file "
                       "system, device-mapper, md or a formatting tool); pass --force to "
                       "replay anyway");
    std::string hint;
    if (e == EINVAL && o.direct)
      hint =
          "the file system does not support O_DIRECT, e.g. tmpfs; use a loop device or "
          "--no-direct";
    return Error::system("cannot open '" + path + "'" + (o.direct ? " with O_DIRECT" : ""), e,
                         hint);
  }
  t.fd = Fd(fd);
  if (t.is_file) {
    t.size_bytes = static_cast<uint64_t>(st.st_size);
    t.logical_block = 512;
  } else {
    uint64_t size = 0;
    if (ioctl(fd, BLKGETSIZE64, &size) != 0)
      return Error::system("cannot read the size of '" + path + "'", errno);
    int lbs = 512;
    if (ioctl(fd, BLKSSZGET, &lbs) != 0 || lbs < 512) lbs = 512;
    t.size_bytes = size;
    t.logical_block = static_cast<uint32_t>(lbs);
    t.nr_requests = queue_nr_requests(make_dev(major(st.st_rdev), minor(st.st_rdev))).value_or(0);
  }
  if (t.size_bytes < t.logical_block)
    return Error(ErrorKind::kUsage, "replay device '" + path + "' is empty (size " +
                                        std::to_string(t.size_bytes) + " bytes)");
  t.description = path + " (" + (t.is_file ? "regular file" : "block device") + ", " +
                  fmt_bytes(t.size_bytes) + ", logical block " + std::to_string(t.logical_block) +
                  ")";
  return t;
}

uint32_t fit_queue_depth(uint32_t requested, Target& t) {
  if (t.nr_requests == 0 || requested <= t.nr_requests) return requested;
  t.warnings.push_back("queue depth " + std::to_string(requested) + " capped at " +
                       std::to_string(t.nr_requests) + ", the request slots of " + t.path +
                       " (queue/nr_requests): requests past them would be issued late by "
                       "io_uring's worker threads; raise nr_requests to go deeper");
  return t.nr_requests;
}

}  // namespace blkrr::replay
