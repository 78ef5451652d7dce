#include "report/sample_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <queue>

#include "core/io_guard.h"

namespace blkrr::report {

namespace {

constexpr uint64_t kChunkBytes = SampleStore::kChunk * sizeof(Sample);
std::atomic<uint64_t> g_memory_used{0};  // bytes of in-memory chunks, all stores
std::atomic<uint64_t> g_budget{SampleStore::kMemoryBudgetBytes};

bool take_budget() {
  uint64_t used = g_memory_used.load();
  while (used + kChunkBytes <= g_budget.load())
    if (g_memory_used.compare_exchange_weak(used, used + kChunkBytes)) return true;
  return false;
}

bool pwrite_all(int fd, const void* p, size_t n, uint64_t off) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, c, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

bool pread_all(int fd, void* p, size_t n, uint64_t off) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::pread(fd, c, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

}  // namespace

void SampleStore::set_memory_budget(uint64_t bytes) {
  g_budget = bytes;
}
uint64_t SampleStore::memory_budget() {
  return g_budget;
}

void SampleBounds::add(const Sample& s) {
  uint64_t issue = s.issue_ns(), complete = s.complete_ns();
  if (count > 0) {
    t_sorted = t_sorted && s.t_ns >= t_max;
    issue_sorted = issue_sorted && issue >= issue_max;
    complete_sorted = complete_sorted && complete >= complete_max;
  }
  ++count;
  if (s.write())
    write_bytes += s.bytes();
  else {
    ++reads;
    read_bytes += s.bytes();
  }
  pushed_back += (s.flags & kSamplePushedBack) != 0;
  t_min = std::min(t_min, s.t_ns);
  t_max = std::max(t_max, s.t_ns);
  issue_min = std::min(issue_min, issue);
  issue_max = std::max(issue_max, issue);
  complete_max = std::max(complete_max, complete);
  end_max = std::max(end_max, s.end_sector());
  if (s.has_latency()) {
    ++latency_n;
    latency_min = std::min(latency_min, s.latency_ns);
    latency_max = std::max(latency_max, s.latency_ns);
  }
  delay_min = std::min(delay_min, s.delay_ns);
  delay_max = count == 1 ? s.delay_ns : std::max(delay_max, s.delay_ns);
}

SampleStore::SampleStore(SampleStore&& o) noexcept {
  *this = std::move(o);
}

SampleStore& SampleStore::operator=(SampleStore&& o) noexcept {
  if (this == &o) return *this;
  release_budget();
  mem_ = std::move(o.mem_);
  mem_samples_ = std::exchange(o.mem_samples_, 0);
  file_ = std::move(o.file_);
  file_samples_ = std::exchange(o.file_samples_, 0);
  tail_ = std::move(o.tail_);
  bounds_ = std::exchange(o.bounds_, SampleBounds{});
  failed_ = std::exchange(o.failed_, false);
  error_ = std::move(o.error_);
  o.mem_.clear();
  o.tail_.clear();
  return *this;
}

SampleStore::~SampleStore() {
  release_budget();
}

void SampleStore::release_budget() {
  g_memory_used -= mem_.size() * kChunkBytes;
  mem_.clear();
  mem_samples_ = 0;
}

void SampleStore::fail(const std::string& what) const {
  if (failed_) return;
  failed_ = true;
  error_ = what;
}

void SampleStore::push_back(const Sample& s) {
  bounds_.add(s);
  if (!file_) {
    if (mem_.empty() || mem_.back().size() == kChunk) {
      if (take_budget()) {
        mem_.emplace_back().reserve(kChunk);
      } else {
        auto f = open_scratch_file("the report's request store");
        if (!f) {
          fail(f.error().message);
          return;
        }
        file_ = std::move(*f);
        tail_.reserve(kChunk);
      }
    }
    if (!file_) {
      mem_.back().push_back(s);
      ++mem_samples_;
      return;
    }
  }
  tail_.push_back(s);
  if (tail_.size() == kChunk) flush_tail();
}

void SampleStore::flush_tail() {
  if (tail_.empty() || failed_) return;
  if (!pwrite_all(file_.get(), tail_.data(), tail_.size() * sizeof(Sample),
                  file_samples_ * sizeof(Sample))) {
    fail(std::string("cannot write the report's request store in the temporary directory: ") +
         std::strerror(errno) + " (set TMPDIR to a file system with room)");
    return;
  }
  file_samples_ += tail_.size();
  tail_.clear();
}

Status SampleStore::status() const {
  if (failed_) return Error(ErrorKind::kIo, error_);
  return {};
}

bool SampleStore::Reader::next(const Sample*& p, size_t& n) {
  for (;;) {
    if (s_->failed_) return false;
    switch (part_) {
      case 0:
        if (at_ < s_->mem_.size()) {
          const auto& c = s_->mem_[at_++];
          p = c.data();
          n = c.size();
          if (n) return true;
          continue;
        }
        part_ = 1;
        at_ = 0;
        continue;
      case 1:
        if (at_ < s_->file_samples_) {
          n = static_cast<size_t>(std::min<uint64_t>(chunk_, s_->file_samples_ - at_));
          buf_.resize(n);
          if (!pread_all(s_->file_.get(), buf_.data(), n * sizeof(Sample), at_ * sizeof(Sample))) {
            s_->fail("cannot read the report's request store back from the temporary directory: " +
                     std::string(std::strerror(errno ? errno : EIO)));
            return false;
          }
          at_ += n;
          p = buf_.data();
          return true;
        }
        part_ = 2;
        continue;
      case 2:
        part_ = 3;
        p = s_->tail_.data();
        n = s_->tail_.size();
        if (n) return true;
        continue;
      default:
        return false;
    }
  }
}

Status SampleStore::rewrite_chunks(const std::function<void(Sample*, size_t)>& fn) {
  BLKRR_TRY(status());
  SampleBounds b;
  auto account = [&b](const Sample* p, size_t n) {
    for (size_t i = 0; i < n; ++i) b.add(p[i]);
  };
  for (auto& c : mem_) {
    fn(c.data(), c.size());
    account(c.data(), c.size());
  }
  std::vector<Sample> buf;
  for (uint64_t at = 0; at < file_samples_;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, file_samples_ - at));
    buf.resize(n);
    uint64_t off = at * sizeof(Sample);
    if (!pread_all(file_.get(), buf.data(), n * sizeof(Sample), off))
      return Error(ErrorKind::kIo, "cannot read the report's request store back");
    fn(buf.data(), n);
    account(buf.data(), n);
    if (!pwrite_all(file_.get(), buf.data(), n * sizeof(Sample), off))
      return Error(ErrorKind::kIo, "cannot rewrite the report's request store: " +
                                       std::string(std::strerror(errno)));
    at += n;
  }
  fn(tail_.data(), tail_.size());
  account(tail_.data(), tail_.size());
  bounds_ = b;
  return {};
}

Result<std::vector<Sample>> SampleStore::to_vector() const {
  std::vector<Sample> v;
  v.reserve(size());
  for_each_chunk([&v](const Sample* p, size_t n) { v.insert(v.end(), p, p + n); });
  BLKRR_TRY(status());
  return v;
}

SampleStore SampleStore::from(const std::vector<Sample>& v) {
  SampleStore s;
  for (const auto& x : v) s.push_back(x);
  return s;
}

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
  uint64_t idx;  // position in the run: equal keys keep their order
  bool operator<(const Keyed& o) const { return key != o.key ? key < o.key : idx < o.idx; }
};

// Sorts `run` (samples `first`.. of the input) by key into `out`.
void sort_run(const std::vector<Sample>& run, SortKey key, SampleStore& out) {
  std::vector<Keyed> k(run.size());
  for (size_t i = 0; i < run.size(); ++i) k[i] = {sort_key(run[i], key), i};
  std::sort(k.begin(), k.end());
  for (const auto& x : k) out.push_back(run[x.idx]);
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
  SampleStore out;
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

Result<SampleStore> sorted_copy(const SampleStore& in, SortKey key, size_t run) {
  run = std::max<size_t>(run, 1);
  if (!in.spilled() && in.size() <= run) {  // no copy of the samples: sort their keys
    BLKRR_TRY(in.status());
    std::vector<Keyed> k(static_cast<size_t>(in.size()));
    for (uint64_t i = 0; i < in.size(); ++i) k[i] = {sort_key(in.memory_at(i), key), i};
    std::sort(k.begin(), k.end());
    SampleStore out;
    for (const auto& x : k) out.push_back(in.memory_at(x.idx));
    BLKRR_TRY(out.status());
    return out;
  }
  std::vector<SampleStore> runs;
  std::vector<Sample> buf;
  buf.reserve(static_cast<size_t>(std::min<uint64_t>(run, in.size())));
  auto close_run = [&] {
    runs.emplace_back();
    sort_run(buf, key, runs.back());
    buf.clear();
  };
  in.for_each_chunk([&](const Sample* p, size_t n) {
    while (n > 0) {
      size_t take = std::min(n, run - buf.size());
      buf.insert(buf.end(), p, p + take);
      p += take;
      n -= take;
      if (buf.size() == run) close_run();
    }
  });
  BLKRR_TRY(in.status());
  if (!buf.empty()) close_run();
  std::vector<Sample>().swap(buf);
  if (runs.empty()) return SampleStore();
  for (const auto& r : runs) BLKRR_TRY(r.status());
  if (runs.size() == 1) return std::move(runs[0]);
  return merge_runs(runs, key);
}

}  // namespace blkrr::report
