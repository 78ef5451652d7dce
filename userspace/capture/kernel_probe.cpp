#include "capture/kernel_probe.h"

#include <bpf/btf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "capture/capture.h"

namespace blkrr::capture {
namespace {

constexpr const char* kBtfPath = "/sys/kernel/btf/vmlinux";

struct BtfFree {
  void operator()(struct btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<struct btf, BtfFree>;

// Number of arguments of a tracepoint's BTF prototype (btf_trace_<name> is a
// typedef of a pointer to a function whose first argument is the context),
// or -1 when the tracepoint does not exist.
int tracepoint_args(const struct btf* btf, const std::string& name) {
  int id = btf__find_by_name_kind(btf, ("btf_trace_" + name).c_str(), BTF_KIND_TYPEDEF);
  if (id < 0) return -1;
  const struct btf_type* t = btf__type_by_id(btf, id);
  while (t && (btf_is_typedef(t) || btf_is_ptr(t))) t = btf__type_by_id(btf, t->type);
  if (!t || !btf_is_func_proto(t)) return -1;
  return static_cast<int>(btf_vlen(t)) - 1;
}

}  // namespace

Result<KernelFeatures> probe_kernel() {
  if (access(kBtfPath, R_OK) != 0) {
    return Error(std::string("no kernel BTF: ") + kBtfPath + " is missing (" + strerror(errno) +
                 "); blkrr needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
  }
  BtfPtr btf(btf__parse(kBtfPath, nullptr));
  if (!btf) {
    return Error(std::string("cannot parse kernel BTF ") + kBtfPath + ": " + strerror(errno));
  }
  for (const char* tp : {"block_rq_issue", "block_rq_complete", "block_rq_requeue"}) {
    int n = tracepoint_args(btf.get(), tp);
    if (n < 0) {
      return Error(std::string("kernel BTF has no tracepoint ") + tp +
                   "; blkrr cannot capture block I/O on this kernel");
    }
    int want = std::strcmp(tp, "block_rq_complete") == 0 ? 3 : 1;
    if (n != want) {
      return Error(std::string("tracepoint ") + tp + " takes " + std::to_string(n) +
                   " arguments in this kernel's BTF, blkrr's programs expect " +
                   std::to_string(want) + " (the request_queue argument was dropped in 5.11)");
    }
  }
  KernelFeatures f;
  f.has_io_start = tracepoint_args(btf.get(), "block_io_start") == 1;
  f.has_rq_insert = tracepoint_args(btf.get(), "block_rq_insert") == 1;
  return f;
}

bool has_bpf_capabilities() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
    auto has = [&](int bit) { return (caps >> bit) & 1ull; };
    constexpr int kSysAdmin = 21, kPerfmon = 38, kBpf = 39;
    return has(kSysAdmin) || (has(kBpf) && has(kPerfmon));
  }
  return geteuid() == 0;
}

}  // namespace blkrr::capture

namespace blkrr {

Status capture_preflight() {
  if (!capture::has_bpf_capabilities()) {
    return Error(
        "not permitted: loading the eBPF capture needs root (or CAP_BPF + CAP_PERFMON); run it "
        "with sudo");
  }
  auto f = capture::probe_kernel();
  if (!f) return f.error();
  return {};
}

}  // namespace blkrr
