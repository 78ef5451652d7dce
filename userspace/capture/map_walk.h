// One walk over a BPF map from user space: for_each_map_entry<K, V>(fd, fn)
// calls fn(key, value) for every key the kernel lists, with the value read
// by a lookup (lookup_flags: BPF_F_LOCK reads a value with a spin lock under
// that lock). A key deleted between listing and lookup is skipped. Deleting
// while walking restarts a hash map's walk: collect first, then delete.
#pragma once

#include <bpf/bpf.h>

#include <cstdint>

namespace blkrr::capture {

// The two map calls, through libbpf (tests pass their own).
struct LibbpfMapCalls {
  static int next_key(int fd, const void* prev, void* next) {
    return bpf_map_get_next_key(fd, prev, next);
  }
  static int lookup(int fd, const void* key, void* value, uint64_t flags) {
    return bpf_map_lookup_elem_flags(fd, key, value, flags);
  }
};

template <class K, class V, class Calls = LibbpfMapCalls, class Fn>
void for_each_map_entry(int fd, Fn&& fn, uint64_t lookup_flags = 0) {
  K key{}, next{};
  const K* prev = nullptr;  // null: the first key
  while (Calls::next_key(fd, prev, &next) == 0) {
    V v{};
    if (Calls::lookup(fd, &next, &v, lookup_flags) == 0) fn(next, v);
    key = next;
    prev = &key;
  }
}

}  // namespace blkrr::capture
