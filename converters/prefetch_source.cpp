#include "converters/prefetch_source.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace blkrr {

namespace {

class PrefetchSource final : public RequestSource {
 public:
  explicit PrefetchSource(std::unique_ptr<RequestSource> inner) : inner_(std::move(inner)) {
    info_ = inner_->info();
    th_ = std::thread([this] { run(); });
  }
  ~PrefetchSource() override {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    th_.join();
  }
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  Result<bool> next(Request& out) override {
    while (pos_ >= cur_.reqs.size()) {
      if (cur_.error) return *cur_.error;
      if (cur_.end) return false;
      take_batch();
    }
    out = cur_.reqs[pos_++];
    return true;
  }
  Counters counters() const override { return counters_; }

 private:
  struct Batch {
    std::vector<Request> reqs;
    Counters counters;  // the inner source's, after the batch's last request
    std::optional<Error> error;
    bool end = false;
  };

  // The reading thread: batches until the end, an error or stop.
  void run() {
    for (bool end = false; !end;) {
      Batch b = fill_batch();
      end = b.end;
      std::unique_lock<std::mutex> lk(m_);
      cv_.wait(lk, [&] { return stop_ || ready_.size() < kPrefetchBatches; });
      if (stop_) return;
      ready_.push_back(std::move(b));
      cv_.notify_all();
    }
  }

  Batch fill_batch() {
    Batch b;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (!spare_.empty()) {
        b.reqs = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    b.reqs.clear();
    b.reqs.reserve(kPrefetchBatch);
    Request r;
    while (b.reqs.size() < kPrefetchBatch) {
      auto got = inner_->next(r);
      if (!got) {
        b.error = got.error();
        b.end = true;
        break;
      }
      if (!*got) {
        b.end = true;
        break;
      }
      b.reqs.push_back(r);
    }
    b.counters = inner_->counters();
    return b;
  }

  void take_batch() {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [&] { return !ready_.empty(); });
    if (cur_.reqs.capacity() > 0) spare_.push_back(std::move(cur_.reqs));
    cur_ = std::move(ready_.front());
    ready_.pop_front();
    pos_ = 0;
    counters_ = cur_.counters;
    cv_.notify_all();
  }

  std::unique_ptr<RequestSource> inner_;  // used by the thread only
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Batch> ready_;
  std::vector<std::vector<Request>> spare_;
  bool stop_ = false;
  Batch cur_;  // the consumer's
  size_t pos_ = 0;
  Counters counters_;
  std::thread th_;
};

}  // namespace

std::unique_ptr<RequestSource> prefetch_source(std::unique_ptr<RequestSource> inner) {
  return std::make_unique<PrefetchSource>(std::move(inner));
}

}  // namespace blkrr
