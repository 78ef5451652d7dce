// I/O engines behind one interface. The replayer owns timing; an engine only
// starts operations and reports their completions with timestamps.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "replay/replay_clock.h"

namespace blkrr::replay {

enum class IoKind : uint8_t { kRead, kWrite, kFlush };

struct IoOp {
  uint64_t id = 0;  // chosen by the caller, returned in the completion
  IoKind kind = IoKind::kRead;
  uint64_t offset = 0;  // bytes
  uint32_t bytes = 0;
  void* buf = nullptr;
  int buf_index = -1;  // registered buffer index (io_uring fixed buffers), -1 = none
};

struct IoCompletion {
  uint64_t id = 0;
  int32_t result = 0;        // bytes transferred or -errno
  uint64_t submit_ns = 0;    // clock time the operation was handed to the kernel
  uint64_t complete_ns = 0;  // clock time its completion was seen
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  // Starts the operations now, in order. Never blocks on their completion.
  virtual Status submit(std::span<const IoOp> ops) = 0;
  // Appends completions that are already there; never blocks.
  virtual Status poll(std::vector<IoCompletion>& out) = 0;
  // Blocks until at least one completion is there or the clock reaches
  // `until_ns`, then appends what is there.
  virtual Status wait(std::vector<IoCompletion>& out, uint64_t until_ns) = 0;
  virtual uint32_t in_flight() const = 0;
};

struct EngineOptions {
  int fd = -1;
  uint32_t queue_depth = 128;
  uint32_t threads = 16;  // threads engine
  bool fake_io = false;   // go through the engine but do no read/write (NOP / no syscall)
  // Buffers to register with io_uring (fixed buffers), referenced by IoOp::buf_index.
  std::vector<std::pair<void*, size_t>> fixed_buffers;
};

Result<std::unique_ptr<Engine>> make_uring_engine(Clock& clock, const EngineOptions& o);
Result<std::unique_ptr<Engine>> make_threads_engine(Clock& clock, const EngineOptions& o);
// --dry-run: every operation completes at the instant it is submitted, with
// no system call at all.
std::unique_ptr<Engine> make_dry_engine(Clock& clock);

}  // namespace blkrr::replay
