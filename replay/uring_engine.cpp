// io_uring engine: one ring owned by the replay thread. Submissions go to the
// kernel immediately (one io_uring_enter per batch); completions are reaped
// without blocking while the replayer spins, or with a timeout while it sleeps.
#include <liburing.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "replay/engine.h"

namespace blkrr::replay {

namespace {

constexpr unsigned kCoopFlags =
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
constexpr unsigned kDeferFlags = kCoopFlags | IORING_SETUP_DEFER_TASKRUN;
// user_data of the warm-up operations (never a request id).
constexpr uint64_t kWarmUpId = ~uint64_t{0};

class UringEngine final : public Engine {
 public:
  UringEngine(Clock& clock, bool fake) : clock_(clock), fake_(fake) {}
  ~UringEngine() override {
    if (inited_) {
      // Drain what is still in flight so buffers outlive the kernel's use.
      while (in_flight_ > 0) {
        io_uring_cqe* cqe = nullptr;
        if (io_uring_wait_cqe(&ring_, &cqe) < 0) break;
        io_uring_cqe_seen(&ring_, cqe);
        --in_flight_;
      }
      io_uring_queue_exit(&ring_);
    }
  }

  Status init(const EngineOptions& o) {
    unsigned entries = 8;
    while (entries < o.queue_depth + 8 && entries < 32768) entries <<= 1;
    // The ring is only used by the replay thread: completions are posted
    // when it enters the kernel (or asks for them) instead of interrupting it
    // while it spins towards a deadline, and in batches. Older kernels
    // without these flags get a plain ring.
    int rc = -EINVAL;
    for (unsigned flags : {kDeferFlags, kCoopFlags, 0u}) {
      rc = io_uring_queue_init(entries, &ring_, flags);
      if (rc != -EINVAL) break;
    }
    if (rc < 0)
      return Error::system("io_uring_queue_init(" + std::to_string(entries) + ") failed", -rc)
          .append(" (is io_uring disabled? try --engine threads)");
    inited_ = true;
    io_uring_register_ring_fd(&ring_);  // no fd lookup per io_uring_enter (when supported)
    fd_ = o.fd;
    if (fd_ >= 0 && io_uring_register_files(&ring_, &fd_, 1) == 0) fixed_file_ = true;
    if (!o.fixed_buffers.empty()) {
      std::vector<iovec> iov;
      for (auto [p, n] : o.fixed_buffers) iov.push_back(iovec{p, n});
      // Registration can fail (RLIMIT_MEMLOCK); plain buffers then.
      if (io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size())) == 0)
        fixed_bufs_ = true;
    }
    return warm_up();
  }

  // The first submission on a ring pays one-time costs (the task's io_uring
  // context, the file's first read path): ~30 us here, which made the first
  // request of every replay late and shifted every later issue error by as
  // much. Pay them before the clock starts: a no-op and a zero-length read,
  // which returns without creating a block-layer request.
  Status warm_up() {
    if (fd_ < 0) return {};
    static char dummy[1];
    for (int i = 0; i < 2; ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) return {};
      if (i == 0) {
        io_uring_prep_nop(sqe);
      } else {
        io_uring_prep_read(sqe, fixed_file_ ? 0 : fd_, dummy, 0, 0);
        if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
      }
      io_uring_sqe_set_data64(sqe, kWarmUpId);
    }
    int rc = io_uring_submit_and_wait(&ring_, 2);
    if (rc < 0) return Error::system("io_uring warm-up failed", -rc);
    for (int i = 0; i < 2; ++i) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) < 0) break;
      io_uring_cqe_seen(&ring_, cqe);
    }
    return {};
  }

  std::string_view name() const override { return "uring"; }

  Status submit(std::span<const IoOp> ops) override {
    if (ops.empty()) return {};
    for (const IoOp& op : ops) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) {
        BLKRR_TRY(enter());
        sqe = io_uring_get_sqe(&ring_);
        if (sqe == nullptr) return Error(ErrorKind::kInternal, "io_uring submission queue full");
      }
      const int fd = fixed_file_ ? 0 : fd_;
      if (fake_) {
        io_uring_prep_nop(sqe);
      } else if (op.kind == IoKind::kFlush) {
        io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
      } else if (fixed_bufs_ && op.buf_index >= 0) {
        if (op.kind == IoKind::kRead)
          io_uring_prep_read_fixed(sqe, fd, op.buf, op.bytes, op.offset, op.buf_index);
        else
          io_uring_prep_write_fixed(sqe, fd, op.buf, op.bytes, op.offset, op.buf_index);
      } else if (op.kind == IoKind::kRead) {
        io_uring_prep_read(sqe, fd, op.buf, op.bytes, op.offset);
      } else {
        io_uring_prep_write(sqe, fd, op.buf, op.bytes, op.offset);
      }
      if (fixed_file_ && !fake_) sqe->flags |= IOSQE_FIXED_FILE;
      io_uring_sqe_set_data64(sqe, op.id);
      if (op.id >= slots_.size()) slots_.resize(op.id + 64);
      slots_[op.id].bytes = op.bytes;
      ++in_flight_;
    }
    const uint64_t now = clock_.now_ns();
    for (const IoOp& op : ops) slots_[op.id].submit_ns = now;
    return enter();
  }

  Status poll(std::vector<IoCompletion>& out) override {
    io_uring_cqe* cqes[64];
    for (;;) {
      unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, 64);
      if (n == 0) return {};
      const uint64_t now = clock_.now_ns();
      for (unsigned i = 0; i < n; ++i) {
        uint64_t id = io_uring_cqe_get_data64(cqes[i]);
        int32_t res = cqes[i]->res;
        uint64_t sub = now;
        if (id < slots_.size()) {
          sub = slots_[id].submit_ns;
          if (fake_ && res == 0)
            res = static_cast<int32_t>(slots_[id].bytes);  // a NOP "did" it all
        }
        out.push_back(IoCompletion{id, res, sub, now});
      }
      io_uring_cq_advance(&ring_, n);
      in_flight_ -= n;
      if (n < 64) return {};
    }
  }

  Status wait(std::vector<IoCompletion>& out, uint64_t until_ns) override {
    size_t before = out.size();
    BLKRR_TRY(poll(out));
    if (out.size() > before || in_flight_ == 0) {
      if (out.size() == before) clock_.sleep_until(until_ns);
      return {};
    }
    uint64_t now = clock_.now_ns();
    if (until_ns <= now) return {};
    uint64_t d = until_ns - now;
    __kernel_timespec ts{};
    ts.tv_sec = static_cast<int64_t>(d / 1'000'000'000ull);
    ts.tv_nsec = static_cast<long long>(d % 1'000'000'000ull);
    io_uring_cqe* cqe = nullptr;
    int rc = io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN)
      return Error::system("waiting for io_uring completions failed", -rc);
    return poll(out);
  }

  uint32_t in_flight() const override { return in_flight_; }

 private:
  Status enter() {
    for (;;) {
      int rc = io_uring_submit(&ring_);
      if (rc >= 0) return {};
      if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) continue;
      return Error::system("io_uring_submit failed", -rc);
    }
  }

  Clock& clock_;
  bool fake_;
  io_uring ring_{};
  bool inited_ = false;
  bool fixed_file_ = false;
  bool fixed_bufs_ = false;
  int fd_ = -1;
  uint32_t in_flight_ = 0;
  struct Slot {
    uint64_t submit_ns = 0;
    uint32_t bytes = 0;
  };
  std::vector<Slot> slots_;  // by operation id
};

}  // namespace

Result<std::unique_ptr<Engine>> make_uring_engine(Clock& clock, const EngineOptions& o) {
  auto e = std::make_unique<UringEngine>(clock, o.fake_io);
  BLKRR_TRY(e->init(o));
  return std::unique_ptr<Engine>(std::move(e));
}

}  // namespace blkrr::replay
