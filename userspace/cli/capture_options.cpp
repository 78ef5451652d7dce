#include "cli/capture_options.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "capture/features.h"
#include "capture/load_plan.h"
#include "core/args.h"
#include "core/bio_level.h"
#include "core/device.h"
#include "core/device_stack.h"

namespace blkrr::cli {

Result<uint32_t> parse_pid(std::string_view v) {
  auto n = parse_u64(v);
  if (!n || *n == 0 || *n > 0x7fffffffu)
    return Error(ErrorKind::kUsage, "bad process id '" + std::string(v) + "' (a positive number)");
  return static_cast<uint32_t>(*n);
}

std::function<Status(std::string_view)> pid_setter(uint32_t& pid, bool& has_pid) {
  return [&pid, &has_pid](std::string_view v) -> Status {
    auto n = parse_pid(v);
    if (!n) return n.error();
    pid = *n;
    has_pid = true;
    return {};
  };
}

Status require_process(uint32_t pid) {
  if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
    return Error(ErrorKind::kUsage, "-p " + std::to_string(pid) + ": no such process");
  return {};
}

namespace {

// The volume's pieces as the capture's sector ranges on each disk below it.
Status select_volume(VolumeMap v, const DeviceSelection& sel, const std::string& option,
                     CaptureConfig& cfg, std::vector<VolumeMap>& volumes) {
  if (v.extents.empty()) return Error(ErrorKind::kUsage, option + ": the volume has no sectors");
  for (auto& piece : volume_selections(v, sel.spec, kCaptureRangesPerDisk))
    cfg.devices.push_back(std::move(piece));
  volumes.push_back(std::move(v));
  return {};
}

// A device whose mapping blkrr cannot follow, captured at the bio level
// where the kernel traces bio completions; refused as before otherwise.
Status select_bio_level(const DeviceSelection& sel, const LevelChoice& c, CaptureConfig& cfg) {
  auto f = capture::features();
  if (!f) return f.error();
  if (std::string why = capture::bio_level_refusal(f->kernel); !why.empty())
    return Error(ErrorKind::kUsage, c.refusal +
                                        " (blkrr records such a device at the bio level "
                                        "only where the kernel traces bio completions: " +
                                        why + ")");
  cfg.devices.push_back(sel);
  cfg.bio_level.push_back(c.bio);
  return {};
}

}  // namespace

Status select_devices(const std::vector<std::string>& args, CaptureConfig& cfg,
                      std::vector<VolumeMap>* volumes) {
  for (const auto& d : args) {
    auto sel = resolve_device(d);
    if (!sel) return Error(ErrorKind::kUsage, "-d " + d + ": " + sel.error().message);
    const std::string option = "-d " + d;
    // A dm or md volume is mapped onto its disks; one whose mapping blkrr
    // cannot follow, and zram, brd and the like, are captured at the bio level.
    if (volumes && !has_request_queue(sel->disk)) {
      auto c = choose_capture_level(*sel, read_dm_table);
      if (!c) return c.error().context(option);
      if (c->level == CaptureLevel::kVolume) {
        BLKRR_TRY(select_volume(std::move(*c->volume), *sel, option, cfg, *volumes));
        continue;
      }
      if (c->level == CaptureLevel::kBio) {
        BLKRR_TRY(select_bio_level(*sel, *c, cfg));
        continue;
      }
    }
    BLKRR_TRY(require_request_device(*sel, option));
    cfg.devices.push_back(*sel);
  }
  return {};
}

void add_stack_attribution(CaptureConfig& cfg, const std::vector<VolumeMap>& selected,
                           const char* command) {
  std::vector<std::pair<DevT, ExtentMap>> maps;
  for (const auto& v : selected)
    if (!has_request_queue(v.volume)) maps.emplace_back(v.volume, v.extents);
  for (auto& v : map_top_volumes(read_dm_table)) maps.emplace_back(v.volume, std::move(v.extents));
  std::vector<DevT> left_out;
  cfg.stack_pieces = attribution_pieces(maps, kCaptureStackPieces, &left_out);
  if (left_out.empty()) return;
  DeviceNamer names;
  std::string list;
  for (DevT d : left_out) list += (list.empty() ? "" : ", ") + names.name(d);
  std::fprintf(stderr,
               "blkrr %s: the I/O of %s stays with the threads that issue it: the capture "
               "follows at most %zu pieces of stacked volumes\n",
               command, list.c_str(), kCaptureStackPieces);
}

Status check_comm(const std::string& comm) {
  if (comm.size() > 15)
    return Error(
        ErrorKind::kUsage,
        "-n '" + comm + "': the kernel keeps 15 characters of a task name; give at most 15");
  return {};
}

Result<uint64_t> parse_run_duration(std::string_view what, std::string_view v) {
  auto d = parse_duration_ns(v);
  if (!d) return Error(ErrorKind::kUsage, std::string(what) + ": " + d.error().message);
  if (*d == 0)
    return Error(ErrorKind::kUsage, std::string(what) + ": a duration of 0 would record nothing");
  return *d;
}

Status take_positional_duration(const std::vector<std::string>& pos, uint64_t& duration_ns) {
  if (pos.empty()) return {};
  if (duration_ns)
    return Error(ErrorKind::kUsage, "a duration twice: give -D TIME or the duration " + pos[0] +
                                        " as an argument, not both");
  auto d = parse_run_duration("duration", pos[0]);
  if (!d) return d.error();
  duration_ns = *d;
  return {};
}

Result<uint64_t> cgroup_id_of(const std::string& arg) {
  std::vector<std::string> tries = {arg};
  if (arg.empty() || arg[0] != '/') {
    tries.push_back("/sys/fs/cgroup/" + arg);
    tries.push_back("/sys/fs/cgroup/unified/" + arg);
  }
  for (const auto& p : tries) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    struct statfs fs {};
    if (statfs(p.c_str(), &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC)
      return Error(
          ErrorKind::kUsage,
          "--cgroup '" + p + "' is not a cgroup v2 directory (blkrr filters on cgroup v2 ids)");
    return static_cast<uint64_t>(st.st_ino);
  }
  return Error(ErrorKind::kUsage, "--cgroup '" + arg +
                                      "': no such cgroup directory (give its path, e.g. "
                                      "/sys/fs/cgroup/system.slice/mysql.service)");
}

}  // namespace blkrr::cli
