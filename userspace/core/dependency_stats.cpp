#include "core/dependency_stats.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/units.h"

namespace blkrr {

void DependencyStats::add(const Request& r, const Dependency& d) {
  ++requests_;
  ++kinds_[static_cast<size_t>(d.kind)];
  ++fanin_[std::min<size_t>(d.nparents, kMaxParents)];
  if (!d.independent()) {
    ++dependent_;
    think_.add(static_cast<double>(d.think_ns));
  }
  auto it = threads_.find(r.pid);
  if (it == threads_.end()) {
    if (threads_.size() >= kMaxThreads) {
      ++other_threads_;
      return;
    }
    it = threads_.emplace(r.pid, Thread{}).first;
    it->second.comm = r.comm;
  }
  Thread& t = it->second;
  ++t.requests;
  // A chain starts at a request that depends on nothing of its own thread.
  if (d.kind == DepKind::kIndependent || d.kind == DepKind::kCross) ++t.chains;
  if (!d.independent()) ++t.dependent;
  t.longest = std::max(t.longest, d.depth + 1);
}

nlohmann::json DependencyStats::to_json() const {
  nlohmann::json j;
  j["requests"] = requests_;
  j["dependent"] = dependent_;
  j["dependent_share"] = requests_ ? static_cast<double>(dependent_) / requests_ : 0.0;
  for (size_t k = 0; k < kinds_.size(); ++k)
    j["kinds"][std::string(dep_kind_name(static_cast<DepKind>(k)))] = kinds_[k];
  j["fanin"] = fanin_;
  j["think_ns"] = to_json_ns(think_.summary(), 1.0);
  uint64_t chains = 0, chained = 0;
  uint32_t longest = 0;
  std::vector<std::pair<uint32_t, const Thread*>> top;
  for (const auto& [tid, t] : threads_) {
    chains += t.chains;
    chained += t.requests;
    longest = std::max(longest, t.longest);
    top.emplace_back(tid, &t);
  }
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second->requests != b.second->requests ? a.second->requests > b.second->requests
                                                    : a.first < b.first;
  });
  if (top.size() > kTopThreads) top.resize(kTopThreads);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [tid, t] : top) {
    const std::string comm(t->comm.data(), strnlen(t->comm.data(), t->comm.size()));
    rows.push_back({{"tid", tid},
                    {"comm", utf8_or_replace(comm)},
                    {"requests", t->requests},
                    {"dependent", t->dependent},
                    {"chains", t->chains},
                    {"longest_chain", t->longest}});
  }
  j["threads"] = {{"count", threads_.size()},
                  {"not_told_apart", other_threads_},
                  {"chains", chains},
                  {"longest_chain", longest},
                  {"mean_chain", chains ? static_cast<double>(chained) / chains : 0.0},
                  {"top", rows}};
  return j;
}

std::vector<std::string> DependencyStats::text() const {
  const nlohmann::json j = to_json();
  std::vector<std::string> out;
  const double share = j["dependent_share"].get<double>() * 100;
  out.push_back(strfmt("dependencies: %llu requests, %llu (%.1f %%) depend on another",
                       static_cast<unsigned long long>(requests_),
                       static_cast<unsigned long long>(dependent_), share));
  out.push_back(
      strfmt("  kinds: independent %llu, thread %llu, cross %llu, sibling %llu, slot %llu",
             static_cast<unsigned long long>(kinds_[0]), static_cast<unsigned long long>(kinds_[1]),
             static_cast<unsigned long long>(kinds_[2]), static_cast<unsigned long long>(kinds_[3]),
             static_cast<unsigned long long>(kinds_[4])));
  std::string fan = "  fan-in (parents: requests):";
  for (size_t i = 0; i < fanin_.size(); ++i)
    fan += strfmt(" %zu: %llu", i, static_cast<unsigned long long>(fanin_[i]));
  out.push_back(fan);
  const Summary s = think_.summary();
  out.push_back("  think time: " +
                (s.count ? "p50 " + fmt_duration_ns(static_cast<uint64_t>(s.p50)) + ", p90 " +
                               fmt_duration_ns(static_cast<uint64_t>(s.p90)) + ", p99 " +
                               fmt_duration_ns(static_cast<uint64_t>(s.p99)) + ", max " +
                               fmt_duration_ns(static_cast<uint64_t>(s.max))
                         : std::string("-")));
  const auto& th = j["threads"];
  out.push_back(strfmt("  threads: %llu, chains %llu, mean chain %.1f requests, longest %u",
                       static_cast<unsigned long long>(th["count"].get<uint64_t>()),
                       static_cast<unsigned long long>(th["chains"].get<uint64_t>()),
                       th["mean_chain"].get<double>(), th["longest_chain"].get<uint32_t>()));
  out.push_back(strfmt("  %8s %-16s %10s %10s %8s %8s", "tid", "comm", "requests", "dependent",
                       "chains", "longest"));
  for (const auto& row : th["top"])
    out.push_back(strfmt("  %8u %-16s %10llu %10llu %8llu %8u", row["tid"].get<uint32_t>(),
                         row["comm"].get<std::string>().c_str(),
                         static_cast<unsigned long long>(row["requests"].get<uint64_t>()),
                         static_cast<unsigned long long>(row["dependent"].get<uint64_t>()),
                         static_cast<unsigned long long>(row["chains"].get<uint64_t>()),
                         row["longest_chain"].get<uint32_t>()));
  return out;
}

}  // namespace blkrr
