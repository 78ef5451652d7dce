#include "replay/buffers.h"

#include <cstring>
#include <string>

namespace blkrr::replay {

Result<AlignedBuffer> AlignedBuffer::make(size_t bytes, size_t align) {
  void* p = nullptr;
  if (int err = posix_memalign(&p, align, bytes); err != 0)
    return Error::system(
        "cannot allocate an aligned I/O buffer of " + std::to_string(bytes) + " bytes", err);
  std::memset(p, 0, bytes);
  AlignedBuffer b;
  b.p_.reset(static_cast<uint8_t*>(p));
  b.n_ = bytes;
  return b;
}

void fill_pseudo_random(uint8_t* p, size_t n, uint64_t seed) {
  uint64_t x = seed | 1;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(p + i, &x, 8);
  }
}

Result<BufferPool> BufferPool::create(bool per_op, size_t shared_bytes) {
  BufferPool b;
  b.per_op_ = per_op;
  if (!per_op) {
    auto r = AlignedBuffer::make(shared_bytes);
    if (!r) return r.error();
    auto w = AlignedBuffer::make(shared_bytes);
    if (!w) return w.error();
    fill_pseudo_random(w->data(), w->size(), 0x9e3779b97f4a7c15ull);
    b.read_ = std::move(*r);
    b.write_ = std::move(*w);
  }
  return b;
}

std::vector<std::pair<void*, size_t>> BufferPool::fixed_buffers() const {
  if (per_op_) return {};
  return {{read_.data(), read_.size()}, {write_.data(), write_.size()}};
}

Result<IoBuffer> BufferPool::get(uint64_t id, IoKind kind, uint32_t bytes) {
  if (per_op_) {
    if (id >= per_id_.size()) per_id_.resize(id + 1);
    AlignedBuffer& b = per_id_[id];
    if (b.size() < bytes) {
      size_t n = 4096;
      while (n < bytes) n <<= 1;
      auto r = AlignedBuffer::make(n);
      if (!r) return r.error();
      if (b.size() > 0) retired_.push_back(std::move(b));
      b = std::move(*r);
    }
    return IoBuffer{b.data(), -1};
  }
  const bool write = kind == IoKind::kWrite;
  AlignedBuffer& b = write ? write_ : read_;
  bool& registered = write ? write_registered_ : read_registered_;
  if (b.size() < bytes) {
    size_t n = b.size() * 2;
    while (n < bytes) n <<= 1;
    auto r = AlignedBuffer::make(n);
    if (!r) return r.error();
    if (write) fill_pseudo_random(r->data(), r->size(), 0x9e3779b97f4a7c15ull);
    retired_.push_back(std::move(b));
    b = std::move(*r);
    registered = false;
  }
  return IoBuffer{b.data(), registered ? (write ? 1 : 0) : -1};
}

}  // namespace blkrr::replay
