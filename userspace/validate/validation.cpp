#include "validate/validation.h"

namespace blkrr::validate {

const char* status_name(ReplayStatus s) {
  switch (s) {
    case ReplayStatus::kDone:
      return "done";
    case ReplayStatus::kFailed:
      return "failed";
    case ReplayStatus::kDropped:
      return "dropped";
    case ReplayStatus::kNotStarted:
      return "not-started";
  }
  return "?";
}

const char* alter_name(AlterKind k) {
  switch (k) {
    case AlterKind::kOp:
      return "op";
    case AlterKind::kShort:
      return "short";
    case AlterKind::kLarger:
      return "larger";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kComplete:
      return "complete";
    case Verdict::kIncomplete:
      return "incomplete";
    case Verdict::kUnknown:
      return "unknown";
  }
  return "?";
}

bool Losses::hides_requests() const {
  // A completion the capture missed does not hide a request: its issue was
  // recorded. Only in strict mode does it count as a loss.
  return ringbuf_full > 0 || inflight_full > 0 || completion_without_issue > 0 ||
         issue_not_seen_records > 0 || reader_lost > 0 || counters_missing || trace_gaps > 0 ||
         skips_unexplained() > 0 || (strict_completions && completion_not_seen > 0);
}

void losses_from_counters(const Counters& c, Losses& l) {
  auto get = [&](const char* k) -> uint64_t {
    auto it = c.find(k);
    return it == c.end() ? 0 : it->second;
  };
  l.ringbuf_full = get("ringbuf_reserve_failed");
  l.inflight_full = get("inflight_map_full");
  l.completion_without_issue = get("completion_without_issue");
  l.reader_lost = get("validator_records_lost");
  l.programs_skipped = get("prog_recursion_misses");
  l.task_from_issue = get("task_from_issue");
}

}  // namespace blkrr::validate
