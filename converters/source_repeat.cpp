// --repeat N of the replay: the input read N times, each pass after the
// previous one (as `blkrr convert --repeat`), reopened for every pass so that
// a load of any length is generated on the fly, never stored.
#include <sys/stat.h>

#include <algorithm>

#include "converters/source.h"

namespace blkrr {
namespace {

class RepeatSource : public RequestSource {
 public:
  RepeatSource(std::vector<std::string> inputs, SourceOptions once, uint64_t passes,
               std::unique_ptr<RequestSource> first)
      : inputs_(std::move(inputs)),
        once_(std::move(once)),
        passes_(passes),
        cur_(std::move(first)) {
    info_ = cur_->info();
  }

  Result<bool> next(Request& out) override {
    for (;;) {
      auto r = cur_->next(out);
      if (!r) return r;
      if (*r) return shifted(out);
      if (++pass_ >= passes_ || n_ == 0) return false;
      add_counters(cur_->counters());
      auto src = open_source(inputs_, once_);
      if (!src) return src.error().context("--repeat pass " + std::to_string(pass_ + 1));
      cur_ = std::move(*src);
      // Each pass starts one mean gap after the previous pass's last request.
      const uint64_t span = last_ - first_;
      const uint64_t gap = n_ > 1 ? span / (n_ - 1) : 1'000'000;
      shift_ = static_cast<uint64_t>(pass_) * (span + std::max<uint64_t>(gap, 1));
    }
  }

  Counters counters() const override {
    Counters c = done_;
    for (const auto& [k, v] : cur_->counters()) c[k] += v;
    return c;
  }

 private:
  bool shifted(Request& out) {
    if (pass_ == 0) {  // the first pass gives the period
      first_ = n_ == 0 ? out.issue_ns : std::min(first_, out.issue_ns);
      last_ = n_ == 0 ? out.issue_ns : std::max(last_, out.issue_ns);
      n_++;
    }
    out.issue_ns += shift_;
    if (out.completed()) out.complete_ns += shift_;
    return true;
  }
  void add_counters(const Counters& c) {
    for (const auto& [k, v] : c) done_[k] += v;
  }

  std::vector<std::string> inputs_;
  SourceOptions once_;  // the options of one pass (repeat = 1)
  uint64_t passes_;
  std::unique_ptr<RequestSource> cur_;
  uint64_t pass_ = 0, n_ = 0, first_ = 0, last_ = 0, shift_ = 0;
  Counters done_;  // of the passes before the current one
};

}  // namespace

Result<std::unique_ptr<RequestSource>> open_repeated_source(const std::vector<std::string>& inputs,
                                                            const SourceOptions& opts) {
  if (opts.repeat == 0) return Error(ErrorKind::kUsage, "--repeat must be at least 1");
  for (const auto& in : inputs) {
    struct stat st;
    if (::stat(in.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return Error(ErrorKind::kUsage,
                   "--repeat reads " + in + " again for every pass: it must be a regular file");
  }
  SourceOptions once = opts;
  once.repeat = 1;
  auto first = open_source(inputs, once);
  if (!first) return first.error();
  std::unique_ptr<RequestSource> r =
      std::make_unique<RepeatSource>(inputs, once, opts.repeat, std::move(*first));
  return r;
}

}  // namespace blkrr
