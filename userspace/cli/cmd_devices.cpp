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
namespace {

nlohmann::json stack_json(const StackNode& n) {
  nlohmann::json below = nlohmann::json::array();
  for (const auto& b : n.below) below.push_back(stack_json(b));
  nlohmann::json j = {
      {"name", n.name}, {"dev", dev_to_string(n.dev)}, {"kind", n.kind}, {"below", below}};
  if (!n.label.empty()) j["label"] = n.label;
  return j;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

nlohmann::json device_json(const DeviceInfo& d) {
  nlohmann::json j = device_info_json(d);
  j["has_requests"] = has_request_queue(d.dev);
  if (!j["has_requests"].get<bool>()) {
    j["requests_on"] = request_devices_below(d.dev);
    j["stack"] = stack_json(stack_below(d.dev));
  }
  if (auto h = holders_above(d.dev); !h.empty()) j["holders"] = h;
  for (size_t i = 0; i < d.partitions.size(); ++i)
    if (auto h = holders_above(d.partitions[i].dev); !h.empty()) j["partitions"][i]["holders"] = h;
  return j;
}

void print_device(const DeviceInfo& d) {
  std::printf("%-12s %-8s %14" PRIu64 " %5u %5u %-12s %s\n", d.name.c_str(),
              dev_to_string(d.dev).c_str(), d.size_bytes, d.logical_block_size,
              d.physical_block_size, d.scheduler.c_str(), d.model.c_str());
  if (auto h = holders_above(d.dev); !h.empty()) std::printf("  held by %s\n", joined(h).c_str());
  for (const auto& pt : d.partitions) {
    std::printf("  %-10s %-8s %14" PRIu64 "  sectors %" PRIu64 "..%" PRIu64 "\n", pt.name.c_str(),
                dev_to_string(pt.dev).c_str(), pt.nr_sectors * 512, pt.start_sector,
                pt.start_sector + pt.nr_sectors);
    if (auto h = holders_above(pt.dev); !h.empty())
      std::printf("    held by %s\n", joined(h).c_str());
  }
  if (!has_request_queue(d.dev)) {  // dm, md, zram: its requests are below it
    std::string below;
    for (const auto& b : request_devices_below(d.dev)) below += " " + b;
    std::printf("  %s, no requests of its own: its requests are on%s\n",
                stacked_kind(d.dev).c_str(), below.empty() ? " no device below it" : below.c_str());
    std::printf("  stack: %s\n", format_stack(stack_below(d.dev)).c_str());
  }
}

}  // namespace

Result<int> cmd_devices(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> pos;
  ArgParser p("blkrr devices", "[--json] [DEV...]",
              "List whole-disk block devices with their partitions, or describe the named ones.\n"
              "DEV is /dev/NAME, NAME, MAJ:MIN, /dev/mapper/NAME, a device-mapper name or\n"
              "VG/LV (/dev/VG/LV), as accepted by every blkrr command. A stacked device\n"
              "(device-mapper, md) is shown with the stack below it; a device used by\n"
              "one with the devices that hold it.");
  p.common_flag(CommonOpt::kJson, &json, "print JSON");
  p.positionals("DEV", &pos, 0, 64);
  p.examples("  blkrr devices\n  blkrr devices sda2 7:0 /dev/mapper/vg-data");
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
    for (const auto& d : devs) out.push_back(device_json(d));
    nlohmann::json doc = {{"schema", schema_tag(kSchemaDevices)}, {"devices", out}};
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  std::printf("%-12s %-8s %14s %5s %5s %-12s %s\n", "NAME", "MAJ:MIN", "SIZE(bytes)", "LBS", "PBS",
              "SCHED", "MODEL");
  for (const auto& d : devs) print_device(d);
  return 0;
}

}  // namespace blkrr::cli
