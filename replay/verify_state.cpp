#include "replay/verify_state.h"

#include <algorithm>

namespace blkrr::replay {

std::string_view verify_pass_name(VerifyPass p) {
  switch (p) {
    case VerifyPass::kRead:
      return "read";
    case VerifyPass::kParanoia:
      return "paranoia";
    case VerifyPass::kFinal:
      return "final";
  }
  return "?";
}

std::string VerifyError::to_line() const {
  std::string s = "VERIFY ERROR sector=" + std::to_string(sector) +
                  " pass=" + std::string(verify_pass_name(pass));
  if (pass != VerifyPass::kFinal) s += " read_seq=" + std::to_string(read_seq);
  s += " expected{" + tag_to_string(expected) + "} found{";
  s += found ? tag_to_string(*found) : std::string("no blkrr tag");
  s += "}";
  return s;
}

void VerifyState::begin_write(uint64_t seq, uint64_t sector, uint32_t sectors, uint8_t* buf) {
  ++tick_;
  for (uint32_t i = 0; i < sectors; ++i) {
    SectorState& st = sectors_[sector + i];
    if (st.pending > 0) st.overlap = true;
    ++st.pending;
    ++st.version;
    st.last_tick = tick_;
    SectorTag t{run_id_, seq, st.version, sector + i, sectors, i};
    encode_tag(t, buf + static_cast<size_t>(i) * 512);
  }
}

void VerifyState::end_write(uint64_t seq, uint64_t sector, uint32_t sectors, bool ok) {
  ++tick_;
  for (uint32_t i = 0; i < sectors; ++i) {
    auto it = sectors_.find(sector + i);
    if (it == sectors_.end()) continue;
    SectorState& st = it->second;
    if (st.pending > 0) --st.pending;
    st.last_tick = tick_;
    if (!ok) {
      st.known = false;
    } else if (!st.overlap) {
      st.known = true;
      st.seq = seq;
      st.req_sectors = sectors;
      st.offset = i;
    } else if (st.pending == 0) {
      st.known = false;  // which of the overlapping writes landed last is unknown
      st.overlap = false;
    }
  }
}

void VerifyState::check_read(VerifyPass pass, uint64_t seq, uint64_t sector, uint32_t sectors,
                             const uint8_t* buf, uint64_t snapshot,
                             std::vector<VerifyError>& errors) {
  for (uint32_t i = 0; i < sectors; ++i) {
    auto it = sectors_.find(sector + i);
    if (it == sectors_.end()) continue;  // never written by this run
    const SectorState& st = it->second;
    if (!st.known || st.pending > 0 || st.last_tick > snapshot) {
      ++unverifiable_;
      continue;
    }
    ++checked_;
    SectorTag want{run_id_, st.seq, st.version, sector + i, st.req_sectors, st.offset};
    auto got = decode_tag(buf + static_cast<size_t>(i) * 512);
    if (got && *got == want) continue;
    errors.push_back(VerifyError{pass, sector + i, seq, want, got});
  }
}

std::vector<std::pair<uint64_t, uint32_t>> VerifyState::known_extents(uint32_t max_sectors) const {
  std::vector<uint64_t> known;
  known.reserve(sectors_.size());
  for (const auto& [s, st] : sectors_)
    if (st.known && st.pending == 0) known.push_back(s);
  std::sort(known.begin(), known.end());
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (uint64_t s : known) {
    if (!out.empty() && out.back().first + out.back().second == s &&
        out.back().second < max_sectors) {
      ++out.back().second;
    } else {
      out.emplace_back(s, 1);
    }
  }
  return out;
}

}  // namespace blkrr::replay
