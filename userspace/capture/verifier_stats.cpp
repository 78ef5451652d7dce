#include "capture/verifier_stats.h"

#include "core/args.h"

#include <cstdio>
#include <cstdlib>

namespace blkrr::capture {

std::optional<uint64_t> processed_insns(std::string_view log) {
  constexpr std::string_view kKey = "processed ";
  for (size_t at = log.find(kKey); at != std::string_view::npos; at = log.find(kKey, at + 1)) {
    std::string_view rest = log.substr(at + kKey.size());
    const size_t digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos) continue;
    if (rest.substr(digits).substr(0, 6) != " insns") continue;
    if (auto n = parse_u64(rest.substr(0, digits))) return *n;
  }
  return std::nullopt;
}

bool VerifierStats::requested() {
  const char* v = std::getenv("BLKRR_BPF_VERIFIER_STATS");
  return v && std::string_view(v) == "1";
}

void VerifierStats::arm(bpf_object* obj) {
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj) {
    if (!bpf_program__autoload(prog)) continue;
    auto& buf = logs_[bpf_program__name(prog)];
    buf = std::make_unique<char[]>(kLogSize);
    buf[0] = '\0';
    constexpr unsigned kLogStats = 4;  // BPF_LOG_STATS
    bpf_program__set_log_level(prog, kLogStats);
    bpf_program__set_log_buf(prog, buf.get(), kLogSize);
  }
}

void VerifierStats::print(bpf_object* obj) const {
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj) {
    auto it = logs_.find(bpf_program__name(prog));
    if (it == logs_.end() || bpf_program__fd(prog) < 0) continue;
    if (auto n = processed_insns(it->second.get()))
      std::fprintf(stderr, "blkrr: verifier: %s processed %llu insns\n", it->first.c_str(),
                   static_cast<unsigned long long>(*n));
    else
      std::fprintf(stderr, "blkrr: verifier: %s: no statistics in the verifier's log\n",
                   it->first.c_str());
  }
}

}  // namespace blkrr::capture
