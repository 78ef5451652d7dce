#include "tests/integration/test_loop_device.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace blkrr::testing {

namespace {
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};
std::string errstr(const std::string& what) {
  return what + ": " + std::strerror(errno);
}
}  // namespace

Result<LoopDevice> LoopDevice::create(uint64_t size_bytes, uint32_t block_size) {
  return create_impl(size_bytes, block_size, {});
}

Result<LoopDevice> LoopDevice::create_partitioned(
    uint64_t size_bytes, const std::vector<std::pair<uint32_t, uint32_t>>& parts) {
  if (parts.empty() || parts.size() > 4) return Error("1 to 4 primary partitions");
  return create_impl(size_bytes, 0, parts);
}

Result<LoopDevice> LoopDevice::create_on_disk(uint64_t size_bytes, const std::string& dir) {
  return create_impl(size_bytes, 0, {}, dir, true);
}

namespace {
// Real data in every block (holes would be read without touching the disk).
bool fill(int fd, uint64_t size_bytes) {
  std::vector<char> chunk(1 << 20, 'b');
  for (uint64_t at = 0; at < size_bytes; at += chunk.size()) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size_bytes - at));
    if (pwrite(fd, chunk.data(), n, static_cast<off_t>(at)) != static_cast<ssize_t>(n))
      return false;
  }
  return fsync(fd) == 0;
}
}  // namespace

Result<LoopDevice> LoopDevice::create_impl(uint64_t size_bytes, uint32_t block_size,
                                           const std::vector<std::pair<uint32_t, uint32_t>>& parts,
                                           const std::string& dir, bool on_disk) {
  std::string name = dir + "/blkrr-test-XXXXXX.img";
  std::vector<char> tmpl_buf(name.begin(), name.end());
  tmpl_buf.push_back('\0');
  char* tmpl = tmpl_buf.data();
  Fd backing{mkstemps(tmpl, 4)};
  if (backing.fd < 0) return Error(errstr("creating a backing file in " + dir));
  if (ftruncate(backing.fd, static_cast<off_t>(size_bytes)) != 0 ||
      (on_disk && !fill(backing.fd, size_bytes))) {
    unlink(tmpl);
    return Error(errstr(std::string("sizing ") + tmpl));
  }
  if (!parts.empty()) {
    // MBR: partition entries at 446 (type 0x83, LBA start and length), 0x55AA.
    uint8_t mbr[512] = {};
    for (size_t i = 0; i < parts.size(); i++) {
      uint8_t* e = mbr + 446 + 16 * i;
      e[4] = 0x83;
      for (int b = 0; b < 4; b++) {
        e[8 + b] = static_cast<uint8_t>(parts[i].first >> (8 * b));
        e[12 + b] = static_cast<uint8_t>(parts[i].second >> (8 * b));
      }
    }
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    if (pwrite(backing.fd, mbr, sizeof(mbr), 0) != static_cast<ssize_t>(sizeof(mbr))) {
      unlink(tmpl);
      return Error(errstr(std::string("writing a partition table to ") + tmpl));
    }
  }
  const uint32_t flags =
      (parts.empty() ? 0 : LO_FLAGS_PARTSCAN) | (on_disk ? LO_FLAGS_DIRECT_IO : 0);
  auto attached = attach_free(backing.fd, block_size, flags, size_bytes);
  // The device holds the file now (or failed to): its name goes at once, so
  // that a test killed before its destructor runs leaves nothing in the
  // folder (the device detaches itself when its last opener closes: autoclear).
  unlink(tmpl);
  return attached;
}

Result<LoopDevice> LoopDevice::attach_free(int backing_fd, uint32_t block_size, uint32_t flags,
                                           uint64_t size_bytes) {
  Fd ctl{open("/dev/loop-control", O_RDWR | O_CLOEXEC)};
  if (ctl.fd < 0) return Error(errstr("opening /dev/loop-control"));
  // Other processes may grab the same free device between GET_FREE and
  // CONFIGURE: retry.
  for (int attempt = 0; attempt < 50; attempt++) {
    int n = ioctl(ctl.fd, LOOP_CTL_GET_FREE);
    if (n < 0) break;
    std::string path = "/dev/loop" + std::to_string(n);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    loop_config cfg{};
    cfg.fd = static_cast<__u32>(backing_fd);
    cfg.block_size = block_size;
    cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | flags;
    if (ioctl(fd, LOOP_CONFIGURE, &cfg) != 0) {
      close(fd);
      if (errno == EBUSY) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      return Error(errstr("LOOP_CONFIGURE on " + path));
    }
    struct stat st {};
    fstat(fd, &st);
    LoopDevice dev;
    dev.size_ = size_bytes;
    dev.fd_ = fd;
    dev.path_ = path;
    dev.dev_ = make_dev(major(st.st_rdev), minor(st.st_rdev));
    return dev;
  }
  return Error(errstr("no free loop device"));
}

Result<LoopDevice> LoopDevice::create_over(const LoopDevice& lower) {
  Fd backing{open(lower.path().c_str(), O_RDWR | O_CLOEXEC)};
  if (backing.fd < 0) return Error(errstr("opening " + lower.path()));
  return attach_free(backing.fd, 0, LO_FLAGS_DIRECT_IO, lower.size_bytes());
}

LoopDevice::LoopDevice(LoopDevice&& o) noexcept {
  *this = std::move(o);
}

LoopDevice& LoopDevice::operator=(LoopDevice&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    dev_ = o.dev_;
    size_ = o.size_;
    o.fd_ = -1;
  }
  return *this;
}

LoopDevice::~LoopDevice() {
  release();
}

void LoopDevice::release() {
  if (fd_ >= 0) {
    ioctl(fd_, LOOP_CLR_FD, 0);
    close(fd_);
    fd_ = -1;
  }
}

std::string LoopDevice::name() const {
  auto slash = path_.rfind('/');
  return slash == std::string::npos ? path_ : path_.substr(slash + 1);
}

}  // namespace blkrr::testing
