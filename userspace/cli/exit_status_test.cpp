#include "cli/exit_status.h"

#include <gtest/gtest.h>

namespace blkrr::cli {
namespace {

TEST(ExitStatus, EveryKindHasItsStatus) {
  EXPECT_EQ(exit_status_of(ErrorKind::kUsage), 2);
  EXPECT_EQ(exit_status_of(ErrorKind::kInternal), 70);
  EXPECT_EQ(exit_status_of(ErrorKind::kInterrupted), 130);
  for (ErrorKind k : {ErrorKind::kFailed, ErrorKind::kNotFound, ErrorKind::kPermission,
                      ErrorKind::kBadInput, ErrorKind::kUnsupported, ErrorKind::kIo})
    EXPECT_EQ(exit_status_of(k), 1);
}

TEST(ExitStatus, SystemErrorsAreFailuresWhateverTheErrno) {
  for (int e : {EPERM, ENOENT, ENOSPC, EIO, EINVAL, EAGAIN})
    EXPECT_EQ(exit_status_of(Error::system("x", e).kind), kExitFailed) << e;
}

}  // namespace
}  // namespace blkrr::cli
