// The live validator's view of a replay onto a stacked volume (a dm or md
// device, which has no requests of its own): the block-layer requests of the
// disks below, taken back to the volume's sectors through its map
// (core/volume_map.h), are what the replayed requests are matched with. A
// request over two pieces of the volume becomes one record per piece (the
// matcher counts the split). On a mirror (md RAID1) reads are taken from
// any member and writes from the first; the writes of every other member are
// matched on their own, so that a write that missed one member is missing.
//
//   VolumeLens lens(map, match_options);
//   lens.add_block(disk_request, main_matcher);   // each capture record
//   lens.add_replayed(replayed);                  // each replayed request
//   lens.finish(report, losses);                  // after the main matcher's finish
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/volume_stack.h"
#include "validate/window_matcher.h"

namespace blkrr::validate {

class VolumeLens {
 public:
  VolumeLens(VolumeMap volume, const MatchOptions& o);
  // A disk request the capture saw: its volume pieces to `main`, its writes
  // on each other member to that member's matcher.
  void add_block(const Request& r, WindowMatcher& main);
  // A replayed request (volume sectors): the pieces the stack splits it into
  // (chunks of a stripe, segments) counted; writes also to each member's
  // matcher.
  void add_replayed(const ReplayedRequest& r);
  void advance(uint64_t w);
  // report.stack, and the verdict made incomplete when a member missed writes.
  void finish(Report& report, const Losses& losses);
  const VolumeMap& volume() const { return volume_; }

 private:
  struct Member {
    uint32_t copy = 0;
    ExtentMap view;  // mirror_view(): this member's extents take the writes
    std::unique_ptr<WindowMatcher> matcher;
  };
  VolumeMap volume_;
  std::vector<Member> members_;
  std::map<DevT, uint64_t> per_disk_;
  uint64_t records_ = 0, outside_ = 0, split_ = 0, mirror_writes_ = 0;
  uint64_t replayed_split_ = 0, replayed_pieces_ = 0;
};

}  // namespace blkrr::validate
