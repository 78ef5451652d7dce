// The features a capture runs with: the kernel's (kernel_probe.h), probed
// once per process, less what BLKRR_DENY switches off for tests
// (BLKRR_DENY=iter,io_start,io_done,insert or all). One table says, for
// each optional feature, what blkrr does without it; `blkrr features`
// prints it, the loader prints one line for each one it goes without.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "capture/kernel_probe.h"
#include "core/result.h"

namespace blkrr::capture {

// Names BLKRR_DENY accepts (each an optional feature).
inline constexpr const char* kDenyNames[] = {"iter", "io_start", "io_done", "insert"};

// Parses a BLKRR_DENY value: a comma list of kDenyNames, or "all"; empty
// denies nothing. An unknown word is an error naming it.
Result<std::set<std::string>> parse_deny(const std::string& text);

struct FeatureSet {
  KernelFeatures kernel;
  std::set<std::string> denied;

  bool denies(const std::string& name) const { return denied.count(name) != 0; }
  // Optional programs blkrr may load, after BLKRR_DENY.
  bool map_iter() const { return kernel.map_iter.ok && !denies("iter"); }
  bool io_start() const { return kernel.has_io_start() && !denies("io_start"); }
  bool io_done() const { return kernel.has_io_done() && !denies("io_done"); }
  bool rq_insert() const { return kernel.has_rq_insert() && !denies("insert"); }
  // Tracepoints with the request_queue first argument (before 5.11).
  bool queue_arg() const { return kernel.issue_args == 2; }
};

// The running kernel's features with BLKRR_DENY applied, probed on the
// first call (later calls return the same). Errors: a bad BLKRR_DENY.
Result<FeatureSet> features();

// Why capture cannot run at all here (no root/capabilities, no BTF,
// tracepoints missing or with unknown prototypes, tp_btf or ring buffer
// refused), with what to do; ok otherwise.
Status check_required(const FeatureSet& f);

// One row of `blkrr features`.
struct FeatureRow {
  std::string name;
  bool required = false;
  bool available = false;
  std::string detail;   // what was found (reason when not available)
  std::string without;  // what blkrr does without it (optional ones)
};
std::vector<FeatureRow> feature_rows(const FeatureSet& f);

// The one stderr line for an optional feature the capture goes without.
std::string degrade_line(const FeatureRow& row);

// The security context in one line: lockdown, LSMs and the capabilities
// that matter for BPF (for error messages and `blkrr features`).
std::string security_summary(const KernelFeatures& k);

}  // namespace blkrr::capture
