#include "capture/kernel_probe.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/fd.h"
#include "core/file_io.h"

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

// Whether enum bpf_func_id has the helper (the kernel knows it).
Probe helper_in_btf(const struct btf* btf, const char* name) {
  int id = btf__find_by_name_kind(btf, "bpf_func_id", BTF_KIND_ENUM);
  if (id < 0) return {false, "enum bpf_func_id not in BTF"};
  const struct btf_type* t = btf__type_by_id(btf, id);
  const struct btf_enum* e = btf_enum(t);
  for (unsigned i = 0; i < btf_vlen(t); i++, e++)
    if (std::strcmp(btf__name_by_offset(btf, e->name_off), name) == 0) return {true, ""};
  return {false, std::string(name) + " not in this kernel"};
}

std::string errno_reason(int err) {
  switch (err) {
    case EPERM:
      return "EPERM: denied (lockdown, an LSM or a missing capability)";
    case EACCES:
      return "EACCES: refused by the verifier";
    case EINVAL:
      return "EINVAL: not supported by this kernel";
    case ENOENT:
      return "ENOENT: not found";
    default:
      return std::string(strerrorname_np(err) ? strerrorname_np(err) : "error") + ": " +
             strerror(err);
  }
}

// "r0 = 0; exit": the smallest valid program of any type.
int load_trivial(bpf_prog_type type, bpf_attach_type attach, int btf_id) {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  opts.expected_attach_type = attach;
  opts.attach_btf_id = static_cast<__u32>(btf_id > 0 ? btf_id : 0);
  int fd = bpf_prog_load(type, "blkrr_probe", "GPL", insns, 2, &opts);
  return fd < 0 ? -errno : fd;
}

Probe probe_tp_btf(const struct btf* btf) {
  int id = btf__find_by_name_kind(btf, "btf_trace_block_rq_issue", BTF_KIND_TYPEDEF);
  if (id < 0) return {false, "tracepoint block_rq_issue not in BTF"};
  int fd = load_trivial(BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, id);
  if (fd < 0) return {false, "load: " + errno_reason(-fd)};
  Fd prog(fd);
  Fd link(bpf_raw_tracepoint_open(nullptr, prog.get()));
  if (!link) return {false, "attach: " + errno_reason(errno)};
  return {true, ""};
}

Probe probe_raw_tp() {
  int fd = load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_CGROUP_INET_INGRESS, 0);
  if (fd < 0) return {false, "load: " + errno_reason(-fd)};
  Fd prog(fd);
  Fd link(bpf_raw_tracepoint_open("block_rq_issue", prog.get()));
  if (!link) return {false, "attach: " + errno_reason(errno)};
  return {true, ""};
}

Probe probe_map_iter(const struct btf* btf) {
  int id = btf__find_by_name_kind(btf, "bpf_iter_bpf_map_elem", BTF_KIND_FUNC);
  if (id < 0) return {false, "bpf_map_elem iterator not in this kernel"};
  int fd = load_trivial(BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, id);
  if (fd < 0) return {false, "load: " + errno_reason(-fd)};
  Fd prog(fd);
  return {true, ""};
}

// An atomic fetch-and-add on the stack: kernels before 5.12 refuse the
// instruction ("BPF_STX uses reserved fields") in every program.
Probe probe_atomics() {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 0},                        // r1 = 0
      {BPF_STX | BPF_DW | BPF_MEM, 10, 1, -8, 0},                       // *(u64 *)(r10 - 8) = r1
      {BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1},                        // r1 = 1
      {BPF_STX | BPF_DW | BPF_ATOMIC, 10, 1, -8, BPF_ADD | BPF_FETCH},  // fetch-and-add
      {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},                        // r0 = 0
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "blkrr_probe", "GPL", insns, 6, nullptr);
  if (fd < 0) return {false, "load: " + errno_reason(errno)};
  Fd prog(fd);
  return {true, ""};
}

Probe probe_ringbuf() {
  int rc = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr);
  if (rc == 1) return {true, ""};
  return {false, rc == 0 ? "not supported by this kernel" : errno_reason(-rc)};
}

// A small kernel file's text, "" when it cannot be read (the probe then
// reports the fact as unknown).
std::string text_of(const char* path) {
  auto t = read_file(path, 1 << 20);
  return t ? *t : "";
}

void probe_system(KernelFeatures* f) {
  f->lockdown = parse_lockdown(text_of("/sys/kernel/security/lockdown"));
  std::string lsm = text_of("/sys/kernel/security/lsm");
  while (!lsm.empty() && (lsm.back() == '\n' || lsm.back() == '\0')) lsm.pop_back();
  f->lsms = lsm.empty() ? "not reported" : lsm;
  f->cap_known = parse_cap_eff(text_of("/proc/self/status"), &f->cap_eff);
}

}  // namespace

std::string parse_lockdown(const std::string& text) {
  auto open = text.find('[');
  auto close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return "not reported";
  return text.substr(open + 1, close - open - 1);
}

bool parse_cap_eff(const std::string& status, uint64_t* out) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(line.c_str() + 7, &end, 16);
    if (errno != 0 || end == line.c_str() + 7) return false;
    *out = v;
    return true;
  }
  return false;
}

KernelFeatures probe_kernel() {
  KernelFeatures f;
  probe_system(&f);
  if (access(kBtfPath, R_OK) != 0) return f;
  BtfPtr btf(btf__parse(kBtfPath, nullptr));
  if (!btf) return f;
  f.btf = true;
  const struct btf* b = btf.get();
  f.issue_args = tracepoint_args(b, "block_rq_issue");
  f.complete_args = tracepoint_args(b, "block_rq_complete");
  f.requeue_args = tracepoint_args(b, "block_rq_requeue");
  f.insert_args = tracepoint_args(b, "block_rq_insert");
  f.io_start_args = tracepoint_args(b, "block_io_start");
  f.io_done_args = tracepoint_args(b, "block_io_done");
  f.bio_queue_args = tracepoint_args(b, "block_bio_queue");
  f.bio_complete_args = tracepoint_args(b, "block_bio_complete");
  f.cgroup_id_helper = helper_in_btf(b, "BPF_FUNC_get_current_cgroup_id");
  f.task_btf_helper = helper_in_btf(b, "BPF_FUNC_get_current_task_btf");
  if (!has_bpf_capabilities(f)) {
    Probe no{false, "not probed: no CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN"};
    f.tp_btf = f.raw_tp = f.ringbuf = f.map_iter = f.atomics = no;
    return f;
  }
  f.tp_btf = probe_tp_btf(b);
  f.raw_tp = probe_raw_tp();
  f.ringbuf = probe_ringbuf();
  f.map_iter = probe_map_iter(b);
  f.atomics = probe_atomics();
  return f;
}

bool has_bpf_capabilities(const KernelFeatures& f) {
  if (!f.cap_known) return geteuid() == 0;
  auto has = [&](int bit) { return ((f.cap_eff >> bit) & 1ull) != 0; };
  return has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon));
}

}  // namespace blkrr::capture
