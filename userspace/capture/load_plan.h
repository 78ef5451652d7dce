// Which of the capture's programs to load, decided from the features the
// kernel offers (features.h) before anything is loaded: optional programs
// whose feature is missing are switched off with one line each, and the
// tracepoint prototype (with or without the request_queue argument) picks
// the program variant. Pure: unit-tested without a kernel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "capture/features.h"

namespace blkrr::capture {

struct ProgramPlan {
  bool io_start = false;       // blkrr_io_start: attribution to the creating task
  bool insert = false;         // blkrr_insert: queue time
  bool check = false;          // blkrr_check: the map-iterator checker
  bool io_done = false;        // blkrr_io_done: second completion source
  bool bio_queue = false;      // blkrr_bio_queue: attribution through stacked volumes
  bool bio_queue_arg = false;  // block_bio_queue takes the request_queue first
  // blkrr_biolvl_*: bio-level capture of selected bio-based devices
  // (block_bio_queue + block_bio_complete). Not optional: a selected
  // device needs it, so the retry keeps it.
  bool bio_level = false;
  bool idle_check = false;         // user-space sysfs idle check (no checker)
  bool queue_arg = false;          // tracepoints take the request_queue first
  bool compat = false;             // the object without fetching atomics (before 5.12)
  bool retried = false;            // the minimal plan after a failed load
  std::string denied;              // BLKRR_DENY in force (comma list), for the record
  std::vector<std::string> notes;  // one stderr line per feature gone without

  bool has_optional() const { return io_start || insert || check || io_done || bio_queue; }
  // The same plan with every optional program off (the retry after a
  // failed load); lost completions are then found by the idle check.
  ProgramPlan minimal() const;
  // What the capture runs with, for trace headers and JSON documents.
  std::map<std::string, std::string> describe() const;
};

// io_done_wanted: load block_io_done where the checker cannot run (off by
// default: measured, it does not fire for the requests whose
// block_rq_complete the kernel skips; see docs/capture.md).
// stack_wanted: the loader has pieces of stacked volumes to follow
// (block_bio_queue, when the kernel has it).
// bio_level_wanted: a device is captured at the bio level (block_bio_queue
// and block_bio_complete; when the kernel lacks either, bio_level stays off
// and the caller refuses the device: bio_level_refusal()).
ProgramPlan plan_programs(const FeatureSet& f, bool queue_time_wanted, bool io_done_wanted = false,
                          bool stack_wanted = false, bool bio_level_wanted = false);

// Why this kernel cannot capture a device at the bio level ("" when it can):
// the tracepoint missing or of an unknown prototype.
std::string bio_level_refusal(const KernelFeatures& k);

// Every program of bpf/capture.bpf.c with whether the plan loads it.
std::vector<std::pair<std::string, bool>> program_autoload(const ProgramPlan& p);

}  // namespace blkrr::capture
