// `blkrr snoop` output: one line (or one JSON object) per completed request,
//   TIME(s) [ISSUE(s)] COMM PID DEVICE [MAJ MIN] D SECTOR BYTES [QUE(ms)] LAT(ms) DT(ms)
// TIME is the completion and ISSUE the issue, in seconds since `base_ns` (the
// capture start), as biosnoop's TIME(s); every duration on the screen is in
// milliseconds (DT: the request's disk time). Without the optional columns a
// line fits 80 columns at the widest values a host gives: 15-character task
// names (14 shown, as biosnoop), 7-digit pids, partition names such as
// nvme0n1p1, sector numbers of 16 TiB disks, 4 MiB requests, durations up to
// 9999 ms (longer ones lose decimals, as times past 1000 s do). JSON objects
// are blkrr.requests records (core/request_json.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/request.h"

namespace blkrr::live {

struct SnoopOptions {
  bool issue = false;   // --issue: issue time
  bool majmin = false;  // --majmin
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
