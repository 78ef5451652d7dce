// A progress line on a terminal for commands that can run for seconds
// (convert, report): "\r" + text, at most every 0.5 s, erased at the end.
// Off unless stderr is a terminal (never in pipes, logs or tests' captures).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace blkrr {

class ProgressLine {
 public:
  // `enabled` false: every call does nothing. `out` is stderr unless a test
  // collects the text.
  explicit ProgressLine(bool enabled, std::function<void(const std::string&)> out = {});
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // True when a line is due (0.5 s since the last): cheap, call often.
  bool due();
  // Shows `text` (replacing the previous line).
  void show(const std::string& text);
  // Erases the line (also done by the destructor).
  void finish();

  // True when progress lines should be shown: stderr is a terminal and not
  // --quiet.
  static bool wanted(bool quiet);

 private:
  bool enabled_;
  std::function<void(const std::string&)> out_;
  uint64_t next_ns_ = 0;
  size_t shown_ = 0;  // width of the line on screen
};

}  // namespace blkrr
