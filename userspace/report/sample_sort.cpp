// The external merge sort of sample_store.h: runs sorted in memory (a radix
// sort of their keys), spilled, merged with a heap.
#include <algorithm>
#include <atomic>
#include <queue>
#include <utility>

#include "report/sample_store.h"

namespace blkrr::report {

namespace {
std::atomic<size_t> g_sort_run{kSortRun};
}  // namespace

uint64_t sort_key(const Sample& s, SortKey key) {
  switch (key) {
    case SortKey::kSetPoint:
      return s.t_ns;
    case SortKey::kSector:
      return s.sector;
    case SortKey::kIssue:
      return s.issue_ns();
    case SortKey::kCompletion:
      return s.complete_ns();
    case SortKey::kLatency:
      return s.latency_ns;
  }
  return 0;
}

namespace {

struct Keyed {
  uint64_t key;
  uint64_t idx;  // position in the run
};

// Stable LSD radix sort by key, one pass per byte in which the keys differ.
void radix_sort(std::vector<Keyed>& k) {
  if (k.size() < 2) return;
  uint64_t diff = 0;
  for (const auto& x : k) diff |= x.key ^ k[0].key;
  std::vector<Keyed> tmp(k.size());
  for (int shift = 0; shift < 64; shift += 8) {
    if (((diff >> shift) & 0xff) == 0) continue;
    size_t pos[256] = {};
    for (const auto& x : k) ++pos[(x.key >> shift) & 0xff];
    size_t sum = 0;
    for (auto& p : pos) sum += std::exchange(p, sum);
    for (const auto& x : k) tmp[pos[(x.key >> shift) & 0xff]++] = x;
    k.swap(tmp);
  }
}

// Sorts `run` by key into a new store (a run of the external sort).
SampleStore sort_run(const std::vector<Sample>& run, SortKey key) {
  std::vector<Keyed> k(run.size());
  for (size_t i = 0; i < run.size(); ++i) k[i] = {sort_key(run[i], key), i};
  radix_sort(k);
  SampleStore out{SampleStore::NoBounds{}};
  for (const auto& x : k) out.push_back(run[x.idx]);
  out.seal();
  return out;
}

Result<SampleStore> merge_runs(std::vector<SampleStore>& runs, SortKey key) {
  struct Cursor {
    SampleStore::Reader reader;
    const Sample* p = nullptr;
    size_t n = 0, i = 0;
  };
  std::vector<Cursor> cur;
  cur.reserve(runs.size());
  // Small chunks: one per run is held at a time.
  for (auto& r : runs) cur.push_back({SampleStore::Reader(r, 2048)});
  using Head = std::pair<uint64_t, size_t>;  // key, run: ties go to the earlier run
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  auto refill = [&](size_t r) {
    Cursor& c = cur[r];
    if (c.i < c.n) return true;
    c.i = 0;
    return c.reader.next(c.p, c.n);
  };
  for (size_t r = 0; r < cur.size(); ++r)
    if (refill(r)) heap.push({sort_key(cur[r].p[0], key), r});
  SampleStore out{SampleStore::NoBounds{}};
  while (!heap.empty()) {
    size_t r = heap.top().second;
    heap.pop();
    Cursor& c = cur[r];
    out.push_back(c.p[c.i++]);
    if (refill(r)) heap.push({sort_key(c.p[c.i], key), r});
  }
  for (const auto& run : runs) BLKRR_TRY(run.status());
  BLKRR_TRY(out.status());
  return out;
}

}  // namespace

namespace {

// A sorted copy holds the same samples: its bounds are the input's, in its order.
SampleBounds sorted_bounds(SampleBounds b, SortKey key) {
  b.t_sorted = key == SortKey::kSetPoint;
  b.issue_sorted = key == SortKey::kIssue;
  b.complete_sorted = key == SortKey::kCompletion;
  return b;
}

}  // namespace

void set_default_sort_run(size_t run) {
  g_sort_run = run ? run : kSortRun;
}

Result<SampleStore> sorted_copy(const SampleStore& in, SortKey key, size_t run) {
  run = run ? run : g_sort_run.load();
  BLKRR_TRY(in.status());
  if (!in.spilled()) {
    // All in memory already: sort the keys, no copy of the samples.
    std::vector<Keyed> k(static_cast<size_t>(in.size()));
    for (uint64_t i = 0; i < in.size(); ++i) k[i] = {sort_key(in.memory_at(i), key), i};
    radix_sort(k);
    SampleStore out{SampleStore::NoBounds{}};
    for (const auto& x : k) out.push_back(in.memory_at(x.idx));
    BLKRR_TRY(out.status());
    out.adopt_bounds(sorted_bounds(in.bounds(), key));
    return out;
  }
  std::vector<SampleStore> runs;
  std::vector<Sample> buf;
  buf.reserve(static_cast<size_t>(std::min<uint64_t>(run, in.size())));
  in.for_each_chunk([&](const Sample* p, size_t n) {
    while (n > 0) {
      size_t take = std::min(n, run - buf.size());
      buf.insert(buf.end(), p, p + take);
      p += take;
      n -= take;
      if (buf.size() == run) {
        runs.push_back(sort_run(buf, key));
        buf.clear();
      }
    }
  });
  BLKRR_TRY(in.status());
  if (!buf.empty()) runs.push_back(sort_run(buf, key));
  std::vector<Sample>().swap(buf);
  for (const auto& r : runs) BLKRR_TRY(r.status());
  SampleStore out{SampleStore::NoBounds{}};
  if (runs.size() == 1) {
    out = std::move(runs[0]);
  } else if (!runs.empty()) {
    auto merged = merge_runs(runs, key);
    if (!merged) return merged.error();
    out = std::move(*merged);
  }
  out.adopt_bounds(sorted_bounds(in.bounds(), key));
  return out;
}

}  // namespace blkrr::report
