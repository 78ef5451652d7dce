// blkrr devices: block devices as blkrr sees them (names, dev_t, sizes,
// block sizes, scheduler, partitions with their sector ranges, and for a
// bio-based device the devices below it that carry its requests).
#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/args.h"
#include "core/device.h"
#include "core/device_stack.h"
#include "core/json_doc.h"
#include "core/trace_header_json.h"

namespace blkrr::cli {

Result<int> cmd_devices(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> pos;
  ArgParser p("blkrr devices", "[--json] [DEV...]",
              "List whole-disk block devices with their partitions, or describe the named ones.\n"
              "DEV is /dev/NAME, NAME or MAJ:MIN, as accepted by every blkrr command.");
  p.common_flag(CommonOpt::kJson, &json, "print JSON");
  p.positionals("DEV", &pos, 0, 64);
  p.examples("  blkrr devices\n  blkrr devices sda2 7:0");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;

  std::vector<DeviceInfo> devs;
  if (pos.empty()) {
    devs = list_devices();
  } else {
    for (const auto& spec : pos) {
      auto sel = resolve_device(spec);
      if (!sel) return sel.error();
      auto info = describe_device(sel->disk);
      if (!info) return info.error();
      devs.push_back(std::move(info.value()));
    }
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : devs) {
      nlohmann::json j = device_info_json(d);
      j["has_requests"] = has_request_queue(d.dev);
      if (!j["has_requests"].get<bool>()) j["requests_on"] = request_devices_below(d.dev);
      out.push_back(std::move(j));
    }
    nlohmann::json doc = {{"schema", schema_tag(kSchemaDevices)}, {"devices", out}};
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  std::printf("%-12s %-8s %14s %5s %5s %-12s %s\n", "NAME", "MAJ:MIN", "SIZE(bytes)", "LBS", "PBS",
              "SCHED", "MODEL");
  for (const auto& d : devs) {
    std::printf("%-12s %-8s %14" PRIu64 " %5u %5u %-12s %s\n", d.name.c_str(),
                dev_to_string(d.dev).c_str(), d.size_bytes, d.logical_block_size,
                d.physical_block_size, d.scheduler.c_str(), d.model.c_str());
    for (const auto& pt : d.partitions)
      std::printf("  %-10s %-8s %14" PRIu64 "  sectors %" PRIu64 "..%" PRIu64 "\n", pt.name.c_str(),
                  dev_to_string(pt.dev).c_str(), pt.nr_sectors * 512, pt.start_sector,
                  pt.start_sector + pt.nr_sectors);
    if (!has_request_queue(d.dev)) {  // dm, md, zram: nothing to record on it
      std::string below;
      for (const auto& b : request_devices_below(d.dev)) below += " " + b;
      std::printf("  %s, no requests of its own: its requests are on%s\n",
                  stacked_kind(d.dev).c_str(),
                  below.empty() ? " no device below it" : below.c_str());
    }
  }
  return 0;
}

}  // namespace blkrr::cli
