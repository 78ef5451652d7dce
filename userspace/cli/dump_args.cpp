#include "cli/dump_args.h"

#include "core/args.h"

namespace blkrr::cli {

Result<DumpArgs> parse_dump_args(int argc, char** argv) {
  DumpArgs a;
  ArgParser p(
      "blkrr dump", "[--json] [--no-header] FILE.blkrr|- [PIECE.blkrr...]",
      "Print a native trace: the header, one request per line, and the capture counters.\n"
      "The pieces of one rotated recording (record --rotate) are printed as one trace, in\n"
      "their order, with a warning for any gap between them.\n"
      "Times are seconds since the first record's issue (text), or nanoseconds (JSON: start_ns\n"
      "since the first record's issue, issue_ns and complete_ns on the recording host's\n"
      "CLOCK_MONOTONIC; the blkrr.requests schema of docs/json.md).");
  p.common_flag(CommonOpt::kJson, &a.json,
                "JSON lines: a header object, one object per request, a counters object");
  p.flag('H', "no-header", &a.no_header, "records only (text mode)");
  p.positionals("FILE", &a.files, 1, 1000000);
  p.examples(
      "  blkrr dump prod.blkrr | head\n  blkrr dump prod.*.blkrr | tail\n"
      "  blkrr dump --json prod.blkrr | jq "
      "'select(.comm==\"mysqld\")'");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) a.help_printed = true;
  return a;
}

}  // namespace blkrr::cli
