// Every request of a report input as 40-byte Samples in bounded memory: the
// first samples stay in memory (a budget shared by all stores of the
// process, kMemoryBudgetBytes), the rest go to an unlinked temporary file in
// $TMPDIR (else /var/tmp). Analyses read a store front to back in chunks;
// copies sorted by set point, sector, issue or completion time come from an
// external merge sort (sorted_copy), so an analysis that needs an order
// reads a disk-backed pass instead of holding every request.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/fd.h"
#include "core/result.h"
#include "report/sample.h"

namespace blkrr::report {

// What a store knows about its samples without another pass (kept up to
// date by push_back and rewrite).
struct SampleBounds {
  uint64_t count = 0, reads = 0, read_bytes = 0, write_bytes = 0, pushed_back = 0;
  uint64_t t_min = std::numeric_limits<uint64_t>::max(), t_max = 0;
  uint64_t issue_min = std::numeric_limits<uint64_t>::max(), issue_max = 0;
  uint64_t complete_max = 0;  // issue + latency (the issue where none is known)
  uint64_t end_max = 0;       // highest end sector
  uint64_t latency_n = 0;     // samples with a latency
  uint64_t latency_min = std::numeric_limits<uint64_t>::max(), latency_max = 0;
  int64_t delay_min = std::numeric_limits<int64_t>::max();
  int64_t delay_max = std::numeric_limits<int64_t>::min();
  // Whether set points, issue and completion times never decrease in store order.
  bool t_sorted = true, issue_sorted = true, complete_sorted = true;

  void add(const Sample* p, size_t n);
  uint64_t writes() const { return count - reads; }
  uint64_t empty_t_max() const { return count ? t_max : 0; }  // 0 when empty
};

class SampleStore {
 public:
  // In-memory samples of all stores together; past it stores spill to disk.
  static constexpr uint64_t kMemoryBudgetBytes = 64ull << 20;
  // The budget of stores created afterwards (tests: force spilling).
  static void set_memory_budget(uint64_t bytes);
  static uint64_t memory_budget();
  static constexpr size_t kChunk = 16384;  // samples per file read/write

  SampleStore() = default;
  // A store that does not compute its bounds (sorted copies take their input's).
  struct NoBounds {};
  explicit SampleStore(NoBounds) : track_bounds_(false) {}
  SampleStore(SampleStore&& o) noexcept;
  SampleStore& operator=(SampleStore&& o) noexcept;
  ~SampleStore();

  // A write failure (disk full) is kept and returned by every later read.
  void push_back(const Sample& s);
  // Writes the samples waiting for the file and frees their buffer (a store
  // that is complete: the runs of a sort keep no 640 KiB buffer each).
  void seal();
  uint64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const SampleBounds& bounds() const {
    account_pending();
    return bounds_;
  }
  // Takes `b` as the bounds (a sorted copy of a store with these bounds).
  void adopt_bounds(const SampleBounds& b);
  bool spilled() const { return file_.get() >= 0; }
  uint64_t memory_samples() const { return mem_samples_; }
  Status status() const;
  // Sample i of the in-memory part (i < memory_samples()).
  const Sample& memory_at(uint64_t i) const { return mem_[i / kChunk][i % kChunk]; }

  // Reads the samples in order, chunk by chunk (a reader holds one chunk).
  // A read error ends the samples early and is kept in the store: check
  // status() after the passes (the report does before it writes its pages).
  class Reader {
   public:
    explicit Reader(const SampleStore& s, size_t chunk = kChunk) : s_(&s), chunk_(chunk) {}
    bool next(const Sample*& p, size_t& n);  // false at the end

   private:
    const SampleStore* s_;
    size_t chunk_;
    int part_ = 0;  // 0 memory, 1 file, 2 pending tail, 3 done
    uint64_t at_ = 0;
    std::vector<Sample> buf_;
  };
  template <class F>
  void for_each_chunk(F fn) const {
    Reader r(*this);
    const Sample* p = nullptr;
    size_t n = 0;
    while (r.next(p, n)) fn(p, n);
  }
  template <class F>
  void for_each(F fn) const {
    for_each_chunk([&fn](const Sample* p, size_t n) {
      for (size_t i = 0; i < n; ++i) fn(p[i]);
    });
  }
  // Applies fn(Sample&) to every sample in place (rebasing times after
  // reading) and recomputes the bounds.
  template <class F>
  Status rewrite(F fn) {
    return rewrite_chunks([&fn](Sample* p, size_t n) {
      for (size_t i = 0; i < n; ++i) fn(p[i]);
    });
  }
  Status rewrite_chunks(const std::function<void(Sample*, size_t)>& fn);
  // The samples as a vector (tests and small inputs; memory grows with them).
  Result<std::vector<Sample>> to_vector() const;
  static SampleStore from(const std::vector<Sample>& v);

 private:
  void flush_tail();
  void fail(const std::string& what) const;
  // Bounds are accounted a chunk at a time (a tight loop), the rest on demand.
  void account_pending() const;
  void release_budget();

  std::vector<std::vector<Sample>> mem_;  // the first samples, in chunks of kChunk
  uint64_t mem_samples_ = 0;
  Fd file_;  // then these (file_samples_ of them)
  uint64_t file_samples_ = 0;
  std::vector<Sample> tail_;  // then these, not yet written to the file
  uint64_t n_ = 0;
  bool track_bounds_ = true;
  mutable SampleBounds bounds_;
  mutable uint64_t accounted_ = 0;  // samples in bounds_: the first ones
  mutable bool failed_ = false;     // a write or read error (the first is kept)
  mutable std::string error_;
};

// The store's samples ordered by key(sample) (uint64_t), equal keys in store
// order. Up to kSortRun samples are sorted in memory; more are sorted in runs
// of that size, each spilled, and merged.
enum class SortKey { kSetPoint, kSector, kIssue, kCompletion, kLatency };
constexpr size_t kSortRun = 1u << 19;  // 20 MiB of samples sorted at a time
// `run` 0: the default, kSortRun unless set_default_sort_run changed it (tests).
Result<SampleStore> sorted_copy(const SampleStore& in, SortKey key, size_t run = 0);
void set_default_sort_run(size_t run);
uint64_t sort_key(const Sample& s, SortKey key);

}  // namespace blkrr::report
