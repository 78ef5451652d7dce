#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_validate(int, char**) {
  return Error("this build of blkrr has no 'validate' command yet", 2);
}

}  // namespace blkrr::cli
