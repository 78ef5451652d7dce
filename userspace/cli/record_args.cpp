#include "cli/record_args.h"

#include <unistd.h>

#include "cli/capture_options.h"
#include "core/args.h"
#include "core/common_options.h"
#include "core/start_at.h"
#include "core/units.h"

namespace blkrr::cli {

namespace {

void add_output_options(ArgParser& p, OutputPlan& o) {
  p.common_string(CommonOpt::kOutput,
                  "trace file, - for standard output (default blkrr-<host>-<UTC time>.blkrr); with "
                  "--rotate the stem of the files' names",
                  &o.out);
  p.common_flag(CommonOpt::kOverwrite, &o.overwrite,
                "replace the -o file if it exists (rotated pieces have new names)");
  p.option(0, "rotate", "TIME",
           "a new file every TIME (e.g. 1m, 1h): STEM.NNNNNN.YYYYMMDDTHHMMSSZ.blkrr, each a "
           "trace on its own (docs/recording.md)",
           [&](std::string_view v) -> Status {
             auto d = parse_duration_ns(v);
             if (!d || *d < 1'000'000'000ull)
               return Error(ErrorKind::kUsage,
                            "--rotate: bad duration '" + std::string(v) + "' (1s or more)");
             o.rotate_ns = *d;
             return {};
           });
  p.option(0, "rotate-size", "SIZE", "a new file when the current one reaches SIZE (e.g. 100M)",
           [&](std::string_view v) -> Status {
             auto s = parse_size(v);
             if (!s || *s < 4096)
               return Error(ErrorKind::kUsage,
                            "--rotate-size: bad size '" + std::string(v) + "' (4k or more)");
             o.rotate_bytes = *s;
             return {};
           });
  p.opt_u64(0, "keep", "N",
            "with rotation: keep the N newest closed files of this recording, delete older ones",
            &o.keep);
  p.option(0, "max-total", "SIZE",
           "with rotation: delete this recording's oldest closed files to stay within SIZE",
           [&](std::string_view v) -> Status {
             auto s = parse_size(v);
             if (!s || *s == 0)
               return Error(ErrorKind::kUsage, "--max-total: bad size '" + std::string(v) + "'");
             o.max_total = *s;
             return {};
           });
  p.option(0, "min-free", "SIZE",
           "pause writing while the output's file system has less than SIZE free to\n"
           "unprivileged users, counting the requests not kept (default min(max(5 %, 1G), 10 %)\n"
           "of the file system; 0: never pause)",
           [&](std::string_view v) -> Status {
             auto s = parse_size(v);
             if (!s)
               return Error(ErrorKind::kUsage, "--min-free: bad size '" + std::string(v) + "'");
             o.min_free = *s;
             return {};
           });
  p.flag(0, "retain-earlier", &o.retain_earlier,
         "--keep and --max-total also count and delete the files of earlier recordings of this\n"
         "stem (a recorder that restarts; only STEM.NNNNNN.TIME.blkrr files with a blkrr\n"
         "recording id in their header)");
}

Status duration_at_least(std::string_view opt, std::string_view v, uint64_t min_ns, uint64_t& out) {
  auto d = parse_duration_ns(v);
  if (!d || *d < min_ns)
    return Error(ErrorKind::kUsage, std::string(opt) + ": bad duration '" + std::string(v) +
                                        "' (at least " +
                                        fmt_duration_ns(static_cast<double>(min_ns)) + ")");
  out = *d;
  return {};
}

void add_flight_options(ArgParser& p, FlightPlan& f) {
  p.option(0, "ring", "TIME",
           "flight recorder: keep the last TIME of requests in memory, write nothing until\n"
           "SIGUSR1 or a trigger, then write that window to STEM.ring.NNNNNN.TIME.blkrr\n"
           "(memory at most --ring-memory)",
           [&](std::string_view v) {
             return duration_at_least("--ring", v, 1'000'000'000ull, f.ring_ns);
           });
  p.option(0, "ring-memory", "SIZE",
           "with --ring: the memory the requests kept may take (default 256M, about 10 bytes a\n"
           "request); the oldest go first when it is full, and the dump says so",
           [&](std::string_view v) -> Status {
             auto s = parse_size(v);
             if (!s || *s < (1u << 20))
               return Error(ErrorKind::kUsage,
                            "--ring-memory: bad size '" + std::string(v) + "' (1M or more)");
             f.ring_bytes = *s;
             return {};
           });
  p.option(0, "trigger-latency", "DURATION",
           "with --ring: write the window when a request takes longer than DURATION, also\n"
           "one still in flight after DURATION (a hung request)",
           [&](std::string_view v) {
             return duration_at_least("--trigger-latency", v, 1'000'000ull, f.trigger_latency_ns);
           });
  p.option(0, "trigger-util", "PERCENT",
           "with --ring: write the window when a device is busy PERCENT of a second (disk time)",
           [&](std::string_view v) -> Status {
             auto d = parse_double(v);
             if (!d || !(*d > 0 && *d <= 100))
               return Error(ErrorKind::kUsage,
                            "--trigger-util: bad percent '" + std::string(v) + "' (0 to 100)");
             f.trigger_util = *d;
             return {};
           });
  p.option(0, "post", "TIME", "with a trigger: also write TIME after it (default 10s)",
           [&](std::string_view v) { return duration_at_least("--post", v, 0, f.post_ns); });
  p.option(0, "holdoff", "TIME",
           "with a trigger: at most one trigger every TIME (default 1m; SIGUSR1 always writes)",
           [&](std::string_view v) { return duration_at_least("--holdoff", v, 0, f.holdoff_ns); });
}

}  // namespace

Result<bool> parse_record_args(int argc, char** argv, RecordArgs& a) {
  ArgParser p(
      "blkrr record",
      "[-d DEV]... [-p PID] [-n COMM] [--cgroup PATH] [-D TIME] [-o FILE|-|STEM] "
      "[--rotate TIME] [--rotate-size SIZE] [--keep N] [--max-total SIZE] "
      "[--ring TIME [--trigger-latency D] [--trigger-util PCT] [--post T] [--holdoff T]] "
      "[--start-at UNIX_TIME] [--ringbuf-mb N] [--lean] [-q] [duration]",
      "Record every block request of the selected devices (all devices by default) into a\n"
      "native trace: issue and completion time, device and partition, sector, size, operation\n"
      "and flags, the process that created the request, and its adaptive disk time.\n"
      "Stops after -D TIME (or `duration`, as snoop 10) or on Ctrl-C/SIGTERM, then prints\n"
      "requests per device and operation, the drop counters that are not zero (all with\n"
      "-v), the file size and bytes per request (on standard error with -o -).\n"
      "Needs root.");
  p.common_strings(CommonOpt::kDevice,
                   "device to record: /dev/sdX, sdX, MAJ:MIN, a partition, or a dm or md volume "
                   "by any of its names (/dev/mapper/NAME, VG/LV, md0; repeatable)",
                   &a.devs);
  p.common(CommonOpt::kPid, "only requests created by this process (all its threads)",
           pid_setter(a.pid, a.have_pid));
  p.common_string(CommonOpt::kComm, "only requests created by tasks of this name (15 chars max)",
                  &a.comm);
  p.common_string(CommonOpt::kCgroup, "only requests created in this cgroup v2 directory",
                  &a.cgroup, "PATH");
  p.removed('c', "-n COMM (task name) or --cgroup PATH");
  p.common(CommonOpt::kDuration, "stop after this time (e.g. 60, 1.5s, 1m30s; or as `duration`)",
           [&](std::string_view v) -> Status {
             auto d = parse_run_duration("-D", v);
             if (!d) return d.error();
             a.duration_ns = *d;
             return {};
           });
  p.option(0, "start-at", "UNIX_TIME",
           "load the capture now, record from this wall-clock instant on (several hosts in "
           "step; -D counts from it)",
           [&](std::string_view v) -> Status {
             auto t = parse_start_at(v);
             if (!t) return t.error();
             a.start_at = *t;
             return {};
           });
  add_output_options(p, a.output);
  add_flight_options(p, a.flight);
  p.opt_u64(0, "ringbuf-mb", "N",
            "ring buffer size in MiB (default 64, rounded up to a power of 2)", &a.ringbuf_mb);
  p.flag(0, "lean", &a.lean,
         "no disk time and no cgroup ids (recorded as 0): the cheapest capture, with what\n"
         "replaying and validating a load needs");
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "no progress line and no summary");
  p.common_flag(CommonOpt::kVerbose, &a.verbose,
                "every drop counter in the summary, also the zero ones");
  p.examples(
      "  blkrr record -d sda -D 60 -o prod.blkrr      one minute of sda\n"
      "  blkrr record -d loop0 2                      two seconds of loop0 "
      "(blkrr-HOST-TIME.blkrr)\n"
      "  blkrr record -d nvme0n1p2 -p 4242             one process on one partition, until Ctrl-C\n"
      "  blkrr record -d 8:0 --cgroup system.slice/mysql.service -o mysql.blkrr\n"
      "  blkrr record -d sda -D 600 --start-at $(date +%s -d '+1 min')   # same on every host\n"
      "  blkrr record -d sda -o - | ssh lab 'cat > prod.blkrr'\n"
      "  blkrr record -d sda -o /var/lib/blkrr/prod --rotate 1h --keep 168   # a week of hours\n"
      "  blkrr record -d sda -o /var/lib/blkrr/prod --ring 10m --trigger-latency 2s   # kill -USR1 "
      "writes too");
  std::vector<std::string> pos;
  p.positionals("[duration]", &pos, 0, 1);
  auto r = p.parse(argc, argv);
  if (!r || !*r) return r;
  BLKRR_TRY(take_positional_duration(pos, a.duration_ns));
  BLKRR_TRY(check_comm(a.comm));
  return true;
}

Status check_output_plan(OutputPlan& o, const std::string& default_stem) {
  if (!o.rotating() && (o.keep || o.max_total || o.retain_earlier))
    return Error(ErrorKind::kUsage,
                 "--keep, --max-total and --retain-earlier need --rotate or --rotate-size");
  if (o.rotating() && o.out == "-")
    return Error(ErrorKind::kUsage,
                 "--rotate and --rotate-size write several files: -o - is refused; give a stem");
  if (o.out.empty()) o.out = o.rotating() ? default_stem : default_stem + ".blkrr";
  if (o.rotating() && (o.out.back() == '/' || o.out.find('\n') != std::string::npos))
    return Error(ErrorKind::kUsage,
                 "-o " + o.out + ": with rotation -o is the stem of the files' names, e.g. " +
                     "/var/lib/blkrr/prod");
  if (o.out == "-" && ::isatty(STDOUT_FILENO))
    return Error(ErrorKind::kUsage,
                 "-o -: standard output is a terminal; redirect it or pipe it (| ssh ...)");
  return {};
}

Status check_flight_plan(const FlightPlan& f, const OutputPlan& o, bool lean) {
  const bool triggers = f.trigger_latency_ns || f.trigger_util > 0;
  if (!f.ring_ns) {
    if (triggers)
      return Error(ErrorKind::kUsage, "--trigger-latency and --trigger-util need --ring TIME");
    return {};
  }
  if (o.rotating() || o.out == "-")
    return Error(ErrorKind::kUsage,
                 "--ring writes a file per window: not with --rotate, --rotate-size or -o -");
  if (f.trigger_util > 0 && lean)
    return Error(ErrorKind::kUsage, "--trigger-util needs disk time, which --lean leaves out");
  if (o.out.empty() || o.out.back() == '/')
    return Error(ErrorKind::kUsage,
                 "-o " + o.out + ": with --ring -o is the stem of the windows' names");
  return {};
}

}  // namespace blkrr::cli
