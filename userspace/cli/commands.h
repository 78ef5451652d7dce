// Subcommands of the blkrr binary. Each returns its exit status or an Error;
// only main() turns errors into messages and exit codes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace blkrr::cli {

Result<int> cmd_record(int argc, char** argv);
Result<int> cmd_top(int argc, char** argv);
Result<int> cmd_snoop(int argc, char** argv);
Result<int> cmd_convert(int argc, char** argv);
Result<int> cmd_replay(int argc, char** argv);
Result<int> cmd_validate(int argc, char** argv);
Result<int> cmd_report(int argc, char** argv);
Result<int> cmd_report_fleet(int argc, char** argv);  // report --fleet
Result<int> cmd_devices(int argc, char** argv);
Result<int> cmd_dump(int argc, char** argv);
Result<int> cmd_features(int argc, char** argv);

// What reading an input met that is not an error (converters/source.h
// source_warnings): "blkrr COMMAND: warning: ..." on stderr, also with
// --quiet, in the same words from every command that reads the input.
void print_input_warnings(std::string_view command, const std::vector<std::string>& warnings);

}  // namespace blkrr::cli
