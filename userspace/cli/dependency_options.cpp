#include "cli/dependency_options.h"

namespace blkrr::cli {

namespace {
ArgParser::Setter duration_into(uint64_t* out) {
  return [out](std::string_view v) -> Status {
    auto r = parse_duration_ns(v);
    if (!r) return r.error();
    *out = *r;
    return {};
  };
}

ArgParser::Setter think_into(DependencyOptions::Think* out) {
  return [out](std::string_view v) -> Status {
    for (auto t : {DependencyOptions::Think::kWork, DependencyOptions::Think::kRecorded})
      if (v == think_rule_name(t)) {
        *out = t;
        return {};
      }
    return Error(ErrorKind::kUsage,
                 "--dep-think takes work or recorded, not '" + std::string(v) + "'");
  };
}

ArgParser::Setter async_into(DependencyOptions::Async* out) {
  return [out](std::string_view v) -> Status {
    for (auto a : {DependencyOptions::Async::kSlots, DependencyOptions::Async::kCompletion})
      if (v == async_rule_name(a)) {
        *out = a;
        return {};
      }
    return Error(ErrorKind::kUsage,
                 "--dep-async takes slots or completion, not '" + std::string(v) + "'");
  };
}

ArgParser::Setter percent_into(uint32_t* out) {
  return [out](std::string_view v) -> Status {
    auto r = parse_u64(v);
    if (!r || *r > 100)
      return Error(
          ErrorKind::kUsage,
          "--dep-think-quantile takes a percentage from 0 to 100, not '" + std::string(v) + "'");
    *out = static_cast<uint32_t>(*r);
    return {};
  };
}
}  // namespace

void add_dependency_options(ArgParser& p, DependencyOptions& d) {
  p.option(0, "dep-window", "TIME",
           "dependencies: a thread's own completion this recent is a parent (default 1ms)",
           duration_into(&d.thread_window_ns));
  p.option(0, "dep-cross-window", "TIME",
           "dependencies: other threads' completions this recent are parents (default 100us)",
           duration_into(&d.cross_window_ns));
  p.option(0, "dep-skew", "TIME",
           "dependencies: issue and completion clocks may disagree by this much (default 0)",
           duration_into(&d.skew_ns));
  p.option(0, "dep-think", "RULE",
           "dependencies: think time is the thread's own work, at most its low quantile of "
           "gaps (work, default) or the whole recorded gap (recorded)",
           think_into(&d.think));
  p.option(0, "dep-think-quantile", "PCT",
           "dependencies: with --dep-think work, the quantile of a thread's recent gaps taken "
           "as its work (0-100, default 10)",
           percent_into(&d.think_quantile));
  p.option(0, "dep-think-tight", "PCT",
           "dependencies: with --dep-think work, a thread whose quantile is at least PCT % of "
           "its median gap is cut at its median (0-100, 0: never; default 75)",
           percent_into(&d.think_tight));
  p.option(0, "dep-async", "RULE",
           "dependencies: a thread with several requests in flight goes by its queue depth "
           "(slots, default) or each request after its thread's latest completion (completion)",
           async_into(&d.async));
}

}  // namespace blkrr::cli
