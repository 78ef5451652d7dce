#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_top(int, char**) {
  return Error("this build of blkrr has no 'top' command yet", 2);
}

}  // namespace blkrr::cli
