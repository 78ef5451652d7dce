#include "replay/session_progress.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>

#include "core/units.h"

namespace blkrr::replay {

LoadCounter::LoadCounter(Opener open, const Schedule& schedule, bool idle)
    : thread_([this, open = std::move(open), schedule, idle] { run(open, schedule, idle); }) {}

LoadCounter::~LoadCounter() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void LoadCounter::run(const Opener& open, const Schedule& schedule, bool idle) {
  sched_param none{};
  if (idle) (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
  auto src = open();
  Request r;
  uint64_t n = 0, first = UINT64_MAX, last = 0;
  bool ok = src.ok();
  while (ok && !stop_) {
    auto more = (*src)->next(r);
    if (!more || !*more) {
      ok = more.ok();
      break;
    }
    ++n;
    first = std::min<uint64_t>(first, r.issue_ns);
    last = std::max<uint64_t>(last, r.issue_ns);
  }
  if (ok && !stop_) {
    size_.requests = n;
    size_.span_ns = n ? schedule.due_offset_ns(last - first) : 0;
    ok_ = true;
  }
  done_ = true;
}

std::optional<LoadSize> LoadCounter::size() const {
  if (!done_ || !ok_) return std::nullopt;
  return size_;
}

std::optional<LoadSize> LoadCounter::wait() {
  if (thread_.joinable()) thread_.join();
  return size();
}

std::string progress_line(const Progress& p, uint64_t window_ns, std::optional<LoadSize> total,
                          double iops) {
  uint64_t span = window_ns ? window_ns : (total ? total->span_ns : 0);
  std::string pos;
  auto eta = [&](double fraction) {
    if (!(fraction > 0)) return std::string();
    double left_s = static_cast<double>(p.elapsed_ns) / 1e9 * (1 - fraction) / fraction;
    return "  ETA " + fmt_elapsed(std::max(0.0, left_s));
  };
  if (span > 0) {
    // The load's time advances at the replay's pace: the rest takes the same
    // wall time per load second as what is done.
    double f = static_cast<double>(std::min(span, p.due_ns)) / static_cast<double>(span);
    pos = strfmt("%5.1f%% of %s", 100 * f, fmt_elapsed(static_cast<double>(span) / 1e9).c_str()) +
          (p.due_ns > 0 ? eta(f) : "");
  } else if (total && total->requests > 0) {  // full speed: by requests done
    double f =
        std::min(1.0, static_cast<double>(p.completed) / static_cast<double>(total->requests));
    pos = strfmt("%5.1f%%", 100 * f) + eta(f);
  } else {
    pos = strfmt("load t=%.1fs", static_cast<double>(p.due_ns) / 1e9);
  }
  std::string done = std::to_string(p.completed);
  if (total) done += "/" + std::to_string(total->requests);
  return pos +
         strfmt("  %.0f IOPS  delay %.1f us  in flight %llu  done ", iops,
                static_cast<double>(p.last_delay_ns) / 1e3,
                static_cast<unsigned long long>(p.in_flight)) +
         done;
}

void print_progress(const Progress& p, uint64_t window_ns, std::optional<LoadSize> total,
                    uint64_t& last_completed, uint64_t& last_elapsed) {
  const double dt = static_cast<double>(p.elapsed_ns - last_elapsed) / 1e9;
  const double iops = dt > 0 ? static_cast<double>(p.completed - last_completed) / dt : 0;
  last_completed = p.completed;
  last_elapsed = p.elapsed_ns;
  // Padded: a shorter line covers the longer one before it.
  std::fprintf(stderr, "\r%-79s", progress_line(p, window_ns, total, iops).c_str());
  std::fflush(stderr);
}

void print_final_progress(const Result<ReplayResult>& res) {
  if (res && !res->interrupted) {
    const double s = static_cast<double>(res->last_complete_ns) / 1e9;
    std::fprintf(stderr, "\r100.0%%  done %llu requests in %s%40s\n",
                 static_cast<unsigned long long>(res->completed), fmt_elapsed(s).c_str(), "");
  } else {
    std::fputs("\n", stderr);
  }
}

}  // namespace blkrr::replay
