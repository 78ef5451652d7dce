#include "cli/commands.h"

namespace blkrr::cli {

Result<int> cmd_convert(int, char**) {
  return Error("this build of blkrr has no 'convert' command yet", 2);
}

}  // namespace blkrr::cli
