#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_snoop(int, char**) {
  return Error("this build of blkrr has no 'snoop' command yet", 2);
}

}  // namespace blkrr::cli
