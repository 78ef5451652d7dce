// blkrr dump: a native trace as text (one request per line) or JSON lines,
// with its header and counters.
#include <cinttypes>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/dump_args.h"
#include "converters/source.h"
#include "core/json_doc.h"
#include "core/request_json.h"
#include "core/trace_format.h"
#include "core/units.h"
#include "report/dataset.h"

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

// One request: a JSON object, or a line of the text table (times in seconds since t0).
void print_request(const Request& r, uint64_t t0, const HeaderNames& names, bool json) {
  if (json) {
    RequestJsonContext c;
    c.origin_ns = t0;
    c.device = names(r.part ? r.part : r.dev);
    std::printf("%s\n", json_line(request_json(r, c)).c_str());
    return;
  }
  auto rel = [&](uint64_t t) { return static_cast<double>(static_cast<int64_t>(t - t0)) / 1e9; };
  char comp[32] = "-";
  if (r.completed()) std::snprintf(comp, sizeof comp, "%.9f", rel(r.complete_ns));
  std::string note = rec_flags_to_string(r.rec_flags);
  if (r.error) note += (note.empty() ? "" : ",") + std::string("error=") + std::to_string(r.error);
  std::printf("%-14.9f %-14s %-16.*s %7u %7u %-9s %-6s %12" PRIu64 " %8u %10.1f %10.1f %s\n",
              rel(r.issue_ns), comp, static_cast<int>(r.comm_view().size()), r.comm_view().data(),
              r.tgid, r.pid, names(r.part).c_str(), rwbs(r.op, r.flags).c_str(), r.sector, r.bytes,
              static_cast<double>(r.latency_ns()) / 1e3, static_cast<double>(r.disk_time_ns) / 1e3,
              note.c_str());
}

// The header as a JSON object (the first piece's for a rotated recording,
// with the list of its pieces) or as comment lines.
void print_header(const TraceHeader& h, bool json, const std::vector<TraceReader>& pieces) {
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
    if (!h.recording_id.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& rd : pieces)
        list.push_back({{"piece", rd.header().piece},
                        {"path", rd.path()},
                        {"piece_start_ns", rd.header().piece_start_ns},
                        {"mono_anchor_ns", rd.header().mono_anchor_ns},
                        {"real_anchor_ns", rd.header().real_anchor_ns}});
      hj["recording"] = {{"id", h.recording_id}, {"pieces", list}};
    }
    std::printf("%s\n", json_line(hj).c_str());
    return;
  }
  std::printf("# host %s, kernel %s, blkrr %s\n# command: %s\n", h.host.c_str(),
              h.kernel_release.c_str(), h.tool_version.c_str(), h.command_line.c_str());
  for (const auto& d : h.devices)
    std::printf("# device %s (%s) %" PRIu64 " bytes, lbs %u, pbs %u, model '%s', scheduler %s\n",
                d.name.c_str(), dev_to_string(d.dev).c_str(), d.size_bytes, d.logical_block_size,
                d.physical_block_size, d.model.c_str(), d.scheduler.c_str());
  for (const auto& [k, v] : h.settings) std::printf("# setting %s = %s\n", k.c_str(), v.c_str());
  if (!h.recording_id.empty())
    std::printf("# recording %s: %zu piece(s) from %" PRIu64 "\n", h.recording_id.c_str(),
                pieces.size(), h.piece);
  std::printf("%-14s %-14s %-16s %7s %7s %-9s %-6s %12s %8s %10s %10s %s\n", "ISSUE(s)",
              "COMPLETE(s)", "COMM", "PID", "TID", "DEV", "RWBS", "SECTOR", "BYTES", "LAT(us)",
              "DTIME(us)", "NOTE");
}

// The traces given: one, or the pieces of one rotated recording in sequence order.
Result<std::vector<TraceReader>> open_traces(const std::vector<std::string>& paths) {
  std::vector<TraceReader> out;
  for (const auto& p : paths) {
    auto rd = TraceReader::open(p);
    if (!rd) {
      // Another format blkrr reads (a load, blktrace, ...): say so and how to read it.
      auto f = detect_format(p);
      if (f && *f != InputFormat::kNative) {
        std::string m = p + " is a ";
        m += input_format_name(*f);
        m += " input, not a native trace (.blkrr), which is what dump reads: convert it first "
             "(blkrr convert ";
        m += p;
        m += " -o ";
        m += report::label_from_path(p);
        m += ".blkrr) or read it with `blkrr report`";
        return Error(ErrorKind::kUsage, m);
      }
      return rd.error();
    }
    out.push_back(std::move(*rd));
  }
  if (out.size() == 1) return out;
  const std::string& id = out.front().header().recording_id;
  for (const auto& rd : out)
    if (id.empty() || rd.header().recording_id != id)
      return Error(ErrorKind::kUsage,
                   "dump reads one trace, or the pieces of one rotated recording; " + rd.path() +
                       " is not a piece of the recording of " + out.front().path());
  std::stable_sort(out.begin(), out.end(), [](const TraceReader& a, const TraceReader& b) {
    return a.header().piece < b.header().piece;
  });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].header().piece == out[i - 1].header().piece)
      return Error(ErrorKind::kUsage, out[i].path() + " and " + out[i - 1].path() +
                                          " are the same piece; give it once");
  return out;
}

// A gap between a piece read to its end and the next (there should be none).
std::string gap_between(const TraceReader& a, const TraceReader& b) {
  const uint64_t pa = a.header().piece, pb = b.header().piece;
  if (pb != pa + 1)
    return strfmt("%" PRIu64 " piece(s) missing between %s and %s", pb - pa - 1, a.path().c_str(),
                  b.path().c_str());
  if (!a.trailer()) return a.path() + " did not end cleanly: the next piece may not follow it";
  auto end = a.trailer()->find("piece_end_ns");
  if (end != a.trailer()->end() && end->second != b.header().piece_start_ns)
    return strfmt("%s ends at %" PRIu64 " ns, %s starts at %" PRIu64 " ns", a.path().c_str(),
                  end->second, b.path().c_str(), b.header().piece_start_ns);
  return "";
}

// The requests of every piece in order, a warning for each gap between
// pieces; the counters of their trailers summed into `sum` (false when a
// piece has none: a recording that did not end cleanly).
struct DumpTotals {
  uint64_t requests = 0;
  Counters sum;
  bool all_trailers = true;
};

Result<DumpTotals> print_requests(std::vector<TraceReader>& traces, const HeaderNames& names,
                                  bool json) {
  DumpTotals t;
  Request r;
  uint64_t t0 = 0;
  bool first = true;
  for (size_t i = 0; i < traces.size(); ++i) {
    TraceReader& rd = traces[i];
    if (i > 0) {
      if (std::string gap = gap_between(traces[i - 1], rd); !gap.empty()) {
        print_input_warnings("dump", {"gap in the recording: " + gap});
        if (!json) std::printf("# gap: %s\n", gap.c_str());
      }
    }
    while (true) {
      auto n = rd.next(r);
      if (!n) return n.error();
      if (!*n) break;
      if (first) t0 = r.issue_ns, first = false;
      print_request(r, t0, names, json);
    }
    t.requests += rd.records_read();
    if (!rd.warning().empty()) print_input_warnings("dump", {rd.warning()});
    if (!rd.trailer()) t.all_trailers = false;
    if (rd.trailer())
      for (const auto& [k, v] : *rd.trailer())
        if (k != "piece_end_ns")
          t.sum[k] = traces.size() > 1 && k.rfind("feature_off.", 0) == 0 ? v : t.sum[k] + v;
  }
  return t;
}

}  // namespace

Result<int> run_dump(const DumpArgs& a) {
  auto traces = open_traces(a.files);
  if (!traces) return traces.error();
  const TraceHeader& h = traces->front().header();
  const HeaderNames names(h);
  if (a.json || !a.no_header) print_header(h, a.json, *traces);
  auto t = print_requests(*traces, names, a.json);
  if (!t) return t.error();
  if (t->all_trailers) {
    if (a.json) {
      std::printf("%s\n",
                  json_line({{"type", "counters"}, {"requests", t->requests}, {"counters", t->sum}})
                      .c_str());
    } else {
      std::printf("# %" PRIu64 " requests\n", t->requests);
      for (const auto& [k, v] : t->sum) std::printf("# counter %s = %" PRIu64 "\n", k.c_str(), v);
    }
  }
  // Output errors (a full disk, /dev/full, a closed pipe) fail the command.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return Error::system("cannot write the dump to standard output", errno);
  return 0;
}

Result<int> cmd_dump(int argc, char** argv) {
  auto a = parse_dump_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_dump(*a);
}

}  // namespace blkrr::cli
