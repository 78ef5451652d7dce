// Rotated recordings (record --rotate, --rotate-size, --keep, --max-total):
// the rules as pure functions, so that each is tested on its own.
//  - names: STEM.NNNNNN.YYYYMMDDTHHMMSSZ.blkrr, the sequence number first so
//    that the names sort in recording order even when the wall clock steps
//    back; a file still being written carries the suffix ".open";
//  - boundaries: piece i holds the requests issued in [start_i, start_i+1);
//  - closing: a piece closes once no request issued before its end can
//    still reach user space;
//  - retention: which closed pieces to delete, oldest first.
// docs/recording.md describes them for users.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blkrr {

inline constexpr std::string_view kOpenSuffix = ".open";

// "STEM.000042.20261127T031200Z.blkrr" (UTC, whole seconds of real_ns).
std::string piece_file_name(const std::string& stem, uint64_t seq, uint64_t real_ns);

// The sequence number of a file name (no directory) of the form
// BASE.NNNNNN.YYYYMMDDTHHMMSSZ.blkrr, BASE the stem's last path component;
// nullopt for any other name (also the ".open" form).
std::optional<uint64_t> parse_piece_file_name(std::string_view stem_base,
                                              std::string_view file_name);

// The stem of a piece's file name ("prod" for
// ".../prod.000042.20261127T031200Z.blkrr"), or "" for another name.
std::string piece_stem(std::string_view path);

// The inputs grouped so that the pieces of one rotated recording given next
// to each other form one group (recording_id_of: the same id in their
// headers); every other input is a group of its own.
std::vector<std::vector<std::string>> group_rotated_pieces(const std::vector<std::string>& paths);

// 32 hex digits from the kernel's random source.
std::string new_recording_id();

// The piece (index into starts, ascending) a request issued at issue_ns
// belongs to: the last start at or before it; the first piece also takes
// everything issued before its start.
size_t piece_of(uint64_t issue_ns, const std::vector<uint64_t>& starts);

// What the recorder knows when it decides to close a piece whose requests
// are those issued before end_ns.
struct CloseView {
  // A walk over the capture's in-flight requests, taken at walk_ns (0: none
  // yet): the oldest issue time among them (UINT64_MAX: none in flight).
  uint64_t walk_ns = 0;
  uint64_t oldest_inflight_ns = UINT64_MAX;
  // Whether the ring buffer was drained after that walk (a record leaves the
  // in-flight set a moment before it is in the ring buffer).
  bool drained_since_walk = false;
  // Records of this piece received but still held (disk-time delay).
  uint64_t held = 0;
};
// A walk counts only when it was taken this long after the boundary: an
// issue stamped before the boundary has entered the in-flight set by then.
inline constexpr uint64_t kWalkMarginNs = 10'000'000;
bool piece_can_close(uint64_t end_ns, const CloseView& v);

// A closed piece of this recording on disk.
struct PieceFile {
  std::string path;
  uint64_t seq = 0;
  uint64_t bytes = 0;
};
// The pieces to delete, oldest (lowest sequence) first, so that at most
// `keep` closed pieces remain (0: no limit) and the closed pieces plus
// open_bytes (the files still being written) stay within max_total
// (0: no limit). Only closed pieces are ever chosen.
std::vector<PieceFile> retention_victims(std::vector<PieceFile> closed, uint64_t keep,
                                         uint64_t max_total, uint64_t open_bytes);

}  // namespace blkrr
