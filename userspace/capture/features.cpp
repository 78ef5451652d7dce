#include "capture/features.h"

#include "capture/capture.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>

namespace blkrr::capture {
namespace {

std::string tracepoint_detail(int args) {
  if (args < 0) return "not in this kernel";
  return "present (" + std::to_string(args) + (args == 1 ? " argument)" : " arguments)");
}

// A denied feature says so; a missing one gives the kernel's reason.
FeatureRow optional_row(const FeatureSet& f, const std::string& name, const std::string& deny,
                        bool kernel_has, const std::string& detail, const std::string& without) {
  FeatureRow r{name, false, kernel_has && !f.denies(deny), detail, without};
  if (kernel_has && f.denies(deny)) r.detail = "switched off by BLKRR_DENY=" + deny;
  return r;
}

void add_required(std::vector<FeatureRow>* rows, const FeatureSet& f) {
  const auto& k = f.kernel;
  rows->push_back({"capabilities", true, has_bpf_capabilities(k), security_summary(k), ""});
  rows->push_back(
      {"btf", true, k.btf,
       k.btf ? "/sys/kernel/btf/vmlinux" : "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)",
       ""});
  bool tps = (k.issue_args == 1 || k.issue_args == 2) && k.complete_args == 3 &&
             k.requeue_args == k.issue_args;
  rows->push_back({"block_rq_issue/complete/requeue", true, tps,
                   "issue " + tracepoint_detail(k.issue_args) + ", complete " +
                       tracepoint_detail(k.complete_args) + ", requeue " +
                       tracepoint_detail(k.requeue_args) +
                       (k.issue_args == 2 ? "; request_queue first (before 5.11)" : ""),
                   ""});
  rows->push_back(
      {"tp_btf", true, k.tp_btf.ok, k.tp_btf.ok ? "loads and attaches" : k.tp_btf.why, ""});
  rows->push_back({"ringbuf", true, k.ringbuf.ok, k.ringbuf.ok ? "available" : k.ringbuf.why, ""});
  rows->push_back({"cgroup_id_helper", true, k.cgroup_id_helper.ok,
                   k.cgroup_id_helper.ok ? "available" : k.cgroup_id_helper.why, ""});
}

void add_optional(std::vector<FeatureRow>* rows, const FeatureSet& f) {
  const auto& k = f.kernel;
  rows->push_back(optional_row(
      f, "map_iter", "iter", k.map_iter.ok, k.map_iter.ok ? "loads" : k.map_iter.why,
      "lost completions are found by the sysfs idle check (the disk's in-flight count) "
      "instead of the checker"));
  rows->push_back(optional_row(
      f, "block_io_start", "io_start", k.has_io_start(), tracepoint_detail(k.io_start_args),
      "requests are attributed at block_rq_insert to the task that queued them, else to the "
      "task current at issue (may be a kernel worker)"));
  rows->push_back(optional_row(f, "block_io_done", "io_done", k.has_io_done(),
                               tracepoint_detail(k.io_done_args),
                               "BLKRR_IO_DONE=1 (second completion source) is not available"));
  rows->push_back(optional_row(f, "block_rq_insert", "insert", k.has_rq_insert(),
                               tracepoint_detail(k.insert_args),
                               "no queue time (snoop -Q shows '-'); without block_io_start too, "
                               "requests a kernel worker issues are attributed to it"));
  rows->push_back(optional_row(
      f, "bpf_atomics", "atomics", k.atomics.ok,
      k.atomics.ok ? "fetch-and-add and compare-and-swap load" : k.atomics.why,
      "the programs built without them load (no compare-and-swap and, as tracing programs "
      "there have no spin lock either, an unlocked device state: two CPUs working on one disk "
      "at the same instant can mis-charge disk time)"));
  rows->push_back({"block_bio_queue", false, k.has_bio_queue(), tracepoint_detail(k.bio_queue_args),
                   "no attribution through stacked volumes: the disk requests of dm and md "
                   "volumes stay with the thread that issued them (kcryptd, md*_raid1...)"});
  rows->push_back({"block_bio_complete", false, k.has_bio_complete(),
                   tracepoint_detail(k.bio_complete_args),
                   "no bio-level capture: a dm, md or zram device whose mapping blkrr cannot "
                   "follow (thin, snapshot, RAID5...) is refused; record the devices below it"});
  rows->push_back({"task_btf_helper", false, k.task_btf_helper.ok,
                   k.task_btf_helper.ok ? "available" : k.task_btf_helper.why,
                   "top reads the parent pid through bpf_get_current_task"});
  rows->push_back({"raw_tp", false, k.raw_tp.ok, k.raw_tp.ok ? "loads and attaches" : k.raw_tp.why,
                   "not used while tp_btf works"});
}

}  // namespace

Result<std::set<std::string>> parse_deny(const std::string& text) {
  std::set<std::string> out;
  std::stringstream ss(text);
  std::string word;
  while (std::getline(ss, word, ',')) {
    if (word.empty()) continue;
    if (word == "all") {
      for (const char* n : kDenyNames) out.insert(n);
      continue;
    }
    bool known = false;
    for (const char* n : kDenyNames) known = known || word == n;
    if (!known)
      return Error(ErrorKind::kUsage,
                   std::string("BLKRR_DENY='")
                       .append(text)
                       .append("': unknown feature '")
                       .append(word)
                       .append("' (known: iter, io_start, io_done, insert, atomics, all)"));
    out.insert(word);
  }
  return out;
}

Result<FeatureSet> features() {
  static std::once_flag once;
  static std::optional<KernelFeatures> probed;
  std::call_once(once, [] { probed = probe_kernel(); });
  const char* env = std::getenv("BLKRR_DENY");
  auto deny = parse_deny(env ? env : "");
  if (!deny) return deny.error();
  FeatureSet f{*probed, *deny};
  // Tests of the retry after a failed load: pretend the kernel loads map
  // iterators, so that the checker is planned and its load fails where it
  // does not.
  if (const char* a = std::getenv("BLKRR_ASSUME");
      a && std::string_view(a) == "iter" && !f.kernel.map_iter.ok)
    f.kernel.map_iter = {true, "assumed by BLKRR_ASSUME=iter"};
  return f;
}

Status check_required(const FeatureSet& f) {
  for (const auto& row : feature_rows(f)) {
    if (!row.required || row.available) continue;
    std::string what = row.name + ": " + row.detail;
    if (row.name == "capabilities")
      return Error(ErrorKind::kPermission,
                   "not permitted: loading the eBPF capture needs root (CAP_BPF + CAP_PERFMON, "
                   "or CAP_SYS_ADMIN); " +
                       row.detail + "; run it with sudo");
    return Error(ErrorKind::kUnsupported, "this kernel cannot run blkrr's capture: " + what + " (" +
                                              security_summary(f.kernel) +
                                              "; `blkrr features` shows every probe)");
  }
  return {};
}

std::vector<FeatureRow> feature_rows(const FeatureSet& f) {
  std::vector<FeatureRow> rows;
  add_required(&rows, f);
  add_optional(&rows, f);
  return rows;
}

std::string degrade_line(const FeatureRow& row) {
  return "blkrr: " + row.name + " off (" + row.detail + "): " + row.without;
}

Error load_error(int err, const std::string& prog, const KernelFeatures& k) {
  const std::string what =
      "loading the BPF program " +
      (prog.empty() ? std::string("(see the libbpf messages above)") : "'" + prog + "'") +
      " failed";
  std::string hint;
  switch (err) {
    case EPERM:
      hint =
          "the kernel denied it: lockdown, an LSM (SELinux, AppArmor, BPF LSM) or a missing "
          "capability (" +
          security_summary(k) +
          "); on kernels before 5.11 raise RLIMIT_MEMLOCK or add CAP_SYS_RESOURCE";
      break;
    case EACCES:
    case EINVAL:
      hint =
          "the verifier refused it on this kernel (the libbpf messages above show where); "
          "`blkrr features` lists what the kernel offers";
      break;
    default:
      hint = "see the libbpf messages above and `blkrr features`";
  }
  return Error::system(what, err, hint);
}

std::string security_summary(const KernelFeatures& k) {
  std::string caps = "capabilities unknown";
  if (k.cap_known) {
    auto has = [&](int bit) { return ((k.cap_eff >> bit) & 1ull) != 0; };
    caps.clear();
    const std::pair<int, const char*> names[] = {{kCapBpf, "CAP_BPF"},
                                                 {kCapPerfmon, "CAP_PERFMON"},
                                                 {kCapSysAdmin, "CAP_SYS_ADMIN"},
                                                 {kCapSysResource, "CAP_SYS_RESOURCE"}};
    for (auto [bit, name] : names)
      caps += std::string(caps.empty() ? "" : " ") + (has(bit) ? "+" : "-") + name;
  }
  return "lockdown " + k.lockdown + ", LSMs " + k.lsms + ", " + caps;
}

}  // namespace blkrr::capture

namespace blkrr {

Status capture_preflight() {
  auto f = capture::features();
  if (!f) return f.error();
  return capture::check_required(*f);
}

}  // namespace blkrr
