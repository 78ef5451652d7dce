// Pieces of native traces written by the tests of tests/cli.
#pragma once

#include "core/trace_format.h"

namespace blkrr::testing {

// Disk sdz (8:16) with one partition sdz2 (8:18) starting at sector 2048,
// as a recording host would describe them in a trace header.
inline DeviceInfo disk_sdz_with_sdz2(uint64_t size_bytes = 0) {
  DeviceInfo d;
  d.dev = make_dev(8, 16);
  d.name = "sdz";
  d.size_bytes = size_bytes;
  PartitionInfo p;
  p.dev = make_dev(8, 18);
  p.name = "sdz2";
  p.start_sector = 2048;
  p.nr_sectors = 1 << 20;
  d.partitions.push_back(p);
  return d;
}

}  // namespace blkrr::testing
