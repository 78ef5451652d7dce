#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_report(int, char**) {
  return Error("this build of blkrr has no 'report' command yet", 2);
}

}  // namespace blkrr::cli
