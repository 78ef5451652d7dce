// Requests in flight: per request at its issue, and over time (time-weighted
// distribution of the in-flight level, and a bucketed profile for plotting).
// Computed in one sweep over the samples in issue order and their
// completion times in order (two sorted SampleStores): memory is the
// profile's buckets, not the requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "report/sample_store.h"

namespace blkrr::report {

struct InflightBucket {
  uint64_t t_ns = 0;  // bucket start
  uint32_t max = 0;   // highest level reached in the bucket
  double avg = 0;     // time-weighted mean level in the bucket
};

struct InflightProfile {
  // time_at_level[k]: nanoseconds during which exactly k requests were in
  // flight, between the first issue and the last completion.
  std::vector<double> time_at_level;
  std::vector<InflightBucket> buckets;
  double mean = 0;
  uint32_t max = 0;
};

// The profile, fed with issues and completions in time order (completions
// at the same instant as an issue first), over [t0, t_end].
class InflightProfiler {
 public:
  InflightProfiler(uint64_t t0, uint64_t t_end, uint64_t bucket_ns);
  void issue(uint64_t t);
  void complete(uint64_t t);
  InflightProfile finish();

 private:
  void advance(uint64_t until);
  InflightProfile p_;
  uint64_t t0_, t_end_, bucket_ns_, now_, level_ = 0;
  double weighted_ = 0;
};

// Walks the samples in issue order with every completion time in order:
// on_complete(t) for each completion, before any issue at or after t, and
// on_issue(sample, level) with the number of requests in flight just after
// the sample's issue, its own included: requests issued before or with it
// (issue order, ties in store order) minus those completed strictly before.
template <class OnIssue, class OnComplete>
void sweep_in_flight(const SampleStore& by_issue, const SampleStore& by_completion,
                     OnIssue on_issue, OnComplete on_complete) {
  SampleStore::Reader cr(by_completion);
  const Sample* cp = nullptr;
  size_t cn = 0, ci = 0;
  bool more = cr.next(cp, cn);
  uint64_t done = 0, run_t = 0, run_n = 0;  // completions delivered; the last equal-time run
  uint64_t issued = 0;
  auto deliver_until = [&](uint64_t t, bool inclusive) {
    while (more) {
      if (ci == cn) {
        ci = 0;
        more = cr.next(cp, cn);
        continue;
      }
      uint64_t c = cp[ci].complete_ns();
      if (c > t || (!inclusive && c == t)) return;
      ++ci;
      ++done;
      run_n = c == run_t && done > 1 ? run_n + 1 : 1;
      run_t = c;
      on_complete(c);
    }
  };
  by_issue.for_each([&](const Sample& s) {
    uint64_t t = s.issue_ns();
    deliver_until(t, true);
    uint64_t before = done - (run_t == t && done ? run_n : 0);  // completed strictly before t
    ++issued;
    on_issue(s, static_cast<uint32_t>(issued > before ? issued - before : 0));
  });
  deliver_until(UINT64_MAX, true);
}

// Convenience forms over plain vectors (tests, small inputs).
std::vector<uint32_t> inflight_at_issue(const std::vector<uint64_t>& issue,
                                        const std::vector<uint64_t>& complete);
InflightProfile inflight_profile(const std::vector<uint64_t>& issue,
                                 const std::vector<uint64_t>& complete, uint64_t bucket_ns);

// The profile of a dataset's samples (sorted stores as for sweep_in_flight).
InflightProfile inflight_profile(const SampleStore& by_issue, const SampleStore& by_completion,
                                 uint64_t bucket_ns);

}  // namespace blkrr::report
