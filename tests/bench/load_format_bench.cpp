// Google Benchmark of the load format's hot loops without compression:
// parsing and formatting data lines (plain files in /dev/shm).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <string>

#include "converters/load_format.h"

namespace blkrr {
namespace {

constexpr int kLines = 1000000;

std::string plain_load() {
  static std::string path;
  if (!path.empty()) return path;
  path = "/dev/shm/blkrr-bench-load-" + std::to_string(getpid()) + ".load";
  auto w = LoadWriter::create(path, LoadKind::kLoad, {"bench"});
  LoadRecord r;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < kLines; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r.start_ns += 1 + static_cast<int64_t>(x % 2000000);
    r.sector = x % 100000000;
    r.sectors = 8u << (x % 4);
    r.op = (x & 16) ? Op::kWrite : Op::kRead;
    (void)w->write(r);
  }
  (void)w->close();
  return path;
}

void BM_LoadRead(benchmark::State& state) {
  std::string path = plain_load();
  for (auto _ : state) {
    auto r = LoadReader::open(path);
    LoadRecord rec;
    int64_t n = 0;
    while (*r->next(rec)) ++n;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_LoadRead)->Unit(benchmark::kMillisecond);

void BM_LoadWrite(benchmark::State& state) {
  std::string out = "/dev/shm/blkrr-bench-out-" + std::to_string(getpid()) + ".load";
  LoadRecord r;
  r.sectors = 8;
  for (auto _ : state) {
    auto w = LoadWriter::create(out, LoadKind::kLoad, {});
    for (int i = 0; i < kLines; ++i) {
      r.start_ns += 1234567;
      r.sector += 4099;
      (void)w->write(r);
    }
    (void)w->close();
  }
  unlink(out.c_str());
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_LoadWrite)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace blkrr

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  unlink(blkrr::plain_load().c_str());
  return 0;
}
