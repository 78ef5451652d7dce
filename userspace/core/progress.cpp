#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

#include "core/clock.h"

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

}  // namespace blkrr
