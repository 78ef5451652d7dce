#include "core/result.h"

#include <gtest/gtest.h>

#include "core/trace_format.h"

namespace blkrr {
namespace {

TEST(Error, SystemErrorsKeepTheirErrnoAndKind) {
  Error e = Error::system("cannot open 'x'", ENOENT, "check the path");
  EXPECT_EQ(e.message, "cannot open 'x': No such file or directory; check the path");
  EXPECT_EQ(e.sys_errno, ENOENT);
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_EQ(Error::system("load", EPERM).kind, ErrorKind::kPermission);
  EXPECT_EQ(Error::system("load", EACCES).kind, ErrorKind::kPermission);
  EXPECT_EQ(Error::system("write", ENOSPC).kind, ErrorKind::kIo);
  EXPECT_EQ(Error::system("attach", EOPNOTSUPP).kind, ErrorKind::kUnsupported);
  EXPECT_EQ(Error::system("x", EAGAIN).kind, ErrorKind::kFailed);
  EXPECT_EQ(Error("plain").kind, ErrorKind::kFailed);
  EXPECT_EQ(Error("plain").sys_errno, 0);
}

TEST(Error, ContextKeepsKindAndErrno) {
  Error e = Error::system("open", EPERM);
  Error c = e.context("recording sda");
  EXPECT_EQ(c.message, "recording sda: open: Operation not permitted");
  EXPECT_EQ(c.kind, ErrorKind::kPermission);
  EXPECT_EQ(c.sys_errno, EPERM);
  Error u = e.as(ErrorKind::kUsage);
  EXPECT_EQ(u.kind, ErrorKind::kUsage);
  EXPECT_EQ(u.sys_errno, EPERM);
  EXPECT_EQ(u.message, e.message);
  Status s = Error(ErrorKind::kBadInput, "bad");
  EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
}

TEST(Error, AppendKeepsKindAndErrno) {
  Error a = Error::system("cannot write out", ENOSPC).append(" (disk full?)");
  EXPECT_EQ(a.message, "cannot write out: No space left on device (disk full?)");
  EXPECT_EQ(a.kind, ErrorKind::kIo);
  EXPECT_EQ(a.sys_errno, ENOSPC);
}

// A caller can tell a missing file from the others without reading text.
TEST(Error, OpeningAMissingTraceIsNotFound) {
  auto r = TraceReader::open("/nonexistent-dir/x.blkrr");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(r.error().sys_errno, ENOENT);
}

}  // namespace
}  // namespace blkrr
