// The human summary of a conversion (stderr of blkrr convert).
#include "converters/convert.h"
#include "converters/text_io.h"
#include "core/units.h"

namespace blkrr {

namespace {

std::string ops_text(const std::map<Op, uint64_t>& m) {
  std::string s;
  for (const auto& [op, n] : m) {
    if (!n) continue;
    s += (s.empty() ? "" : ", ") + std::string(op_name(op)) + " " + std::to_string(n);
  }
  return s.empty() ? "none" : s;
}

std::string seconds(int64_t ns) {
  char b[32];
  return std::string(b, fmt_sec9(b, ns, 0));
}

}  // namespace

std::string ConvertSummary::text(bool verbose) const {
  std::string t = "blkrr convert: " + join(inputs, " ") + " (" + input_format + ") -> " +
                  join(outputs, " ") + " (" + output_format + ")\n";
  if (!dataset.empty()) {
    t += "  dataset:        " + dataset + ", time resolution " + time_resolution + "\n";
    for (const auto& a : assumptions) t += "  assumed:        " + a + "\n";
  }
  t += "  requests in:    " + std::to_string(in) + " (" + ops_text(in_by_op) + ")" +
       (input_cut ? ", read up to the end of --window/--until\n" : "\n");
  t += "  requests out:   " + std::to_string(out) + " (" + ops_text(out_by_op) + ")";
  t += passes > 1 ? " in " + std::to_string(passes) + " passes\n" : "\n";
  if (deselected)
    t += "  not selected:   " + std::to_string(deselected) + " (--pid/--comm/--cgroup/--ops)\n";
  if (outside_window) t += "  outside window: " + std::to_string(outside_window) + "\n";
  if (no_completion)
    t += "  no completion:  " + std::to_string(no_completion) + " (left out by --point complete)\n";
  uint64_t ne = 0;
  for (const auto& [op, n] : not_expressible) ne += n;
  if (ne) {
    t += "  NOT CONVERTED:  " + std::to_string(ne) + " (" + ops_text(not_expressible) + "): the " +
         output_format +
         " format cannot express them; native .blkrr, CSV, JSON (and fio for flush/discard) keep "
         "them\n";
  }
  if (reorder_full)
    t += "  reorder buffer: full " + std::to_string(reorder_full) +
         " times (too many requests within --reorder-window); the oldest were written first\n";
  if (out_of_order && reordered)
    t += "  out of order:   " + std::to_string(out_of_order) +
         " requests started earlier than one already written (raise --reorder-window)\n";
  else if (out_of_order)
    t += "  out of order:   " + std::to_string(out_of_order) +
         " requests start earlier than the one before them: the input is not sorted by time; "
         "they were written in input order\n";
  uint64_t skipped = 0;
  std::string reasons;
  for (const auto& [k, v] : source_counters) {
    if (k == "lines_skipped")
      skipped = v;
    else if (k.rfind("skipped: ", 0) == 0)
      reasons += "      " + std::to_string(v) + "  " + k.substr(9) + "\n";
  }
  if (skipped || verbose)
    t += "  skipped lines:  " + std::to_string(skipped) +
         (skipped ? " (--skip-bad):\n" + reasons : "\n");
  if (fit) t += fit->text();
  if (split) t += split->text();
  if (derived) {
    t += "  derived:        " + std::to_string(derived) + " outputs from snippets of " +
         seconds(snippet_ns) + " s, heaviest first (times below: before dealing)\n";
  }
  if (out) {
    t += "  time span:      " + seconds(first_ns) + " .. " + seconds(last_ns) + " s (" +
         seconds(last_ns - first_ns) + " s)\n";
    t += "  max sector:     " + std::to_string(max_sector) + " (the replay device needs " +
         fmt_bytes(max_sector * 512) + ")\n";
  }
  size_t zero = 0;
  for (const auto& [k, v] : source_counters) {
    if (k == "lines_skipped" || k.rfind("skipped: ", 0) == 0 || is_warning_counter(k)) continue;
    if (v == 0 && !verbose) {
      ++zero;
      continue;
    }
    t += "  " + k + ": " + std::to_string(v) + "\n";
  }
  if (zero)
    t += "  (" + std::to_string(zero) +
         (zero == 1 ? " more counter of the input is" : " more counters of the input are") +
         " 0; -v lists them)\n";
  return t;
}

}  // namespace blkrr
