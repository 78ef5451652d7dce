// Reading sysfs: one value per file, block devices by dev_t. `sysfs` is the
// mount point (tests pass a fake tree).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/request.h"

namespace blkrr::sysfs {

// The first line of a sysfs file without trailing blanks; "" if unreadable.
std::string read_line(const std::filesystem::path& p);
// A decimal number from a sysfs file, or `dflt`.
uint64_t read_u64(const std::filesystem::path& p, uint64_t dflt = 0);
// The directory of a block device (disk or partition), symlinks resolved.
std::optional<std::filesystem::path> dir_of(DevT dev, const std::string& sysfs);
// True for a partition's directory (it has a "partition" file).
bool is_partition_dir(const std::filesystem::path& dir);

}  // namespace blkrr::sysfs
