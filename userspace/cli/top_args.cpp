#include "cli/top_args.h"

#include <cstdio>

#include "cli/capture_options.h"
#include "core/args.h"
#include "core/common_options.h"
#include "core/device.h"

namespace blkrr::cli {

namespace {

// The options as given, before the rules between them.
struct TopFlags {
  bool disktime = false, percent = false, bytes = false;
  std::string sort, by = "pid", prometheus;
  std::vector<std::string> pos;
};

void add_top_options(ArgParser& p, TopArgs& a, TopFlags& f) {
  p.common_strings(CommonOpt::kDevice, "only this disk or partition (repeatable)", &a.devices);
  p.common(CommonOpt::kPid, "only this process", pid_setter(a.pid, a.has_pid));
  p.common_string(CommonOpt::kComm, "only requests created by tasks named COMM (exact)", &a.comm);
  p.flag('C', "rolling", &a.rolling,
         "rolling output: do not clear the screen (biotop -C, iotop -b)");
  p.flag(0, "bytes", &f.bytes, "sort by READ/s + WRITE/s (-s bytes; every column is shown)");
  p.flag(0, "disktime", &f.disktime, "sort by DISKTIME (-s time, the default)");
  p.flag(0, "percent", &f.percent, "sort by %I/O, the same order as DISKTIME (-s time)");
  p.opt_u64('r', "maxrows", "N", "show at most N rows (biotop -r)", &a.top_n);
  p.opt_string('s', "sort", "KEY",
               "sort by read (READ/s), write (WRITE/s), bytes (both), io (IOPS), lat (AVGLAT) "
               "or time (DISKTIME and %I/O, the default); the column's title ends in '>'",
               &f.sort);
  p.opt_string(0, "by", "WHAT", "one row per pid (default), comm or cgroup", &f.by);
  p.common_flag(CommonOpt::kJson, &a.json,
                "one JSON object per interval (one per line) instead of the screen");
  p.opt_string(0, "prometheus", "ADDR:PORT",
               "serve /metrics (Prometheus text format) on ADDR:PORT until SIGTERM", &f.prometheus);
  p.flag(0, "prometheus-pid", &a.prometheus_pid,
         "add a pid label to the metrics (one series per process: high cardinality)");
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "print nothing (with --prometheus)");
  p.flag(0, "utc", &a.utc, "header time in UTC");
  // iotop's letters that blkrr spells otherwise, and blkrr top's old ones.
  p.removed('b', "-C (iotop -b: no screen clearing) or --bytes");
  p.removed('P', "--by pid, the default (iotop -P: processes), or --percent");
  p.removed('t', "-r N (at most N rows)");
  p.removed('o', "--disktime (top lists only processes that did I/O, as iotop -o does)");
  p.positionals("[interval [count]]", &f.pos, 0, 2);
}

// `interval [count]`.
Status take_interval_count(const std::vector<std::string>& pos, TopArgs& a) {
  if (!pos.empty()) {
    auto iv = parse_duration_ns(pos[0]);
    if (!iv || *iv < 10'000'000)
      return Error(ErrorKind::kUsage, std::string("bad interval '") + pos[0] +
                                          "' (seconds, at least 0.01; e.g. 1, 0.5, 250ms)");
    a.interval_ns = *iv;
  }
  if (pos.size() > 1) {
    auto c = parse_u64(pos[1]);
    if (!c || *c == 0)
      return Error(ErrorKind::kUsage,
                   std::string("bad count '") + pos[1] + "' (a positive integer)");
    a.count = *c;
  }
  return {};
}

// iotop's -d SEC: a number that names no device was meant as the interval.
Status check_numeric_devices(const std::vector<std::string>& devices) {
  for (const auto& d : devices)
    if (parse_double(d) && !resolve_device(d))
      return Error(
          ErrorKind::kUsage,
          std::string("-d ")
              .append(d)
              .append(": no such device; -d names a device (as biosnoop's), the interval is an "
                      "argument: blkrr top ")
              .append(d));
  return {};
}

// -s, --bytes, --disktime, --percent, --by and --prometheus into their values.
Status take_choices(TopFlags& f, TopArgs& a) {
  auto by = live::parse_group_by(f.by);
  if (!by) return Error(ErrorKind::kUsage, by.error().message);
  a.by = *by;
  if (!f.sort.empty()) {
    auto s = live::parse_sort_key(f.sort);
    if (!s) return Error(ErrorKind::kUsage, s.error().message);
    a.sort = *s;
  }
  if (!f.prometheus.empty()) {
    auto l = live::parse_listen_address(f.prometheus);
    if (!l) return Error(ErrorKind::kUsage, "--prometheus: " + l.error().message);
    a.prometheus = *l;
  }
  return {};
}

}  // namespace

Result<TopArgs> parse_top_args(int argc, char** argv) {
  TopArgs a;
  TopFlags f;
  ArgParser p(argv[0],
              "[-d DEV]... [-p PID] [-n COMM] [-C] [-s read|write|bytes|io|lat|time] [-r N] "
              "[--by pid|comm|cgroup] [-j] [--prometheus ADDR:PORT] [interval [count]]",
              "Per-process disk I/O, refreshed every interval (default 1 s): per process and\n"
              "device its reads and writes per second, IOPS, average latency (issue to\n"
              "completion), disk time and %I/O. The disk time of a request is Brendan Gregg's\n"
              "adaptive disk I/O time: the device's busy time split between the requests in\n"
              "flight, so the values of all processes add up to the device's busy time (%I/O\n"
              "is per single disk: two disks fully busy are 200 %). Counters are kept in the\n"
              "kernel; processes that exit during an interval still appear for it. q quits\n"
              "(when standard input is a terminal), as Ctrl-C does. Needs root (eBPF).");
  add_top_options(p, a, f);
  p.examples(
      "  blkrr top                          every process doing I/O, every second\n"
      "  blkrr top -d sda -s write 5        sda, the heaviest writers first, every 5 s\n"
      "  blkrr top -n fio -C -r 10 1 60     fio's tasks, top 10, rolling, one minute\n"
      "  blkrr top --by cgroup -j 10        per cgroup, JSON lines every 10 s\n"
      "  blkrr top -q --prometheus :9111    only serve /metrics on port 9111\n");
  auto r = p.parse(argc, argv);
  if (!r) return r.error();
  if (!*r) {
    a.help_printed = true;
    return a;
  }
  if (int(f.disktime) + int(f.percent) + int(f.bytes) + int(!f.sort.empty()) > 1)
    return Error(ErrorKind::kUsage,
                 "-s, --bytes, --disktime and --percent each choose the sort column: give one");
  if (f.bytes) f.sort = "bytes";
  if (f.disktime || f.percent) f.sort = "time";
  BLKRR_TRY(check_comm(a.comm));
  if (!a.comm.empty() && parse_u64(a.comm))  // iotop's -n NUM
    std::fprintf(stderr,
                 "blkrr top: -n %s shows the tasks named '%s'; for %s refreshes (iotop's -n) "
                 "write blkrr top 1 %s\n",
                 a.comm.c_str(), a.comm.c_str(), a.comm.c_str(), a.comm.c_str());
  BLKRR_TRY(take_interval_count(f.pos, a));
  BLKRR_TRY(check_numeric_devices(a.devices));
  if (a.quiet && f.prometheus.empty())
    return Error(ErrorKind::kUsage, "-q without --prometheus would show nothing");
  BLKRR_TRY(take_choices(f, a));
  return a;
}

}  // namespace blkrr::cli
