// RAII scratch loop device backed by a sparse file in /dev/shm, for the
// root-only integration tests. The backing file's name is removed as soon
// as the device holds it, and the device is created with autoclear: nothing
// is left behind even if the test process dies; the destructor detaches it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr::testing {

class LoopDevice {
 public:
  // size_bytes of zeroes; logical block size 512 unless block_size is given.
  static Result<LoopDevice> create(uint64_t size_bytes, uint32_t block_size = 0);
  // With an MBR partition table of primary partitions {start sector, sectors}
  // (at most 4), scanned by the kernel: partitions appear as loopNp1, loopNp2...
  static Result<LoopDevice> create_partitioned(
      uint64_t size_bytes, const std::vector<std::pair<uint32_t, uint32_t>>& parts);
  // Over a file in `dir` (a disk, not tmpfs) filled with data, with direct
  // I/O: every request reaches the disk, so the device is slower than one
  // over /dev/shm.
  static Result<LoopDevice> create_on_disk(uint64_t size_bytes, const std::string& dir);
  // Over another loop device, with direct I/O: its requests become bios on
  // `lower` that the loop driver's worker thread submits (a stacking driver
  // on a machine without device-mapper or md).
  static Result<LoopDevice> create_over(const LoopDevice& lower);
  LoopDevice(LoopDevice&& o) noexcept;
  LoopDevice& operator=(LoopDevice&& o) noexcept;
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  ~LoopDevice();

  const std::string& path() const { return path_; }  // /dev/loopN
  std::string name() const;                          // loopN
  DevT dev() const { return dev_; }
  uint64_t size_bytes() const { return size_; }

 private:
  LoopDevice() = default;
  void release();
  static Result<LoopDevice> attach_free(int backing_fd, uint32_t block_size, uint32_t flags,
                                        uint64_t size_bytes);
  static Result<LoopDevice> create_impl(uint64_t size_bytes, uint32_t block_size,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& parts,
                                        const std::string& dir = "/dev/shm", bool on_disk = false);

  std::string path_;
  int fd_ = -1;  // the loop device, held open for autoclear
  DevT dev_ = 0;
  uint64_t size_ = 0;
};

}  // namespace blkrr::testing
