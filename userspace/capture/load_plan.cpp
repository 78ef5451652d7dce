#include "capture/load_plan.h"

namespace blkrr::capture {
namespace {

std::string line_for(const FeatureSet& f, const std::string& name) {
  for (const auto& row : feature_rows(f))
    if (row.name == name) return degrade_line(row);
  return "blkrr: " + name + " off";
}

}  // namespace

ProgramPlan plan_programs(const FeatureSet& f, bool queue_time_wanted, bool io_done_wanted,
                          bool stack_wanted, bool bio_level_wanted) {
  ProgramPlan p;
  p.queue_arg = f.queue_arg();
  p.compat = f.compat_object();
  if (p.compat) p.notes.push_back(line_for(f, "bpf_atomics"));
  for (const auto& d : f.denied) p.denied += (p.denied.empty() ? "" : ",") + d;
  p.io_start = f.io_start();
  p.check = f.map_iter();
  p.io_done = io_done_wanted && !p.check && f.io_done();
  p.idle_check = !p.check;
  // Without block_io_start the insert program also attributes requests to
  // the task that queued them (block_rq_insert runs in its context).
  p.insert = f.rq_insert() && (queue_time_wanted || !p.io_start);
  p.bio_queue = stack_wanted && f.kernel.has_bio_queue();
  p.bio_queue_arg = f.kernel.bio_queue_args == 2;
  p.bio_level = bio_level_wanted && f.kernel.has_bio_level();
  if (stack_wanted && !p.bio_queue) p.notes.push_back(line_for(f, "block_bio_queue"));
  if (!p.check) p.notes.push_back(line_for(f, "map_iter"));
  if (!p.io_start) p.notes.push_back(line_for(f, "block_io_start"));
  if (io_done_wanted && !p.check && !p.io_done) p.notes.push_back(line_for(f, "block_io_done"));
  if ((queue_time_wanted || !p.io_start) && !p.insert)
    p.notes.push_back(line_for(f, "block_rq_insert"));
  return p;
}

std::string bio_level_refusal(const KernelFeatures& k) {
  auto what = [](const char* tp, int args, int want) -> std::string {
    if (args < 0) return std::string(tp) + " is not in this kernel's BTF";
    if (args != want && !(want == 1 && args == 2))
      return std::string(tp) + " has a prototype of " + std::to_string(args) +
             " arguments, which blkrr does not know";
    return "";
  };
  std::string why = what("block_bio_queue", k.bio_queue_args, 1);
  if (why.empty()) why = what("block_bio_complete", k.bio_complete_args, 2);
  return why;
}

std::vector<std::pair<std::string, bool>> program_autoload(const ProgramPlan& p) {
  const bool q = p.queue_arg;
  return {{"blkrr_issue", !q},
          {"blkrr_issue_q", q},
          {"blkrr_complete", true},
          {"blkrr_requeue", !q},
          {"blkrr_requeue_q", q},
          {"blkrr_insert", p.insert && !q},
          {"blkrr_insert_q", p.insert && q},
          {"blkrr_io_start", p.io_start},
          {"blkrr_io_done", p.io_done},
          {"blkrr_bio_queue", p.bio_queue && !p.bio_queue_arg},
          {"blkrr_bio_queue_q", p.bio_queue && p.bio_queue_arg},
          {"blkrr_biolvl_queue", p.bio_level && !p.bio_queue_arg},
          {"blkrr_biolvl_queue_q", p.bio_level && p.bio_queue_arg},
          {"blkrr_biolvl_complete", p.bio_level},
          {"blkrr_check", p.check}};
}

ProgramPlan ProgramPlan::minimal() const {
  ProgramPlan p;
  p.queue_arg = queue_arg;
  p.bio_queue_arg = bio_queue_arg;
  p.bio_level = bio_level;
  p.compat = compat;
  p.denied = denied;
  p.idle_check = true;
  p.retried = true;
  p.notes.push_back(
      "blkrr: loading with the optional programs failed; loaded again without them "
      "(attribution at issue, no queue time, lost completions by the sysfs idle check)");
  return p;
}

std::map<std::string, std::string> ProgramPlan::describe() const {
  std::map<std::string, std::string> d;
  d["attribution"] = io_start ? "block_io_start"
                     : insert ? "block_rq_insert (queued requests), else block_rq_issue"
                              : "block_rq_issue";
  d["queue_time"] = insert ? "block_rq_insert" : "off";
  if (check)
    d["lost_completions"] = "checker (map iterator)";
  else if (io_done)
    d["lost_completions"] = "block_io_done + sysfs idle check";
  else
    d["lost_completions"] = "sysfs idle check";
  d["tracepoint_args"] = queue_arg ? "request_queue, request (before 5.11)" : "request";
  d["bpf_object"] = compat ? "without fetching atomics or spin locks (before 5.12)" : "standard";
  if (bio_queue) d["stack_attribution"] = "block_bio_queue (submitters of stacked volumes' bios)";
  if (bio_level) d["bio_level"] = "block_bio_queue + block_bio_complete (bio-based devices)";
  if (retried) d["optional_programs"] = "off after a failed load";
  if (!denied.empty()) d["denied"] = denied;
  return d;
}

}  // namespace blkrr::capture
