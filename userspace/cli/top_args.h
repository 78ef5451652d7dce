// The command line of `blkrr top`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "live/http_server.h"
#include "live/top_model.h"

namespace blkrr::cli {

struct TopArgs {
  bool help_printed = false;  // --help or --version was printed: nothing to run
  std::vector<std::string> devices;
  uint32_t pid = 0;
  bool has_pid = false;
  std::string comm;
  bool rolling = false, json = false, quiet = false, prometheus_pid = false, utc = false;
  uint64_t top_n = 0;
  live::GroupBy by = live::GroupBy::kPid;
  live::SortKey sort = live::SortKey::kTime;  // iotop's default: the share of the disk's time
  std::optional<live::ListenAddress> prometheus;
  uint64_t interval_ns = 1'000'000'000;
  uint64_t count = 0;  // 0: until a signal
};

// The options and every rule between them. Opens no device: a -d that is a
// number is only looked up to tell a device from iotop's -d SEC; whether the
// devices and -p exist is the capture's to check. A numeric -n COMM (iotop's
// -n NUM) is taken as a task name with a note on stderr.
Result<TopArgs> parse_top_args(int argc, char** argv);

}  // namespace blkrr::cli
