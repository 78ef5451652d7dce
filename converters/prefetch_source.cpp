#include "converters/prefetch_source.h"

#include <optional>
#include <thread>
#include <vector>

#include "core/bounded_queue.h"

namespace blkrr {

namespace {

class PrefetchSource final : public RequestSource {
 public:
  explicit PrefetchSource(std::unique_ptr<RequestSource> inner) : inner_(std::move(inner)) {
    info_ = inner_->info();
    th_ = std::thread([this] { run(); });
  }
  ~PrefetchSource() override {
    ready_.stop();
    th_.join();
  }
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  Result<bool> next(Request& out) override {
    while (pos_ >= cur_.reqs.size()) {
      if (cur_.error) return *cur_.error;
      if (cur_.end) return false;
      BLKRR_TRY(take_batch());
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
      if (!ready_.push(std::move(b))) return;  // stopped
    }
  }

  Batch fill_batch() {
    Batch b;
    if (auto v = spare_.try_pop()) b.reqs = std::move(*v);
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

  Status take_batch() {
    auto b = ready_.pop();
    if (!b) return Error(ErrorKind::kInternal, "the reading thread was stopped");
    if (cur_.reqs.capacity() > 0) spare_.try_push(std::move(cur_.reqs));
    cur_ = std::move(*b);
    pos_ = 0;
    counters_ = cur_.counters;
    return {};
  }

  std::unique_ptr<RequestSource> inner_;  // used by the thread only
  BoundedQueue<Batch> ready_{kPrefetchBatches};
  BoundedQueue<std::vector<Request>> spare_{kPrefetchBatches + 2};  // vectors to reuse
  Batch cur_;                                                       // the consumer's
  size_t pos_ = 0;
  Counters counters_;
  std::thread th_;
};

}  // namespace

std::unique_ptr<RequestSource> prefetch_source(std::unique_ptr<RequestSource> inner) {
  return std::make_unique<PrefetchSource>(std::move(inner));
}

}  // namespace blkrr
