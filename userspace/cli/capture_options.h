// Options shared by the commands that capture (record, top, snoop): one
// parser for -p PID and one resolution of -d DEV..., so the three accept and
// reject the same things with the same messages.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/capture.h"
#include "core/result.h"
#include "core/volume_stack.h"

namespace blkrr::cli {

// A process id as -p takes it: a positive number that fits a pid_t.
Result<uint32_t> parse_pid(std::string_view v);

// -p PID into `pid`, with `has_pid` set: the setter of record's, top's and
// snoop's -p.
std::function<Status(std::string_view)> pid_setter(uint32_t& pid, bool& has_pid);

// -p names a process that exists now (else the capture would show nothing).
Status require_process(uint32_t pid);

// Resolves every -d argument (sdX, /dev/sdX, MAJ:MIN, a partition, a stacked
// device by any of its names) into cfg.devices; the error names the argument
// that failed (exit status 2). A bio-based device (dm, md) is refused with
// the devices below it, unless `volumes` is given (record, top, snoop): then
// a linear stack is mapped onto its disks (core/volume_stack.h), their
// sector ranges selected, and its map appended to `volumes`; a device whose
// mapping blkrr cannot follow (dm thin, md RAID5, zram...) is selected whole
// and added to cfg.bio_level (core/bio_level.h), where the kernel has
// block_bio_complete (else refused as before, with the reason).
Status select_devices(const std::vector<std::string>& args, CaptureConfig& cfg,
                      std::vector<VolumeMap>* volumes = nullptr);

// Attribution through stacked volumes (docs/capture.md): the pieces of the
// volumes in `selected` (-d) and of every linear dm or md volume at the top
// of its stack into cfg.stack_pieces, so that the disk requests their bios
// become are charged to the bios' submitters. Volumes beyond the capture's
// table are named on stderr, once, and left to the thread that issues them.
void add_stack_attribution(CaptureConfig& cfg, const std::vector<VolumeMap>& selected,
                           const char* command);

// -n COMM: at most the 15 characters the kernel keeps of a task name.
Status check_comm(const std::string& comm);

// How long record and snoop run: -D TIME or the positional `duration` (as
// snoop 10, biosnoop's), parsed by the one duration parser
// (core/args.h parse_duration_ns); more than zero.
Result<uint64_t> parse_run_duration(std::string_view what, std::string_view v);
// The positional duration, if given, into `duration_ns`; refused with -D too.
Status take_positional_duration(const std::vector<std::string>& pos, uint64_t& duration_ns);

// --cgroup: a cgroup v2 directory (a path, or one relative to /sys/fs/cgroup)
// into its id, the directory's inode number.
Result<uint64_t> cgroup_id_of(const std::string& arg);

}  // namespace blkrr::cli
