#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

#include "core/clock.h"
#include "core/units.h"

namespace blkrr {

namespace {
constexpr uint64_t kEveryNs = 500'000'000;
}

ProgressLine::ProgressLine(bool enabled, std::function<void(const std::string&)> out)
    : enabled_(enabled), out_(std::move(out)) {
  if (!out_)
    out_ = [](const std::string& s) {
      std::fputs(s.c_str(), stderr);
      std::fflush(stderr);
    };
  next_ns_ = mono_ns() + kEveryNs;
}

ProgressLine::~ProgressLine() {
  finish();
}

bool ProgressLine::due() {
  if (!enabled_) return false;
  uint64_t now = mono_ns();
  if (now < next_ns_) return false;
  next_ns_ = now + kEveryNs;
  return true;
}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  std::string line = "\r" + text;
  if (text.size() < shown_) line += std::string(shown_ - text.size(), ' ');
  shown_ = text.size();
  out_(line);
}

void ProgressLine::finish() {
  if (!enabled_ || shown_ == 0) return;
  out_("\r" + std::string(shown_, ' ') + "\r");
  shown_ = 0;
}

bool ProgressLine::wanted(bool quiet) {
  return !quiet && isatty(STDERR_FILENO) == 1;
}

ProgressTicker::ProgressTicker(bool enabled, std::function<void(const std::string&)> out)
    : out_(out ? std::move(out) : std::function<void(const std::string&)>([](const std::string& s) {
        std::fputs(s.c_str(), stderr);
        std::fflush(stderr);
      })),
      line_(enabled, out_) {
  if (enabled) thread_ = std::thread([this] { run(); });
}

ProgressTicker::~ProgressTicker() {
  stop();
}

void ProgressTicker::phase(std::string text) {
  std::lock_guard<std::mutex> lock(m_);
  phase_ = std::move(text);
  phase_start_ns_ = mono_ns();
}

void ProgressTicker::say(const std::string& line) {
  std::lock_guard<std::mutex> lock(m_);
  line_.finish();
  out_(line + "\n");
}

void ProgressTicker::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
    line_.finish();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressTicker::run() {
  std::unique_lock<std::mutex> lock(m_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (stop_ || phase_.empty() || !line_.due()) continue;
    const double s = static_cast<double>(mono_ns() - phase_start_ns_) / 1e9;
    line_.show(phase_ + " (" + fmt_elapsed(s) + ")");
  }
}

}  // namespace blkrr
