// blkrr dump: a native trace as text (one request per line) or JSON lines,
// with its header and counters.
#include <cinttypes>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/args.h"
#include "core/json_doc.h"
#include "core/request_json.h"
#include "core/trace_format.h"

namespace blkrr::cli {
namespace {

// Names of the recorded disks and partitions as the recording host called
// them (the header), not as this machine would: MAJ:MIN when unknown.
class HeaderNames {
 public:
  explicit HeaderNames(const TraceHeader& h) {
    for (const auto& d : h.devices) {
      names_[d.dev] = d.name;
      for (const auto& p : d.partitions) names_[p.dev] = p.name;
    }
  }
  std::string operator()(DevT dev) const {
    auto it = names_.find(dev);
    return it != names_.end() && !it->second.empty() ? it->second : dev_to_string(dev);
  }

 private:
  std::map<DevT, std::string> names_;
};

}  // namespace

Result<int> cmd_dump(int argc, char** argv) {
  bool json = false, no_header = false;
  std::vector<std::string> pos;
  ArgParser p(
      "blkrr dump", "[--json] [--no-header] FILE.blkrr",
      "Print a native trace: the header, one request per line, and the capture counters.\n"
      "Times are seconds since the first record's issue (text), or nanoseconds (JSON: start_ns\n"
      "since the first record's issue, issue_ns and complete_ns on the recording host's\n"
      "CLOCK_MONOTONIC; the blkrr.requests schema of docs/json.md).");
  p.common_flag(CommonOpt::kJson, &json,
                "JSON lines: a header object, one object per request, a counters object");
  p.flag('H', "no-header", &no_header, "records only (text mode)");
  p.positionals("FILE", &pos, 1, 1);
  p.examples(
      "  blkrr dump prod.blkrr | head\n  blkrr dump --json prod.blkrr | jq "
      "'select(.comm==\"mysqld\")'");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;

  auto rd = TraceReader::open(pos[0]);
  if (!rd) return rd.error();
  const TraceHeader& h = rd->header();
  const HeaderNames names(h);
  if (json) {
    nlohmann::json hj = requests_header("blkrr dump");
    hj.update({{"host", h.host},
               {"kernel_release", h.kernel_release},
               {"tool_version", h.tool_version},
               {"command_line", h.command_line},
               {"mono_anchor_ns", h.mono_anchor_ns},
               {"real_anchor_ns", h.real_anchor_ns},
               {"settings", h.settings}});
    for (const auto& d : h.devices)
      hj["devices"].push_back({{"dev", dev_to_string(d.dev)},
                               {"name", d.name},
                               {"size_bytes", d.size_bytes},
                               {"logical_block_size", d.logical_block_size},
                               {"physical_block_size", d.physical_block_size},
                               {"model", d.model},
                               {"scheduler", d.scheduler}});
    std::printf("%s\n", json_line(hj).c_str());
  } else if (!no_header) {
    std::printf("# host %s, kernel %s, blkrr %s\n# command: %s\n", h.host.c_str(),
                h.kernel_release.c_str(), h.tool_version.c_str(), h.command_line.c_str());
    for (const auto& d : h.devices)
      std::printf("# device %s (%s) %" PRIu64 " bytes, lbs %u, pbs %u, model '%s', scheduler %s\n",
                  d.name.c_str(), dev_to_string(d.dev).c_str(), d.size_bytes, d.logical_block_size,
                  d.physical_block_size, d.model.c_str(), d.scheduler.c_str());
    for (const auto& [k, v] : h.settings) std::printf("# setting %s = %s\n", k.c_str(), v.c_str());
    std::printf("%-14s %-14s %-16s %7s %7s %-9s %-6s %12s %8s %10s %10s %s\n", "ISSUE(s)",
                "COMPLETE(s)", "COMM", "PID", "TID", "DEV", "RWBS", "SECTOR", "BYTES", "LAT(us)",
                "DTIME(us)", "NOTE");
  }
  Request r;
  uint64_t t0 = 0;
  bool first = true;
  while (true) {
    auto n = rd->next(r);
    if (!n) return n.error();
    if (!*n) break;
    if (first) t0 = r.issue_ns, first = false;
    if (json) {
      RequestJsonContext c;
      c.origin_ns = t0;
      c.device = names(r.part ? r.part : r.dev);
      std::printf("%s\n", json_line(request_json(r, c)).c_str());
      continue;
    }
    auto rel = [&](uint64_t t) { return static_cast<double>(static_cast<int64_t>(t - t0)) / 1e9; };
    char comp[32] = "-";
    if (r.completed()) std::snprintf(comp, sizeof comp, "%.9f", rel(r.complete_ns));
    std::string note = rec_flags_to_string(r.rec_flags);
    if (r.error)
      note += (note.empty() ? "" : ",") + std::string("error=") + std::to_string(r.error);
    std::printf("%-14.9f %-14s %-16.*s %7u %7u %-9s %-6s %12" PRIu64 " %8u %10.1f %10.1f %s\n",
                rel(r.issue_ns), comp, static_cast<int>(r.comm_view().size()), r.comm_view().data(),
                r.tgid, r.pid, names(r.part).c_str(), rwbs(r.op, r.flags).c_str(), r.sector,
                r.bytes, static_cast<double>(r.latency_ns()) / 1e3,
                static_cast<double>(r.disk_time_ns) / 1e3, note.c_str());
  }
  if (!rd->warning().empty()) std::fprintf(stderr, "warning: %s\n", rd->warning().c_str());
  if (rd->trailer()) {
    if (json) {
      std::printf("%s\n", json_line({{"type", "counters"},
                                     {"requests", rd->records_read()},
                                     {"counters", *rd->trailer()}})
                              .c_str());
    } else {
      std::printf("# %" PRIu64 " requests\n", rd->records_read());
      for (const auto& [k, v] : *rd->trailer())
        std::printf("# counter %s = %" PRIu64 "\n", k.c_str(), v);
    }
  }
  // Output errors (a full disk, /dev/full, a closed pipe) fail the command.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return Error("cannot write the dump to standard output: " + std::string(std::strerror(errno)));
  return 0;
}

}  // namespace blkrr::cli
