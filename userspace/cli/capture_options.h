// Options shared by the commands that capture (record, top, snoop): one
// parser for -p PID and one resolution of -d DEV..., so the three accept and
// reject the same things with the same messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "capture/capture.h"
#include "core/result.h"

namespace blkrr::cli {

// A process id as -p takes it: a positive number that fits a pid_t.
Result<uint32_t> parse_pid(std::string_view v);

// -p names a process that exists now (else the capture would show nothing).
Status require_process(uint32_t pid);

// Resolves every -d argument (sdX, /dev/sdX, MAJ:MIN, a partition) into
// cfg.devices; the error names the argument that failed (exit status 2).
Status select_devices(const std::vector<std::string>& args, CaptureConfig& cfg);

// --cgroup: a cgroup v2 directory (a path, or one relative to /sys/fs/cgroup)
// into its id, the directory's inode number.
Result<uint64_t> cgroup_id_of(const std::string& arg);

}  // namespace blkrr::cli
