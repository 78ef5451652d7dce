#include "live/exited.h"

#include <unistd.h>

#include <map>
#include <set>

#include "live/delta.h"

namespace blkrr::live {

bool task_alive(uint32_t pid, uint32_t tid, const std::string& procfs) {
  std::string path = procfs + "/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  return ::access(path.c_str(), F_OK) == 0;
}

std::vector<AggKey> exited_keys(const std::vector<AggEntry>& agg,
                                const std::function<bool(uint32_t pid, uint32_t tid)>& alive) {
  std::vector<AggKey> out;
  std::map<std::pair<uint32_t, uint32_t>, bool> known;  // one /proc lookup per task
  for (const auto& e : agg) {
    auto [it, inserted] = known.try_emplace({e.key.pid, e.key.tid}, false);
    if (inserted) it->second = alive(e.key.pid, e.key.tid);
    if (!it->second) out.push_back(e.key);
  }
  return out;
}

std::vector<AggKey> fold_taken(std::vector<AggEntry>& agg, const std::vector<AggEntry>& taken) {
  std::set<AggKey, AggKeyLess> keys;
  for (const auto& e : taken) keys.insert(e.key);
  std::vector<AggEntry> out;
  out.reserve(agg.size());
  for (const auto& e : agg)
    if (!keys.count(e.key)) out.push_back(e);
  out.insert(out.end(), taken.begin(), taken.end());
  agg = std::move(out);
  return {keys.begin(), keys.end()};
}

}  // namespace blkrr::live
