// What every sector written by this run should hold, and the checks of reads
// against it (verify, final-verify, paranoia).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "replay/verify_tag.h"

namespace blkrr::replay {

enum class VerifyPass { kRead, kParanoia, kFinal };
std::string_view verify_pass_name(VerifyPass p);

struct VerifyError {
  VerifyPass pass = VerifyPass::kRead;
  uint64_t sector = 0;    // device sector
  uint64_t read_seq = 0;  // the load request that read it (final pass: 0)
  SectorTag expected;
  std::optional<SectorTag> found;  // nullopt: no tag in the sector
  std::string to_line() const;     // "VERIFY ERROR sector=... expected ... found ..."
};

class VerifyState {
 public:
  explicit VerifyState(uint64_t run_id) : run_id_(run_id) {}

  // Fills `buf` (sectors * 512 bytes) with the tags of a write of request
  // `seq` and marks the sectors as being written.
  void begin_write(uint64_t seq, uint64_t sector, uint32_t sectors, uint8_t* buf);
  // The write completed (ok) or failed; a sector written by two overlapping
  // writes in flight at once holds an unknown one of them until rewritten.
  void end_write(uint64_t seq, uint64_t sector, uint32_t sectors, bool ok);
  // Snapshot for a read starting now.
  uint64_t begin_read() const { return tick_; }
  // Checks every sector of a completed read whose content is known and was not
  // written while the read ran; appends mismatches to `errors`.
  void check_read(VerifyPass pass, uint64_t seq, uint64_t sector, uint32_t sectors,
                  const uint8_t* buf, uint64_t snapshot, std::vector<VerifyError>& errors);
  // Contiguous runs (start, length) of sectors with a known tag, each at most
  // `max_sectors` long, ascending: what a final verify pass re-reads.
  std::vector<std::pair<uint64_t, uint32_t>> known_extents(uint32_t max_sectors) const;

  uint64_t run_id() const { return run_id_; }
  uint64_t sectors_checked() const { return checked_; }
  uint64_t sectors_unverifiable() const { return unverifiable_; }
  uint64_t sectors_tracked() const { return sectors_.size(); }

 private:
  struct SectorState {
    uint64_t seq = 0;
    uint64_t version = 0;    // versions handed out so far
    uint64_t last_tick = 0;  // tick of the last write start or end
    uint32_t req_sectors = 0;
    uint32_t offset = 0;
    uint32_t pending = 0;  // writes in flight
    bool known = false;    // content equals the tag of (seq, version)
    bool overlap = false;  // two writes were in flight at once
  };
  uint64_t run_id_;
  uint64_t tick_ = 0;
  uint64_t checked_ = 0, unverifiable_ = 0;
  std::unordered_map<uint64_t, SectorState> sectors_;
};

}  // namespace blkrr::replay
