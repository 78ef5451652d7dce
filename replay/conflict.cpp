#include "replay/conflict.h"

#include <string>

namespace blkrr::replay {

Result<ConflictMode> parse_cmode(std::string_view s) {
  if (s == "conflicts") return ConflictMode::kConflicts;
  if (s == "drop") return ConflictMode::kDrop;
  if (s == "partial") return ConflictMode::kPartial;
  if (s == "ordering") return ConflictMode::kOrdering;
  return Error("unknown cmode '" + std::string(s) + "' (use conflicts, drop, partial or ordering)",
               2);
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
  return Error("--strong must be 0, 1 or 2, got '" + std::string(s) + "'", 2);
}

void ExtentSet::insert(uint64_t id, uint64_t start, uint64_t end, bool write) {
  // Map nodes of erased extents are reused: no allocation per request.
  if (!spare_.empty()) {
    Map::node_type n = std::move(spare_.back());
    spare_.pop_back();
    n.key() = {start, id};
    n.mapped() = Entry{end, write};
    auto r = by_start_.insert(std::move(n));
    if (!r.inserted) r.position->second = Entry{end, write};
  } else {
    by_start_[{start, id}] = Entry{end, write};
  }
  if (end - start > max_len_) max_len_ = end - start;
}

void ExtentSet::erase(uint64_t id, uint64_t start) {
  auto it = by_start_.find({start, id});
  if (it == by_start_.end()) return;
  Map::node_type n = by_start_.extract(it);
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(n));
}

bool ExtentSet::conflicts(uint64_t start, uint64_t end, bool write, int strong) const {
  return conflicts_below(start, end, write, strong, UINT64_MAX);
}

bool ExtentSet::conflicts_below(uint64_t start, uint64_t end, bool write, int strong,
                                uint64_t id_limit) const {
  if (by_start_.empty() || end <= start) return false;
  uint64_t from = start > max_len_ ? start - max_len_ : 0;
  for (auto it = by_start_.lower_bound({from, 0}); it != by_start_.end(); ++it) {
    if (it->first.first >= end) break;
    if (it->second.end > start && it->first.second < id_limit &&
        kinds_conflict(strong, write, it->second.write))
      return true;
  }
  return false;
}

void ExtentSet::overlapping(uint64_t start, uint64_t end, std::vector<uint64_t>& ids) const {
  if (by_start_.empty() || end <= start) return;
  uint64_t from = start > max_len_ ? start - max_len_ : 0;
  for (auto it = by_start_.lower_bound({from, 0}); it != by_start_.end(); ++it) {
    if (it->first.first >= end) break;
    if (it->second.end > start) ids.push_back(it->first.second);
  }
}

}  // namespace blkrr::replay
