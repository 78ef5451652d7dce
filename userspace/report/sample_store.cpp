#include "report/sample_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <queue>

#include "core/file_io.h"

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

}  // namespace

void SampleStore::set_memory_budget(uint64_t bytes) {
  g_budget = bytes;
}
uint64_t SampleStore::memory_budget() {
  return g_budget;
}

void SampleBounds::add(const Sample* p, size_t n) {
  uint64_t c = count, rd = reads, rb = read_bytes, wb = write_bytes, pb = pushed_back;
  uint64_t tmin = t_min, tmax = t_max, imin = issue_min, imax = issue_max, cmax = complete_max;
  uint64_t emax = end_max, ln = latency_n, lmin = latency_min, lmax = latency_max;
  int64_t dmin = delay_min, dmax = delay_max;
  bool ts = t_sorted, is = issue_sorted, cs = complete_sorted;
  for (size_t i = 0; i < n; ++i) {
    const Sample& s = p[i];
    uint64_t issue = s.issue_ns(), done = issue + s.latency_ns, bytes = s.bytes();
    // The maxima start at 0: the first sample never breaks an order.
    ts &= s.t_ns >= tmax;
    is &= issue >= imax;
    cs &= done >= cmax;
    bool w = s.write();
    rd += !w;
    rb += w ? 0 : bytes;
    wb += w ? bytes : 0;
    pb += (s.flags & kSamplePushedBack) != 0;
    tmin = std::min(tmin, s.t_ns);
    tmax = std::max(tmax, s.t_ns);
    imin = std::min(imin, issue);
    imax = std::max(imax, issue);
    cmax = std::max(cmax, done);
    emax = std::max(emax, s.end_sector());
    if (s.has_latency()) {
      ++ln;
      lmin = std::min(lmin, s.latency_ns);
      lmax = std::max(lmax, s.latency_ns);
    }
    dmin = std::min(dmin, s.delay_ns);
    dmax = std::max(dmax, s.delay_ns);
  }
  count = c + n;
  reads = rd;
  read_bytes = rb;
  write_bytes = wb;
  pushed_back = pb;
  t_min = tmin;
  t_max = tmax;
  issue_min = imin;
  issue_max = imax;
  complete_max = cmax;
  end_max = emax;
  latency_n = ln;
  latency_min = lmin;
  latency_max = lmax;
  delay_min = dmin;
  delay_max = dmax;
  t_sorted = ts;
  issue_sorted = is;
  complete_sorted = cs;
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
  n_ = std::exchange(o.n_, 0);
  track_bounds_ = o.track_bounds_;
  accounted_ = std::exchange(o.accounted_, 0);
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

void SampleStore::account_pending() const {
  if (accounted_ == n_ || !track_bounds_) return;
  uint64_t k = n_ - accounted_;  // the last k samples: in the last memory chunk or the tail
  const std::vector<Sample>& c = file_ ? tail_ : mem_.back();
  bounds_.add(c.data() + (c.size() - k), k);
  accounted_ = n_;
}

void SampleStore::adopt_bounds(const SampleBounds& b) {
  bounds_ = b;
  accounted_ = n_;
}

void SampleStore::push_back(const Sample& s) {
  ++n_;
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
      if (mem_.back().size() == kChunk) account_pending();
      return;
    }
  }
  tail_.push_back(s);
  if (tail_.size() == kChunk) flush_tail();
}

void SampleStore::flush_tail() {
  if (tail_.empty() || failed_) return;
  account_pending();
  if (auto w = pwrite_all(file_.get(), tail_.data(), tail_.size() * sizeof(Sample),
                          file_samples_ * sizeof(Sample), "the report's request store");
      !w) {
    fail(std::string("cannot write the report's request store in the temporary directory: ") +
         std::strerror(w.error().sys_errno ? w.error().sys_errno : EIO) +
         " (set TMPDIR to a file system with room)");
    return;
  }
  file_samples_ += tail_.size();
  tail_.clear();
}

void SampleStore::seal() {
  if (!file_) return;
  flush_tail();
  std::vector<Sample>().swap(tail_);
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
          if (auto r = pread_all(s_->file_.get(), buf_.data(), n * sizeof(Sample),
                                 at_ * sizeof(Sample), "the report's request store");
              !r) {
            s_->fail("cannot read the report's request store back from the temporary directory: " +
                     std::string(std::strerror(r.error().sys_errno ? r.error().sys_errno : EIO)));
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
  auto account = [&b](const Sample* p, size_t n) { b.add(p, n); };
  for (auto& c : mem_) {
    fn(c.data(), c.size());
    account(c.data(), c.size());
  }
  std::vector<Sample> buf;
  for (uint64_t at = 0; at < file_samples_;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, file_samples_ - at));
    buf.resize(n);
    uint64_t off = at * sizeof(Sample);
    if (auto r = pread_all(file_.get(), buf.data(), n * sizeof(Sample), off,
                           "the report's request store");
        !r)
      return r.error().context("cannot read the report's request store back");
    fn(buf.data(), n);
    account(buf.data(), n);
    if (auto w = pwrite_all(file_.get(), buf.data(), n * sizeof(Sample), off,
                            "the report's request store");
        !w)
      return w.error().context("cannot rewrite the report's request store");
    at += n;
  }
  fn(tail_.data(), tail_.size());
  account(tail_.data(), tail_.size());
  bounds_ = b;
  accounted_ = n_;
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

}  // namespace blkrr::report
