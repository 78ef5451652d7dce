#include "converters/dependency_graph.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "converters/issue_order.h"
#include "core/io_guard.h"
#include "core/fd.h"
#include "core/units.h"

namespace blkrr {

namespace {

nlohmann::json options_json(const DependencyOptions& d) {
  return {{"thread_window_ns", d.thread_window_ns},
          {"cross_window_ns", d.cross_window_ns},
          {"skew_ns", d.skew_ns},
          {"sibling_ns", d.sibling_ns},
          {"max_fanin", d.max_fanin},
          {"max_tracked", d.max_tracked},
          {"think", think_rule_name(d.think)},
          {"think_quantile", d.think_quantile},
          {"think_tight", d.think_tight},
          {"async", async_rule_name(d.async)}};
}

std::string input_names(const GraphOptions& o) {
  std::string s;
  for (const auto& p : o.inputs) s += (s.empty() ? "" : " ") + p;
  return s;
}

}  // namespace

std::string graph_header(const GraphOptions& o) {
  return "# blkrr dependencies 2\n# input " + input_names(o) + "\n# options " +
         options_json(o.deps).dump() +
         "\n# "
         "seq\tissue_ns\tcomplete_ns\ttid\top\tsector\tsectors\tkind\tthink_"
         "ns\tdepth\tparents\tslots\n";
}

std::string graph_line(const Request& r, const Dependency& d) {
  std::string parents;
  for (uint8_t i = 0; i < d.nparents; ++i) parents += (i ? "," : "") + std::to_string(d.parents[i]);
  if (parents.empty()) parents = "-";
  const std::string done = r.completed() ? std::to_string(r.complete_ns) : "-";
  return strfmt("%llu\t%llu\t%s\t%u\t%c\t%llu\t%u\t%s\t%llu\t%u\t%s\t%u\n",
                static_cast<unsigned long long>(d.seq), static_cast<unsigned long long>(r.issue_ns),
                done.c_str(), r.pid, op_letter(r.op), static_cast<unsigned long long>(r.sector),
                r.sectors(), std::string(dep_kind_name(d.kind)).c_str(),
                static_cast<unsigned long long>(d.think_ns), d.depth, parents.c_str(), d.slots);
}

Result<GraphResult> infer_dependency_graph(const GraphOptions& o) {
  auto src = open_source(o.inputs, o.source);
  if (!src) return src.error();
  const SourceInfo& info = (*src)->info();
  if (!info.has_completion)
    return Error(ErrorKind::kUsage,
                 input_names(o) + " is a " + std::string(input_format_name(info.format)) +
                     " input, which carries no completion times and so no dependencies "
                     "(native traces, blktrace/blkparse with issue events and MSR do)");
  if (!o.output.empty())
    BLKRR_TRY(check_outputs({{o.output, "--dependencies"}}, o.inputs, o.existing));
  std::optional<AtomicFile> file;
  FilePtr out;
  if (!o.output.empty()) {
    auto f = AtomicFile::create(o.output);
    if (!f) return f.error();
    file.emplace(std::move(*f));
    out.reset(::fdopen(file->dup_fd(), "w"));
    if (!out) return Error::system("opening " + o.output, errno);
    std::fputs(graph_header(o).c_str(), out.get());
  }
  IssueOrder order(**src, o.reorder_window_ns);
  DependencyInferrer inf(o.deps);
  GraphResult res;
  Request r;
  for (uint64_t seq = 0;; ++seq) {
    auto got = order.next(r);
    if (!got) return got.error();
    if (!*got) break;
    const Dependency d = inf.add(r, seq);
    res.stats.add(r, d);
    if (out) std::fputs(graph_line(r, d).c_str(), out.get());
  }
  res.counters = inf.counters();
  res.out_of_order = order.out_of_order();
  if (out) {
    const bool failed = std::ferror(out.get()) != 0;
    if (std::fclose(out.release()) != 0 || failed)
      return Error::system("writing " + o.output, errno, "is the file system full?");
    BLKRR_TRY(file->commit());
  }
  return res;
}

}  // namespace blkrr
