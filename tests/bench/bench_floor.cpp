// bench_floor: benchmark helper for tests/bench/record.sh (not installed).
// Attaches bpf/floor.bpf.c to block_io_start, block_rq_issue and
// block_rq_complete, prints "ready", and stays attached until SIGINT/SIGTERM;
// then prints the per-CPU-summed counts (with --count). The IOPS cost of this
// is the floor of any tp_btf tracer of these three events on this kernel.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/signals.h"
#include "floor.skel.h"

namespace {

struct SkelDestroy {
  void operator()(floor_bpf* s) const { floor_bpf__destroy(s); }
};

}  // namespace

int main(int argc, char** argv) {
  bool count = false;
  unsigned burn_issue = 0, burn_complete = 0;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--count") == 0) {
      count = true;
    } else if (std::strcmp(argv[i], "--burn-issue") == 0 && i + 1 < argc) {
      burn_issue = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--burn-complete") == 0 && i + 1 < argc) {
      burn_complete = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::fprintf(stderr,
                   "usage: bench_floor [--count] [--burn-issue N] [--burn-complete N]\n"
                   "Attach empty (or, with --count, counting) programs to the block tracepoints "
                   "blkrr uses, until SIGINT/SIGTERM. --burn-*: N clock reads (at most 1024) per "
                   "issue or completion, to see which path's cost becomes lost IOPS.\n");
      return 2;
    }
  }
  blkrr::StopSignals signals({.mode = blkrr::StopSignals::Mode::kBlock});

  std::unique_ptr<floor_bpf, SkelDestroy> skel(floor_bpf__open());
  if (!skel) {
    std::fprintf(stderr, "bench_floor: cannot open the BPF object\n");
    return 1;
  }
  skel->rodata->cfg_count = count ? 1 : 0;
  skel->rodata->cfg_burn_issue = burn_issue;
  skel->rodata->cfg_burn_complete = burn_complete;
  if (int err = floor_bpf__load(skel.get())) {
    std::fprintf(stderr, "bench_floor: load failed: %s\n", std::strerror(-err));
    return 1;
  }
  if (int err = floor_bpf__attach(skel.get())) {
    std::fprintf(stderr, "bench_floor: attach failed: %s\n", std::strerror(-err));
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  signals.wait(blkrr::StopSignals::kForever);
  if (count) {
    int ncpu = libbpf_num_possible_cpus();
    std::vector<unsigned long long> v(ncpu > 0 ? ncpu : 1);
    const char* names[] = {"io_start", "issue", "complete"};
    for (unsigned key = 0; key < 3; ++key) {
      unsigned long long sum = 0;
      if (bpf_map__lookup_elem(skel->maps.floor_counts, &key, sizeof key, v.data(),
                               v.size() * sizeof(v[0]), 0) == 0)
        for (auto x : v) sum += x;
      std::printf("%s %llu\n", names[key], sum);
    }
  }
  return 0;
}
