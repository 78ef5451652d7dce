// The verifier's own statistics of each loaded BPF program (processed
// instructions), asked for with BLKRR_BPF_VERIFIER_STATS=1: the kernel
// matrix records them per kernel, so that a change to bpf/ shows what it
// costs each verifier (docs/kernels.md).
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blkrr::capture {

// "processed N insns" of a verifier log (log level 4, BPF_LOG_STATS).
std::optional<uint64_t> processed_insns(std::string_view log);

class VerifierStats {
 public:
  // Whether BLKRR_BPF_VERIFIER_STATS=1 is set.
  static bool requested();
  // Gives every program that will load a log buffer at the statistics
  // level. Call between open and load.
  void arm(bpf_object* obj);
  // One line per loaded program on stderr:
  //   blkrr: verifier: PROGRAM processed N insns
  void print(bpf_object* obj) const;

 private:
  static constexpr size_t kLogSize = 16 * 1024;
  std::map<std::string, std::unique_ptr<char[]>> logs_;
};

}  // namespace blkrr::capture
