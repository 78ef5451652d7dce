// Where `blkrr record` writes: one trace file, standard output (-o -), or
// the pieces of a rotated recording (--rotate, --rotate-size) with their
// retention (--keep, --max-total). The rules are core/rotation.h; what users
// see is docs/recording.md.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "cli/record_summary.h"
#include "core/result.h"
#include "core/rotation.h"
#include "core/trace_format.h"

namespace blkrr::cli {

struct OutputPlan {
  std::string out;  // the file, "-", or with rotation the stem
  uint64_t rotate_ns = 0, rotate_bytes = 0;
  uint64_t keep = 0, max_total = 0;
  // --keep and --max-total also count earlier recordings' pieces of this stem.
  bool retain_earlier = false;
  // --min-free: writing pauses while the output's file system has less free
  // to unprivileged users (kMinFreeDefault: min(max(5 %, 1 GiB), 10 %) of it).
  static constexpr uint64_t kMinFreeDefault = UINT64_MAX;
  uint64_t min_free = kMinFreeDefault;
  bool overwrite = false;  // --overwrite: an existing -o FILE is replaced (pieces never are)
  bool rotating() const { return rotate_ns != 0 || rotate_bytes != 0; }
};

// The recording's cumulative counters now (capture and disk time): a closing
// piece's trailer holds what they grew by since the previous piece closed.
using CountersNow = std::function<Counters()>;

// Where the recording's records go: files (RecordOutput) or the flight
// recorder's memory (FlightRecorder, cli/record_flight.h).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // A record from the capture, before the disk-time delay.
  virtual Status received(const Request& r) = 0;
  // The same record after the disk-time delay.
  virtual Status write(const Request& r) = 0;
  // After each poll.
  virtual Status tick(uint64_t now, const Capture& cap, const CountersNow& counters) = 0;
  virtual Status finish(const Counters& cumulative) = 0;
  // After a write error: keeps what can be kept.
  virtual void abandon(const Counters& cumulative) = 0;
  virtual uint64_t records_written() const = 0;
  virtual uint64_t bytes_written() const = 0;
  virtual std::string summary_target() const = 0;
  virtual OutputProgress progress() const = 0;
  // Records not written because the file system had less than --min-free.
  virtual uint64_t not_kept() const { return 0; }
  // What is left on disk after a write error ended the recording.
  virtual std::string kept_after_error() const {
    return "the trace keeps what was flushed before (" + std::to_string(records_written()) +
           " records or fewer, readable with 'blkrr dump')";
  }
};

// The bytes free to unprivileged users on the file system of `dir`, and the
// --min-free default for it; nullopt when statvfs fails.
struct SpaceInfo {
  uint64_t free = 0, size = 0;
};
std::optional<SpaceInfo> space_of(const std::string& dir);
uint64_t default_min_free(uint64_t fs_size);
std::string dir_of(const std::string& path);

class RecordOutput : public RecordSink {
 public:
  // header: the recording's header, anchors set; t0: its CLOCK_MONOTONIC start.
  static Result<std::unique_ptr<RecordOutput>> open(const OutputPlan& plan,
                                                    const TraceHeader& header, uint64_t t0);
  ~RecordOutput() override;

  // A record from the capture, before the disk-time delay: its piece stays
  // open until write() has it.
  Status received(const Request& r) override;
  // Writes a record received() before into the piece of its issue.
  Status write(const Request& r) override;
  // After each poll: a new piece at a boundary, the pieces nothing can
  // arrive for any more closed, retention, and a flush once a second.
  Status tick(uint64_t now, const Capture& cap, const CountersNow& counters) override;
  // Closes every piece (the last with the counters not yet in a trailer).
  Status finish(const Counters& cumulative) override;
  // After a write error: closes what can be closed, keeps every flushed block.
  void abandon(const Counters& cumulative) override;

  uint64_t records_written() const override { return records_; }
  // Bytes written to every file so far (also those retention deleted).
  uint64_t bytes_written() const override;
  std::string summary_target() const override;
  OutputProgress progress() const override;
  // For the progress line and the summary.
  std::string current_path() const;
  uint64_t current_bytes() const;
  uint64_t files_created() const { return created_; }
  uint64_t files_deleted() const { return deleted_; }
  uint64_t bytes_on_disk() const;
  const OutputPlan& plan() const { return plan_; }
  // Records that arrived for a piece already closed (written to the oldest
  // open one); counted in the trailer as late_for_closed_piece.
  uint64_t late() const { return late_; }
  uint64_t not_kept() const override { return not_kept_; }

 private:
  struct Piece {
    uint64_t seq = 0, start_ns = 0, end_ns = UINT64_MAX;
    std::string path, open_path;
    std::unique_ptr<TraceWriter> w;
    uint64_t held = 0;
  };
  RecordOutput(const OutputPlan& plan, const TraceHeader& header) : plan_(plan), header_(header) {}
  Status open_piece(uint64_t start_ns);
  Result<Piece*> route(uint64_t issue_ns, bool count_late);
  Status advance_time_boundaries(uint64_t upto_ns);
  Status close_front(const Counters& cumulative);
  Status close_ready(uint64_t now, const Capture& cap, const CountersNow& counters);
  Status apply_retention();
  bool size_reached(TraceWriter& w);
  Status scan_earlier();
  Status check_space(uint64_t now);
  Status delete_oldest_for_room(const std::string& why);
  Status retry_with_room(const std::function<Status()>& op,
                         std::optional<Status> failed = std::nullopt);
  Counters piece_counters(const Counters& cumulative, const Piece& p);

  OutputPlan plan_;
  TraceHeader header_;
  std::deque<Piece> open_;
  std::vector<PieceFile> closed_;
  std::map<std::string, std::string> ids_;  // closed piece -> its header's recording id
  Counters in_trailers_;                    // cumulative counters already given to closed pieces
  CloseView view_;
  uint64_t next_seq_ = 0, next_boundary_ = UINT64_MAX, last_flush_ = 0;
  uint64_t records_ = 0, closed_bytes_ = 0, created_ = 0, deleted_ = 0, late_ = 0;
  uint64_t not_kept_ = 0, last_space_check_ = 0;
  bool paused_ = false;
};

}  // namespace blkrr::cli
