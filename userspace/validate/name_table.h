// Task names kept once (the validator's compact records): nearly every
// request comes from a few tasks, so each record holds a 16-bit index.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

namespace blkrr::validate {

class NameTable {
 public:
  static constexpr size_t kMax = 65535;
  using Name = std::array<char, 16>;
  // The name's index; past kMax names, the last one (counted in overflows()).
  uint16_t intern(const Name& n) {
    // The same task as last time first, then the index.
    if (last_ < names_.size() && names_[last_] == n) return last_;
    auto it = ids_.find(n);
    if (it != ids_.end()) return last_ = it->second;
    if (names_.size() >= kMax) {
      overflows_++;
      return last_ = static_cast<uint16_t>(names_.size() - 1);
    }
    last_ = static_cast<uint16_t>(names_.size());
    names_.push_back(n);
    ids_.emplace(n, last_);
    return last_;
  }
  const Name& at(uint16_t i) const { return names_[i]; }
  std::string_view name(uint16_t i) const {
    if (i >= names_.size()) return {};
    const Name& n = names_[i];
    return {n.data(), static_cast<size_t>(std::find(n.begin(), n.end(), '\0') - n.begin())};
  }
  uint64_t overflows() const { return overflows_; }

 private:
  std::vector<Name> names_;
  std::map<Name, uint16_t> ids_;
  uint16_t last_ = 0;
  uint64_t overflows_ = 0;
};

}  // namespace blkrr::validate
