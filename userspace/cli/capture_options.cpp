#include "cli/capture_options.h"

#include <unistd.h>

#include <string>

#include "core/args.h"
#include "core/device.h"

namespace blkrr::cli {

Result<uint32_t> parse_pid(std::string_view v) {
  auto n = parse_u64(v);
  if (!n || *n == 0 || *n > 0x7fffffffu)
    return Error("bad process id '" + std::string(v) + "' (a positive number)", 2);
  return static_cast<uint32_t>(*n);
}

Status require_process(uint32_t pid) {
  if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
    return Error("-p " + std::to_string(pid) + ": no such process", 2);
  return {};
}

Status select_devices(const std::vector<std::string>& args, CaptureConfig& cfg) {
  for (const auto& d : args) {
    auto sel = resolve_device(d);
    if (!sel) return Error("-d " + d + ": " + sel.error().message, 2);
    cfg.devices.push_back(*sel);
  }
  return {};
}

}  // namespace blkrr::cli
