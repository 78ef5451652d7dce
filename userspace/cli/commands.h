// Subcommands of the blkrr binary. Each returns its exit status or an Error;
// only main() turns errors into messages and exit codes.
#pragma once

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

}  // namespace blkrr::cli
