// I/O buffers aligned for O_DIRECT. Without verification every read shares
// one buffer and every write another (their content does not matter), which
// io_uring can use as registered (fixed) buffers; with verification each
// operation in flight gets its own.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "core/result.h"
#include "replay/engine.h"

namespace blkrr::replay {

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  static Result<AlignedBuffer> make(size_t bytes, size_t align = 4096);
  uint8_t* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  std::unique_ptr<uint8_t, FreeDeleter> p_;
  size_t n_ = 0;
};

struct IoBuffer {
  uint8_t* data = nullptr;
  int fixed_index = -1;  // registered buffer index, -1 if none
};

class BufferPool {
 public:
  // `per_op`: a private buffer per operation id (verification).
  static Result<BufferPool> create(bool per_op, size_t shared_bytes = 1u << 20);

  // A buffer of at least `bytes` for operation `id`. Buffers that had to be
  // replaced by larger ones stay allocated until the pool goes, because the
  // kernel may still be using them.
  Result<IoBuffer> get(uint64_t id, IoKind kind, uint32_t bytes);
  // The shared buffers, to register with io_uring (indices 0 = read, 1 = write).
  std::vector<std::pair<void*, size_t>> fixed_buffers() const;

 private:
  bool per_op_ = false;
  AlignedBuffer read_, write_;
  bool read_registered_ = true, write_registered_ = true;  // still the registered ones
  std::vector<AlignedBuffer> per_id_;
  std::vector<AlignedBuffer> retired_;
};

// Fills `p` with pseudo-random bytes, so devices cannot compress or
// deduplicate the written data.
void fill_pseudo_random(uint8_t* p, size_t n, uint64_t seed);

}  // namespace blkrr::replay
