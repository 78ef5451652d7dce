// Conflict detection for requests that overlap in time and position
// ("damaged I/O" in blkreplay's words): an ordered map of the extents in
// flight (or waiting), queried for overlaps.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace blkrr::replay {

// conflicts: only count them and submit anyway; drop: do not submit the
// later request; partial: the later request waits on a push-back list until
// its conflicts complete (default); ordering: the later request waits until
// every earlier request has completed, and everything after it waits too.
enum class ConflictMode { kConflicts, kDrop, kPartial, kOrdering };

Result<ConflictMode> parse_cmode(std::string_view s);
std::string_view cmode_name(ConflictMode m);
Result<int> parse_strong(std::string_view s);  // 0 | 1 | 2

// Whether two overlapping requests conflict at a given --strong level:
// 0 only write/write, 1 also read/write, 2 any overlap (read/read too).
constexpr bool kinds_conflict(int strong, bool a_write, bool b_write) {
  if (strong >= 2) return true;
  if (strong == 1) return a_write || b_write;
  return a_write && b_write;
}

// Extents [start, end) in sectors, keyed by (start, end, id).
class ExtentSet {
 public:
  void insert(uint64_t id, uint64_t start, uint64_t end, bool write);
  void erase(uint64_t id, uint64_t start, uint64_t end);
  // Does [start, end) of kind `write` conflict with any member?
  bool conflicts(uint64_t start, uint64_t end, bool write, int strong) const;
  // The same, counting only members whose id is below id_limit.
  bool conflicts_below(uint64_t start, uint64_t end, bool write, int strong,
                       uint64_t id_limit) const;
  // Appends the ids of the members that overlap [start, end) and that no
  // older member of the same extent conflicts with at `strong` (those wait
  // behind it: a chain of writes to one sector yields its oldest only).
  void overlapping(uint64_t start, uint64_t end, int strong, std::vector<uint64_t>& ids) const;
  size_t size() const { return by_start_.size(); }
  bool empty() const { return by_start_.empty(); }
  void clear() {
    by_start_.clear();
    max_len_ = 0;
  }

 private:
  struct Key {
    uint64_t start, end, id;
    // NOLINTNEXTLINE(modernize-use-nullptr): a false positive on a defaulted <=>
    auto operator<=>(const Key&) const = default;
  };
  using Map = std::map<Key, bool>;  // -> is a write
  static constexpr size_t kMaxSpare = 4096;
  Map::const_iterator next_extent(Map::const_iterator it) const;
  Map by_start_;
  std::vector<Map::node_type> spare_;  // nodes of erased extents, for reuse
  uint64_t max_len_ = 0;               // longest extent ever inserted: bounds the search
};

}  // namespace blkrr::replay
