// Native .blkrr traces as a RequestSource.
#include <cstdint>
#include <string>

#include "converters/source.h"
#include "core/args.h"
#include "core/device.h"

namespace blkrr {

namespace {
class NativeSource : public RequestSource {
 public:
  NativeSource(TraceReader r, std::optional<DevT> dev, bool skip_bad)
      : r_(std::move(r)), dev_(dev), skip_bad_(skip_bad) {
    info_.format = InputFormat::kNative;
    info_.paths = {r_.path()};
    info_.absolute_time = true;
    info_.sorted_by_issue = false;  // written in completion order
    info_.has_completion = true;
    info_.trace_header = r_.header();
  }
  Result<bool> next(Request& out) override {
    for (;;) {
      auto got = r_.next(out);
      if (!got) return got.error().context("reading " + r_.path());
      if (!*got) return false;
      if (dev_ && out.dev != *dev_ && out.part != *dev_) continue;
      const char* why = request_range_error(out, false);
      if (!why && out.issue_ns > static_cast<uint64_t>(INT64_MAX)) why = "time out of range";
      if (!why) return true;
      if (!skip_bad_)
        return Error(ErrorKind::kBadInput, r_.path() + ": record " +
                                               std::to_string(r_.records_read()) + ": " + why +
                                               "; --skip-bad skips such records");
      ++skipped_["lines_skipped"];
      ++skipped_[std::string("skipped: ") + why];
    }
  }
  Counters counters() const override {
    Counters c = skipped_;
    if (r_.trailer()) {
      for (const auto& [k, v] : *r_.trailer()) c["capture: " + k] = v;
    }
    if (!r_.warning().empty()) c["truncated trace (" + r_.warning() + ")"] = 1;
    return c;
  }

 private:
  TraceReader r_;
  std::optional<DevT> dev_;
  bool skip_bad_;
  Counters skipped_;
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_native_source(const std::string& path,
                                                          const SourceOptions& opts) {
  auto r = TraceReader::open(path);
  if (!r) return r.error();
  std::optional<DevT> dev;
  if (!opts.device.empty()) {
    dev = parse_majmin(opts.device);
    if (!dev) {
      std::string name = opts.device;
      if (name.rfind("/dev/", 0) == 0) name = name.substr(5);
      std::string known;
      for (const auto& d : r->header().devices) {
        if (d.name == name) dev = d.dev;
        for (const auto& p : d.partitions)
          if (p.name == name) dev = p.dev;
        known += (known.empty() ? "" : ", ") + d.name + " (" + dev_to_string(d.dev) + ")";
      }
      if (!dev) {
        return Error(ErrorKind::kUsage, path + ": the trace has no device '" + opts.device +
                                            "'; it has: " + (known.empty() ? "none" : known));
      }
    }
  }
  std::unique_ptr<RequestSource> s =
      std::make_unique<NativeSource>(std::move(*r), dev, opts.skip_bad);
  return s;
}

}  // namespace blkrr
