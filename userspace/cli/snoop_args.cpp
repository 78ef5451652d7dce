#include "cli/snoop_args.h"

#include <cstdio>

#include "cli/capture_options.h"
#include "core/args.h"
#include "core/common_options.h"

namespace blkrr::cli {

namespace {

void add_snoop_options(ArgParser& p, SnoopArgs& a, bool& old_start) {
  p.common_strings(CommonOpt::kDevice, "only this disk or partition (repeatable)", &a.devices);
  p.common(CommonOpt::kPid, "only requests created by this process (all its threads)",
           pid_setter(a.pid, a.has_pid));
  p.common_string(CommonOpt::kComm, "only requests created by tasks named COMM (exact)", &a.comm);
  p.flag(0, "issue", &a.issue, "add ISSUE(s), the issue time (s since snoop started)");
  p.flag(0, "start", &old_start,
         "the old spelling of --issue (deprecated: --start TIME is where replay begins)");
  p.flag(0, "majmin", &a.majmin, "add MAJ and MIN of the device");
  p.flag('Q', "queue", &a.queue, "add QUE(ms), I/O scheduler insert to issue (- if not queued)");
  p.common_flag(CommonOpt::kJson, &a.json,
                "JSON lines: a header object, then one object per request (docs/json.md)");
  p.common(CommonOpt::kDuration, "stop after this time (e.g. 10, 1.5s, 1m30s; or as `duration`)",
           [&a](std::string_view v) -> Status {
             auto d = parse_run_duration("-D", v);
             if (!d) return d.error();
             a.duration_ns = *d;
             return {};
           });
  p.removed('s', "--issue (the issue time column)");
  p.removed('t', "nothing: TIME(s), the completion time, is always shown");
  p.removed('N', "--majmin");
}

}  // namespace

Result<SnoopArgs> parse_snoop_args(int argc, char** argv) {
  SnoopArgs a;
  bool old_start = false;
  ArgParser p(argv[0],
              "[-d DEV]... [-p PID] [-n COMM] [--issue] [--majmin] [-Q] [-j] [-D TIME | duration]",
              "One line per completed block request: who created it, where, how big, its\n"
              "latency (issue to completion) and its adaptive disk time (DTIME: the part of\n"
              "the device's busy time charged to it; summed over requests it is the busy\n"
              "time). Runs for `duration` (e.g. 10, 1.5s, 2m) or until Ctrl-C. Needs root.");
  add_snoop_options(p, a, old_start);
  std::vector<std::string> pos;
  p.positionals("[duration]", &pos, 0, 1);
  p.examples(
      "  blkrr snoop                      every request on every disk\n"
      "  blkrr snoop -d sda2 --issue 10   partition sda2 with issue times, for 10 s\n"
      "  blkrr snoop -n postgres -j       one JSON line per request of postgres\n"
      "  blkrr snoop -Q -d sda            with the time spent in sda's I/O scheduler\n");
  auto r = p.parse(argc, argv);
  if (!r) return r.error();
  if (!*r) {
    a.help_printed = true;
    return a;
  }
  BLKRR_TRY(take_positional_duration(pos, a.duration_ns));
  if (old_start) {
    std::fprintf(stderr, "blkrr snoop: --start is now --issue (the ISSUE(s) column)\n");
    a.issue = true;
  }
  BLKRR_TRY(check_comm(a.comm));
  return a;
}

}  // namespace blkrr::cli
