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
}

}  // namespace blkrr::cli
