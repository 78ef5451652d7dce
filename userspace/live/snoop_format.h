// `blkrr snoop` output: one line (or one JSON object) per completed request,
//   [START] [END] COMM PID DEVICE [MAJ MIN] D SECTOR BYTES [QUE(ms)] LAT(ms) DTIME(µs)
// Times are seconds since `base_ns` (the capture start).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/request.h"

namespace blkrr::live {

struct SnoopOptions {
  bool start = false;   // -s: issue time
  bool end = false;     // -t: completion time
  bool majmin = false;  // -N
  bool queue = false;   // -Q: insert-to-issue time
  uint64_t base_ns = 0;
};

std::string snoop_header(const SnoopOptions& opt);
// `device` names the partition (sda2) or disk; `queue_ns` is the
// insert-to-issue time when known (-Q), nullopt prints "-".
std::string snoop_line(const Request& r, const std::string& device, const SnoopOptions& opt,
                       std::optional<uint64_t> queue_ns = std::nullopt);
nlohmann::json snoop_json(const Request& r, const std::string& device, const SnoopOptions& opt,
                          std::optional<uint64_t> queue_ns = std::nullopt);

}  // namespace blkrr::live
