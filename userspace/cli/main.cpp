// blkrr: block-I/O record and replay. Dispatches to subcommands and is the
// only place where errors become messages and exit codes.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/version.h"

namespace {

struct Command {
  const char* name;
  blkrr::Result<int> (*run)(int, char**);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"record", blkrr::cli::cmd_record, "record block I/O of devices into a native trace (.blkrr)"},
    {"top", blkrr::cli::cmd_top, "live per-process disk time, bytes and requests (iotop-style)"},
    {"snoop", blkrr::cli::cmd_snoop, "one line per completed request (iosnoop-style)"},
    {"convert", blkrr::cli::cmd_convert,
     "convert traces and loads between formats, filter, transform"},
    {"replay", blkrr::cli::cmd_replay, "replay a load on a device with its original timing"},
    {"validate", blkrr::cli::cmd_validate, "check a replay result against a block-layer trace"},
    {"report", blkrr::cli::cmd_report, "plots and statistics of loads, traces and replays"},
    {"devices", blkrr::cli::cmd_devices, "list block devices as blkrr sees them"},
    {"dump", blkrr::cli::cmd_dump, "print a native trace as text or JSON"},
    {"features", blkrr::cli::cmd_features,
     "what the running kernel offers the capture, and what blkrr does without it"},
};

void usage(FILE* out) {
  std::fprintf(out,
               "Usage: blkrr <command> [options]\n\n"
               "Block-I/O record and replay for Linux (eBPF capture).\n\nCommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nRun 'blkrr <command> --help' or 'blkrr help <command>' for the options of a\n"
               "command. -d DEV, -p PID, -n COMM, -o OUT, -j (JSON), -q, -D TIME, -h and -V\n"
               "mean the same in every command.\n\n"
               "Examples:\n"
               "  blkrr record -d sda -D 60 -o prod.blkrr    record sda for a minute\n"
               "  blkrr top --disktime 1                      disk time per process every second\n"
               "  blkrr convert prod.blkrr -o prod.load.gz    make a blkreplay load\n"
               "  blkrr replay prod.load.gz /dev/sdX --validate -o run.replay.gz\n");
}

// Whatever went to standard output must have arrived (/dev/full, a closed
// pipe, a full disk): otherwise the command failed.
int stdout_status(const std::string& who, int status) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  // errno is the flush's; 0 when an earlier write failed and nothing was left.
  const int e = errno;
  std::fprintf(stderr, "%s: cannot write to standard output: %s\n", who.c_str(),
               e ? std::strerror(e) : "an earlier write failed");
  return status ? status : 1;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return blkrr::cli::kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "help" && argc >= 3) {  // blkrr help CMD = blkrr CMD --help
    static char help_flag[] = "--help";
    char* args[] = {argv[0], argv[2], help_flag, nullptr};
    return run(3, args);
  }
  if (name == "-h" || name == "--help" || name == "help") {
    usage(stdout);
    return stdout_status("blkrr", 0);
  }
  if (name == "-V" || name == "--version" || name == "version") {
    std::printf("blkrr %s\n", blkrr::version());
    return stdout_status("blkrr", 0);
  }
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    argv[1] = argv[0];  // the subcommand sees argv[0] = program, then its own args
    std::string prog = std::string("blkrr ") + c.name;
    argv[1] = prog.data();
    auto r = c.run(argc - 1, argv + 1);
    if (!r) {
      std::fflush(stdout);
      std::fprintf(stderr, "blkrr %s: %s\n", c.name, r.error().message.c_str());
      return blkrr::cli::exit_status_of(r.error().kind);
    }
    return stdout_status(prog, *r);
  }
  std::fprintf(stderr, "blkrr: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return blkrr::cli::kExitUsage;
}

}  // namespace

// Errors are values everywhere below; an exception reaching here is a bug
// (or memory exhaustion): say so instead of aborting.
namespace blkrr::cli {
void print_input_warnings(std::string_view command, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings)
    std::fprintf(stderr, "blkrr %.*s: warning: %s\n", static_cast<int>(command.size()),
                 command.data(), w.c_str());
}
}  // namespace blkrr::cli

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "blkrr: internal error: %s (please report)\n", e.what());
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(stderr, "blkrr: internal error (please report)\n");
  }
  return blkrr::cli::kExitInternal;
}
