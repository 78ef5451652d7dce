// blkrr features: what the running kernel offers blkrr's capture and what
// blkrr does without each optional feature (like `bpftrace --info`).
#include <sys/utsname.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "capture/features.h"
#include "capture/load_plan.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/args.h"
#include "core/json_doc.h"

namespace blkrr::cli {
namespace {

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? u.release : "unknown";
}

const char* status_word(const capture::FeatureRow& r) {
  if (r.available) return "yes";
  return r.detail.rfind("switched off", 0) == 0 ? "denied" : "no";
}

nlohmann::json to_json(const capture::FeatureSet& f, const Status& usable) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : capture::feature_rows(f))
    rows.push_back({{"name", r.name},
                    {"required", r.required},
                    {"available", r.available},
                    {"detail", r.detail},
                    {"without", r.without}});
  nlohmann::json out = {{"schema", schema_tag(kSchemaFeatures)},
                        {"kernel_release", kernel_release()},
                        {"capture_possible", usable.ok()},
                        {"features", rows},
                        {"capture_features", capture::plan_programs(f, false).describe()},
                        {"lockdown", f.kernel.lockdown},
                        {"lsms", f.kernel.lsms}};
  if (!usable) out["capture_error"] = usable.error().message;
  return out;
}

void print_text(const capture::FeatureSet& f, const Status& usable) {
  std::printf("kernel %s; %s\n\n", kernel_release().c_str(),
              capture::security_summary(f.kernel).c_str());
  std::printf("%-32s %-8s %-6s %s\n", "FEATURE", "NEEDED", "HAS", "DETAIL");
  for (const auto& r : capture::feature_rows(f))
    std::printf("%-32s %-8s %-6s %s\n", r.name.c_str(), r.required ? "required" : "optional",
                status_word(r), r.detail.c_str());
  std::printf("\nWithout an optional feature:\n");
  for (const auto& r : capture::feature_rows(f))
    if (!r.required && !r.available) std::printf("  %s: %s\n", r.name.c_str(), r.without.c_str());
  std::printf("\nA capture here runs with:\n");
  for (const auto& [k, v] : capture::plan_programs(f, false).describe())
    std::printf("  %-18s %s\n", k.c_str(), v.c_str());
  if (usable)
    std::printf("\ncapture: possible\n");
  else
    std::printf("\ncapture: NOT possible: %s\n", usable.error().message.c_str());
}

}  // namespace

Result<int> cmd_features(int argc, char** argv) {
  bool json = false;
  ArgParser p(
      "blkrr features", "[--json]",
      "Probe what the running kernel offers blkrr's capture (BTF, tracepoints and their\n"
      "prototypes, tp_btf, ring buffer, map iterators, helpers, lockdown, LSMs,\n"
      "capabilities) and say what blkrr does without each optional feature.\n"
      "BLKRR_DENY=iter,io_start,io_done,insert,atomics (or all) switches features off, for tests.\n"
      "Exit status: 0 when capture can run here, 1 when it cannot.");
  p.common_flag(CommonOpt::kJson, &json, "print JSON");
  p.examples("  blkrr features\n  BLKRR_DENY=iter blkrr features --json | jq .capture_features");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  auto f = capture::features();
  if (!f) return f.error();
  Status usable = capture::check_required(*f);
  if (json)
    std::printf("%s\n", to_json(*f, usable).dump(2).c_str());
  else
    print_text(*f, usable);
  return usable ? kExitOk : kExitFailed;
}

}  // namespace blkrr::cli
