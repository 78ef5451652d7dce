// `convert --split-by volume -o DIR/`: one blkreplay load per volume of a
// multi-volume dataset, DIR/volume-ID.load.gz, each starting at 0 at its
// volume's first request (the same data lines as `--device-id ID`).
//
// Bounded memory and open files whatever the number of volumes: the load
// lines are buffered per volume up to `buffer_bytes` over all volumes; then
// the largest buffers are compressed into their files until half of that is
// left (so a gzip member carries many lines even when thousands of volumes
// take turns line by line). At most `max_open` gzip writers are open (least
// recently used closed first); a volume's file that is opened again gets a
// new gzip member appended (gzip files may hold several members; every
// blkrr reader reads them all, as does gzip -d). Per volume its first start
// time and its buffer are kept.
//
// Atomic as far as a set of files allows: the loads are written in a
// temporary directory DIR/.blkrr-split.XXXXXX; only when every one is
// complete and synced (syncfs) are they renamed into DIR, one rename each
// (a load never appears half written). A failure or interruption before
// that removes the temporary directory and leaves DIR as it was. A name that
// is an input is refused before any rename.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "converters/sink.h"
#include "core/io_guard.h"

namespace blkrr {

struct SplitOptions {
  std::string dir;                    // created if missing (one level)
  std::vector<std::string> preamble;  // notice lines of every load (a line "volume ID" follows)
  int gz_level = 1;
  size_t max_open = 16;                   // gzip writers open at once
  size_t buffer_bytes = 32 << 20;         // load lines buffered over all volumes
  std::vector<std::string> inputs;        // never written over
  Existing existing = Existing::kRefuse;  // loads of an earlier split in dir: --overwrite
};

struct SplitReport {
  uint64_t volumes = 0;   // loads written
  uint64_t reopened = 0;  // writers opened again (appended gzip members)
  size_t max_open = 0;
  std::string dir;
  std::string text() const;  // the summary's line
};

class SplitSink : public RequestSink {
 public:
  static Result<std::unique_ptr<SplitSink>> create(const SplitOptions& o);
  virtual const SplitReport& report() const = 0;
  // The final path of a volume's load in `dir`.
  static std::string volume_path(const std::string& dir, uint32_t volume);
};

}  // namespace blkrr
