#include "replay/conflict.h"

#include <string>

namespace blkrr::replay {

Result<ConflictMode> parse_cmode(std::string_view s) {
  if (s == "conflicts") return ConflictMode::kConflicts;
  if (s == "drop") return ConflictMode::kDrop;
  if (s == "partial") return ConflictMode::kPartial;
  if (s == "ordering") return ConflictMode::kOrdering;
  return Error(ErrorKind::kUsage,
               "unknown cmode '" + std::string(s) + "' (use conflicts, drop, partial or ordering)");
}

std::string_view cmode_name(ConflictMode m) {
  switch (m) {
    case ConflictMode::kConflicts:
      return "conflicts";
    case ConflictMode::kDrop:
      return "drop";
    case ConflictMode::kPartial:
      return "partial";
    case ConflictMode::kOrdering:
      return "ordering";
  }
  return "?";
}

Result<int> parse_strong(std::string_view s) {
  if (s == "0") return 0;
  if (s == "1") return 1;
  if (s == "2") return 2;
  return Error(ErrorKind::kUsage, "--strong must be 0, 1 or 2, got '" + std::string(s) + "'");
}

void ExtentSet::insert(uint64_t id, uint64_t start, uint64_t end, bool write) {
  // Map nodes of erased extents are reused: no allocation per request.
  if (!spare_.empty()) {
    Map::node_type n = std::move(spare_.back());
    spare_.pop_back();
    n.key() = Key{start, end, id};
    n.mapped() = write;
    auto r = by_start_.insert(std::move(n));
    if (!r.inserted) r.position->second = write;
  } else {
    by_start_[Key{start, end, id}] = write;
  }
  if (end - start > max_len_) max_len_ = end - start;
}

void ExtentSet::erase(uint64_t id, uint64_t start, uint64_t end) {
  auto it = by_start_.find(Key{start, end, id});
  if (it == by_start_.end()) return;
  Map::node_type n = by_start_.extract(it);
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(n));
}

bool ExtentSet::conflicts(uint64_t start, uint64_t end, bool write, int strong) const {
  return conflicts_below(start, end, write, strong, UINT64_MAX);
}

// Members are ordered by start, end, id: the members of one extent are
// adjacent, oldest first, so a whole extent is passed over in O(log n) when
// it ends before `start` or when its remaining ids are too new. That keeps a
// query cheap beside a chain of thousands of writes to one sector.
ExtentSet::Map::const_iterator ExtentSet::next_extent(Map::const_iterator it) const {
  const Key& k = it->first;
  return by_start_.upper_bound(Key{k.start, k.end, UINT64_MAX});
}

bool ExtentSet::conflicts_below(uint64_t start, uint64_t end, bool write, int strong,
                                uint64_t id_limit) const {
  if (by_start_.empty() || end <= start) return false;
  const uint64_t from = start > max_len_ ? start - max_len_ : 0;
  for (auto it = by_start_.lower_bound(Key{from, 0, 0}); it != by_start_.end();) {
    const Key& k = it->first;
    if (k.start >= end) break;
    if (k.end <= start || k.id >= id_limit) {
      it = next_extent(it);
      continue;
    }
    if (kinds_conflict(strong, write, it->second)) return true;
    ++it;
  }
  return false;
}

void ExtentSet::overlapping(uint64_t start, uint64_t end, int strong,
                            std::vector<uint64_t>& ids) const {
  if (by_start_.empty() || end <= start) return;
  const uint64_t from = start > max_len_ ? start - max_len_ : 0;
  for (auto it = by_start_.lower_bound(Key{from, 0, 0}); it != by_start_.end();) {
    const Key k = it->first;
    if (k.start >= end) break;
    if (k.end <= start) {
      it = next_extent(it);
      continue;
    }
    // The oldest member of this extent; the others of a kind that conflicts
    // with it wait behind it and are left out (a write at --strong 1 or 2,
    // anything at 2, leaves out the whole extent).
    const bool head_write = it->second;
    ids.push_back(k.id);
    if (strong >= 2 || (strong == 1 && head_write)) {
      it = next_extent(it);
      continue;
    }
    for (++it; it != by_start_.end() && it->first.start == k.start && it->first.end == k.end; ++it)
      if (!kinds_conflict(strong, it->second, head_write)) ids.push_back(it->first.id);
  }
}

}  // namespace blkrr::replay
