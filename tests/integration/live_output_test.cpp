// The live commands on a standard output that fails (root only: they load
// the capture): snoop and top stop at the first failed write and end with
// status 1 and that write's own error, not a stale errno.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"
#include "tests/integration/test_top.h"

namespace blkrr::testing {
namespace {

// A standard output that fails (a full disk) ends snoop with status 1 and the
// write's own error, not a stale errno.
TEST(LiveOutput, SnoopOnAFullStandardOutputFailsWithItsReason) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(64ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  auto snoop =
      BlkrrProcess::start({"snoop", "-D", "3", "-d", loop->path()}, "", 15000, "/dev/full");
  ASSERT_TRUE(snoop.ok()) << snoop.error().message;
  sleep_ms(600);
  auto c = IoChild::spawn("blkrr-full", loop->path(), uniform(1, 5, Op::kRead, 4096, 0));
  ASSERT_TRUE(c.ok());
  c->go();
  ASSERT_EQ(c->wait(), 0);
  EXPECT_EQ(snoop->wait(), 1) << snoop->output();
  EXPECT_NE(snoop->output().find(
                "blkrr snoop: cannot write to standard output: No space left on device; stopped "
                "after "),
            std::string::npos)
      << snoop->output();
  EXPECT_EQ(snoop->output().find("requests shown"), std::string::npos) << snoop->output();
}

// top alike: a failed standard output ends it with the write's error.
TEST(LiveOutput, TopOnAFullStandardOutputFailsWithItsReason) {
  SKIP_UNLESS_CAPTURE();
  auto top = BlkrrProcess::start({"top", "-j", "1", "1"}, "", 15000, "/dev/full");
  ASSERT_TRUE(top.ok()) << top.error().message;
  EXPECT_EQ(top->wait(), 1) << top->output();
  EXPECT_NE(
      top->output().find("blkrr top: cannot write to standard output: No space left on device"),
      std::string::npos)
      << top->output();
}

}  // namespace
}  // namespace blkrr::testing
