// Threads engine: N workers doing blocking pread/pwrite, the way blkreplay
// models application parallelism. The replay thread hands operations over
// through a queue; each worker stamps the time right before its system call.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "replay/engine.h"

namespace blkrr::replay {

namespace {

class ThreadsEngine final : public Engine {
 public:
  ThreadsEngine(Clock& clock, const EngineOptions& o) : clock_(clock), fd_(o.fd), fake_(o.fake_io) {
    workers_.reserve(o.threads);
    for (uint32_t i = 0; i < o.threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadsEngine() override {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  std::string_view name() const override { return "threads"; }

  Status submit(std::span<const IoOp> ops) override {
    if (ops.empty()) return {};
    {
      std::lock_guard<std::mutex> g(m_);
      for (const IoOp& op : ops) queue_.push_back(op);
      in_flight_ += static_cast<uint32_t>(ops.size());
    }
    if (ops.size() == 1)
      work_cv_.notify_one();
    else
      work_cv_.notify_all();
    return {};
  }

  Status poll(std::vector<IoCompletion>& out) override {
    std::lock_guard<std::mutex> g(m_);
    take(out);
    return {};
  }

  Status wait(std::vector<IoCompletion>& out, uint64_t until_ns) override {
    std::unique_lock<std::mutex> l(m_);
    if (done_.empty()) {
      auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(until_ns));
      done_cv_.wait_until(l, deadline, [this] { return !done_.empty(); });
    }
    take(out);
    return {};
  }

  uint32_t in_flight() const override {
    std::lock_guard<std::mutex> g(m_);
    return in_flight_;
  }

 private:
  void take(std::vector<IoCompletion>& out) {
    in_flight_ -= static_cast<uint32_t>(done_.size());
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
  }

  int32_t execute(const IoOp& op) {
    if (fake_) return static_cast<int32_t>(op.bytes);
    switch (op.kind) {
      case IoKind::kFlush:
        return fdatasync(fd_) == 0 ? 0 : -errno;
      case IoKind::kRead: {
        ssize_t n = pread(fd_, op.buf, op.bytes, static_cast<off_t>(op.offset));
        return n < 0 ? -errno : static_cast<int32_t>(n);
      }
      case IoKind::kWrite: {
        ssize_t n = pwrite(fd_, op.buf, op.bytes, static_cast<off_t>(op.offset));
        return n < 0 ? -errno : static_cast<int32_t>(n);
      }
    }
    return -EINVAL;
  }

  void work() {
    for (;;) {
      IoOp op;
      {
        std::unique_lock<std::mutex> l(m_);
        work_cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping
        op = queue_.front();
        queue_.pop_front();
      }
      const uint64_t t0 = clock_.now_ns();
      const int32_t res = execute(op);
      const uint64_t t1 = clock_.now_ns();
      {
        std::lock_guard<std::mutex> g(m_);
        done_.push_back(IoCompletion{op.id, res, t0, t1});
      }
      done_cv_.notify_one();
    }
  }

  Clock& clock_;
  int fd_;
  bool fake_;
  mutable std::mutex m_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<IoOp> queue_;
  std::vector<IoCompletion> done_;
  uint32_t in_flight_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

class DryEngine final : public Engine {
 public:
  explicit DryEngine(Clock& clock) : clock_(clock) {}
  std::string_view name() const override { return "dry-run"; }
  Status submit(std::span<const IoOp> ops) override {
    const uint64_t now = clock_.now_ns();
    for (const IoOp& op : ops)
      done_.push_back(IoCompletion{op.id, static_cast<int32_t>(op.bytes), now, now});
    return {};
  }
  Status poll(std::vector<IoCompletion>& out) override {
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
    return {};
  }
  Status wait(std::vector<IoCompletion>& out, uint64_t until_ns) override {
    if (done_.empty()) clock_.sleep_until(until_ns);
    return poll(out);
  }
  uint32_t in_flight() const override { return static_cast<uint32_t>(done_.size()); }

 private:
  Clock& clock_;
  std::vector<IoCompletion> done_;
};

}  // namespace

Result<std::unique_ptr<Engine>> make_threads_engine(Clock& clock, const EngineOptions& o) {
  if (o.threads == 0 || o.threads > 4096)
    return Error(ErrorKind::kUsage,
                 "--threads must be between 1 and 4096, got " + std::to_string(o.threads));
  return std::unique_ptr<Engine>(std::make_unique<ThreadsEngine>(clock, o));
}

std::unique_ptr<Engine> make_dry_engine(Clock& clock) {
  return std::make_unique<DryEngine>(clock);
}

}  // namespace blkrr::replay
