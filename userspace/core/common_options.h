// The options every blkrr command spells the same way: one table, one meaning
// per letter and per long name (docs/cli.md says why each letter was chosen:
// bcc/libbpf-tools and iotop where they agree, bcc where they do not).
// ArgParser registers them only through this table (ArgParser::common), and
// tests/cli checks every command's --help against it.
#pragma once

#include <span>
#include <string_view>

namespace blkrr {

enum class CommonOpt {
  kHelp,
  kVersion,
  kDevice,     // -d DEV: a disk or partition (bcc biosnoop/biolatency -d DISK)
  kPid,        // -p PID: a process, the pid ps shows (tgid), all its threads
  kComm,       // -n COMM: a task name (bcc opensnoop/execsnoop -n NAME)
  kCgroup,     // --cgroup: a cgroup (long only: -c was the task name before)
  kOutput,     // -o FILE|DIR: the command's output
  kJson,       // -j: JSON on standard output
  kJsonFile,   // --json-file FILE: JSON into a file
  kQuiet,      // -q: no progress line, no summary on stderr
  kDuration,   // -D TIME: how long to run
  kVerbose,    // -v: every counter, also those that are zero
  kOverwrite,  // --overwrite: replace existing output files (long only, never implied)
};

struct CommonOptionSpec {
  CommonOpt id;
  char short_name;  // 0: long only
  std::string_view long_name;
  std::string_view metavar;  // empty for switches; a command may name it more precisely
  std::string_view meaning;  // the one meaning, as docs/cli.md states it
};

// The table, in the order help lists the options.
std::span<const CommonOptionSpec> common_options();
const CommonOptionSpec& common_option(CommonOpt id);
// The entry a short letter or a long name belongs to, or nullptr.
const CommonOptionSpec* common_option_by_short(char c);
const CommonOptionSpec* common_option_by_long(std::string_view name);

}  // namespace blkrr
