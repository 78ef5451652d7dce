// A progress line on a terminal for commands that can run for seconds
// (convert, report): "\r" + text, at most every 0.5 s, erased at the end.
// Off unless stderr is a terminal (never in pipes, logs or tests' captures).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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

// A progress line for steps that block in a library call (`report` reading
// an input, drawing its plots): a thread shows "PHASE (ELAPSED)" every 0.5 s
// while the caller works; say() prints a message line without tearing the
// progress line. Off (no thread) unless `enabled`.
class ProgressTicker {
 public:
  explicit ProgressTicker(bool enabled, std::function<void(const std::string&)> out = {});
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

  void phase(std::string text);       // what is being done now
  void say(const std::string& line);  // a message line (newline added)
  void stop();                        // erases the line, ends the thread

 private:
  void run();
  std::function<void(const std::string&)> out_;
  std::mutex m_;
  std::condition_variable cv_;
  ProgressLine line_;
  std::string phase_;
  uint64_t phase_start_ns_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace blkrr
