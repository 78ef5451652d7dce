// Compact storage of the block-layer requests the live validator receives
// while a replay runs: 48 bytes per request instead of a 104-byte Request,
// in fixed-size chunks (no reallocation and copying of what was stored, one
// allocation per 65,536 requests), task names and devices kept once in small tables.
// Everything the matcher and the report need is kept; the capture's adaptive
// disk time and cgroup id are not (the validator does not use them).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/request.h"
#include "validate/name_table.h"

namespace blkrr::validate {

class EventStore {
 public:
  static constexpr size_t kChunk = 65536;  // requests per chunk

  struct Compact {
    uint64_t issue_ns;
    uint64_t complete_ns;
    uint64_t sector;
    uint32_t bytes;
    uint32_t pid;
    uint32_t tgid;
    int32_t error;
    uint16_t flags;
    uint16_t comm;  // index into the name table
    uint16_t dev;   // index into the device table (disk, partition)
    uint8_t op;
    uint8_t rec_flags;
  };
  static_assert(sizeof(Compact) == 48);

  EventStore();
  // Stores one request. No allocation except when a chunk fills up or a new
  // task name or device appears.
  void add(const Request& r);
  size_t size() const { return size_; }
  // The stored requests in arrival order, as trace requests (disk_time_ns and
  // cgroup_id are 0). Frees the store, each chunk as soon as it is converted.
  std::vector<Request> take();
  // Task names or devices beyond the table size (65,535 each) fall back to
  // the last entry; counted here (0 in any realistic run).
  uint64_t table_overflows() const { return overflows_ + comms_.overflows(); }

 private:
  uint16_t dev_index(DevT dev, DevT part);
  Compact& slot();

  std::vector<std::unique_ptr<Compact[]>> chunks_;
  size_t size_ = 0;
  NameTable comms_;
  std::vector<std::pair<DevT, DevT>> devs_;
  std::map<std::pair<DevT, DevT>, uint16_t> dev_ids_;
  uint16_t last_dev_ = 0;
  uint64_t overflows_ = 0;
};

}  // namespace blkrr::validate
