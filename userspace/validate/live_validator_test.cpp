#include "validate/live_validator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace blkrr::validate {
namespace {

TEST(LiveValidator, UnknownDeviceIsAnErrorNamingIt) {
  auto v = LiveValidator::start("/dev/blkrr-no-such-device");
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("/dev/blkrr-no-such-device"), std::string::npos)
      << v.error().message;
}

TEST(LiveValidator, WriteCacheFromSysfs) {
  auto dir = std::filesystem::temp_directory_path() / "blkrr-validate-sysfs";
  std::filesystem::create_directories(dir / "block/sdz/queue");
  std::filesystem::create_directories(dir / "block/sdy/queue");
  std::ofstream(dir / "block/sdz/queue/write_cache") << "write back\n";
  std::ofstream(dir / "block/sdy/queue/write_cache") << "write through\n";
  EXPECT_TRUE(device_has_write_cache("sdz", dir.string()));
  EXPECT_FALSE(device_has_write_cache("sdy", dir.string()));
  EXPECT_TRUE(device_has_write_cache("sdx", dir.string()));  // unknown: expect flushes
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blkrr::validate
