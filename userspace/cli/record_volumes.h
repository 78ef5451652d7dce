// record -d VOLUME: the disk requests the capture sees in a volume's pieces,
// written as the volume's own requests (its device and sectors), and the
// volume's stack and map in the trace header.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "capture/capture.h"
#include "core/trace_format.h"
#include "core/volume_stack.h"

namespace blkrr::cli {

class VolumeRecords {
 public:
  VolumeRecords(std::vector<VolumeMap> volumes, const CaptureConfig& cfg);
  bool active() const { return !volumes_.empty(); }
  // Hands `out` the records of `r` as written: r itself on a disk named by
  // itself or by a partition; else one record per piece of a volume it
  // touches (docs/capture.md), none for a request in a gap the capture's
  // filter closed or a write to a mirror's other member (counted).
  void translate(const Request& r, const std::function<void(const Request&)>& out);
  // The volumes in the header: each as a device, its stack and map as settings.
  Status describe(TraceHeader& h) const;
  // volume_outside (in a closed gap), volume_partial (partly outside),
  // volume_split (records added for requests over two pieces),
  // volume_mirror_copies (a mirror's other members' writes), when not 0.
  void add_counters(Counters& c) const;

 private:
  std::vector<VolumeMap> volumes_;
  std::set<DevT> plain_disks_;  // selected whole or by partition: kept as they are
  uint64_t outside_ = 0, partial_ = 0, split_ = 0, mirror_ = 0;
};

}  // namespace blkrr::cli
