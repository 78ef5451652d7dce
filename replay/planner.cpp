#include "replay/planner.h"

#include <string>

namespace blkrr::replay {

Planner::Planner(RequestSource& src, const Schedule& sched, DeviceMap& map,
                 uint64_t reorder_window_ns)
    : sched_(sched),
      map_(map),
      order_(src, reorder_window_ns),
      absolute_(src.info().absolute_time) {
  if (sched.options().mode == TimingMode::kDependency) deps_.emplace(sched.options().deps);
}

Result<Dependency> Planner::dependency_of(const Request& q, uint64_t seq) {
  if (graph_) return graph_->next(q, seq);
  return deps_ ? deps_->add(q, seq) : Dependency{};
}

Result<bool> Planner::next(PlannedRequest& out) {
  for (;;) {
    Request q;
    auto r = order_.next(q);
    c_.read = order_.read();
    c_.out_of_order = order_.out_of_order();
    if (!r) return r.error();
    if (!*r) {
      if (graph_) BLKRR_TRY(graph_->finish());
      return false;
    }
    const uint64_t seq = seq_++;
    // Every request read is a possible parent, inside the window or not.
    auto dep = dependency_of(q, seq);
    if (!dep) return dep.error();
    if (!have_base_) {
      have_base_ = true;
      base_ = absolute_ ? q.issue_ns : 0;
    }
    const uint64_t load_ns = q.issue_ns > base_ ? q.issue_ns - base_ : 0;
    switch (sched_.classify(load_ns)) {
      case WindowPos::kBefore:
        ++c_.before_window;
        continue;
      case WindowPos::kAfter:
        c_.after_window = 1;
        return false;
      case WindowPos::kInside:
        break;
    }
    PlannedRequest p;
    p.seq = seq;
    p.load_ns = load_ns;
    p.due_ns = sched_.due_offset_ns(load_ns);
    p.orig_sector = q.sector;
    p.orig_sectors = (q.bytes + 511) / 512;
    p.op = q.op;
    p.pid = q.pid;
    p.nparents = dep->nparents;
    p.parents = dep->parents;
    p.think_ns = sched_.scaled_ns(dep->think_ns);
    p.slots = dep->slots;
    if (q.op == Op::kFlush) {
      ++c_.planned_flushes;
    } else if (q.op == Op::kRead || q.op == Op::kWrite) {
      MappedExtent m;
      // The request's name is only built for an error (not per request).
      auto o = map_.map(p.orig_sector, p.orig_sectors, m, {});
      if (!o) return o.error().context("request " + std::to_string(seq) + " of the load");
      if (*o == DeviceMap::Outcome::kSkipped) {
        ++c_.skipped_map;
        continue;
      }
      p.sector = m.sector;
      p.sectors = m.sectors;
      if (q.op == Op::kRead) {
        ++c_.planned_reads;
        c_.planned_bytes_read += uint64_t{m.sectors} * 512;
      } else {
        ++c_.planned_writes;
        c_.planned_bytes_written += uint64_t{m.sectors} * 512;
      }
    } else {
      ++c_.unsupported_ops;
      continue;
    }
    if (c_.planned == 0) {
      c_.first_load_ns = load_ns;
      c_.first_due_ns = p.due_ns;
    }
    c_.last_load_ns = load_ns;
    c_.last_due_ns = p.due_ns;
    ++c_.planned;
    out = p;
    return true;
  }
}

}  // namespace blkrr::replay
