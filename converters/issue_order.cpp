#include "converters/issue_order.h"

namespace blkrr {

IssueOrder::IssueOrder(RequestSource& src, uint64_t window_ns)
    : src_(src), reorder_(!src.info().sorted_by_issue), window_ns_(window_ns) {}

Result<bool> IssueOrder::next(Request& out) {
  if (!reorder_) {
    auto r = src_.next(out);
    if (r.ok() && *r) ++read_;
    return r;
  }
  while (!src_done_) {
    if (!heap_.empty() &&
        (heap_.size() >= kMaxItems || heap_.top().second.issue_ns + window_ns_ <= max_issue_))
      break;
    Request q;
    auto r = src_.next(q);
    if (!r) return r.error();
    if (!*r) {
      src_done_ = true;
      break;
    }
    ++read_;
    if (q.issue_ns > max_issue_) max_issue_ = q.issue_ns;
    heap_.emplace(arrivals_++, q);
  }
  if (heap_.empty()) return false;
  out = heap_.top().second;
  heap_.pop();
  if (out.issue_ns < last_emitted_) {
    ++out_of_order_;
    out.issue_ns = last_emitted_;
  }
  last_emitted_ = out.issue_ns;
  return true;
}

}  // namespace blkrr
