// What the inferred dependencies of a trace look like: the share of requests
// that depend on another, their kinds, fan-in, the think-time distribution
// and the chains of each thread. Fed one request at a time with its
// Dependency (core/dependency.h); memory grows with the number of threads
// only (at most kMaxThreads are told apart).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/dependency.h"
#include "core/distribution.h"

namespace blkrr {

class DependencyStats {
 public:
  static constexpr size_t kMaxThreads = 65536;
  static constexpr size_t kTopThreads = 10;  // threads listed, most requests first

  void add(const Request& r, const Dependency& d);

  uint64_t requests() const { return requests_; }
  uint64_t dependent() const { return dependent_; }
  // {requests, dependent, dependent_share, kinds{...}, fanin[0..4], think_ns{...},
  //  threads{count, chains, longest_chain, mean_chain, top[...]}} (docs/report.md).
  nlohmann::json to_json() const;
  // The same as lines of text (a table per part).
  std::vector<std::string> text() const;

 private:
  struct Thread {
    uint64_t requests = 0, dependent = 0, chains = 0;
    uint32_t longest = 0;  // requests in its longest chain
    std::array<char, 16> comm{};
  };
  uint64_t requests_ = 0, dependent_ = 0, other_threads_ = 0;
  std::array<uint64_t, 5> kinds_{};
  std::array<uint64_t, kMaxParents + 1> fanin_{};
  Distribution think_;
  std::unordered_map<uint32_t, Thread> threads_;
};

}  // namespace blkrr
