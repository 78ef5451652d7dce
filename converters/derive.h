// --derive N --snippet S: cut the converted stream into snippets of S seconds
// of output time, sort them by request count (heaviest first) and deal them
// round-robin into N outputs; in each output the snippets follow each other
// every S seconds, timestamps rebased (blkreplay's create_derived_load.sh).
//
// Memory: a few bytes per snippet. The requests themselves wait in an
// unlinked temporary file in $TMPDIR (default /tmp): sizeof(Request) + 16
// bytes (96 B) per request, removed automatically.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converters/sink.h"
#include "core/fd.h"
#include "core/request.h"
#include "core/result.h"

namespace blkrr {

class Deriver {
 public:
  static Result<Deriver> create(uint32_t n, int64_t snippet_ns);
  Deriver(Deriver&&) noexcept = default;
  Deriver& operator=(Deriver&&) noexcept = default;

  // One request in output order with its start time t (>= 0).
  Status add(const Request& r, int64_t t, int64_t shift);
  // Writes the N outputs (names from derived_path(out, i)) and returns them.
  Result<std::vector<std::string>> finish(const std::string& out, const SinkOptions& so,
                                          const Counters& counters);
  // Requests that came earlier than their snippet's start (unsorted input);
  // they stay in the snippet that was open.
  uint64_t late() const { return late_; }

 private:
  Deriver() = default;
  Status flush();
  struct Snippet {
    int64_t index = 0;  // t / snippet_ns
    uint64_t first = 0, count = 0;
  };
  struct Rec {
    Request r;
    int64_t t;
    int64_t shift;
  };

  uint32_t n_ = 0;
  int64_t snippet_ns_ = 0;
  Fd fd_;  // the scratch file of the requests in output order
  std::vector<Rec> buf_;
  uint64_t written_ = 0;
  std::vector<Snippet> snippets_;
  uint64_t late_ = 0;
};

// "x.load.gz", 3 -> "x.003.load.gz"
std::string derived_path(const std::string& out, uint32_t index);

}  // namespace blkrr
