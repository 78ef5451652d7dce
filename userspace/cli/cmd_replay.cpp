#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_replay(int, char**) {
  return Error("this build of blkrr has no 'replay' command yet", 2);
}

}  // namespace blkrr::cli
