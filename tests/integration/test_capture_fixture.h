// A scratch loop device with a capture of it, for the capture tests: the
// set-up every one of them shares (skip unless capture can run here, device,
// selection, start) and the two things they do with it (run a child's load
// to its end, collect what the capture delivered).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {

class CaptureOnLoop : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_UNLESS_CAPTURE(); }

  // A device of `bytes` and a capture of it; `tune` adjusts the config
  // (the selection is already in it). Use with ASSERT_NO_FATAL_FAILURE.
  void start(uint64_t bytes, const std::function<void(CaptureConfig&)>& tune = {}) {
    auto d = LoopDevice::create(bytes);
    ASSERT_TRUE(d) << d.error().message;
    dev_.emplace(std::move(*d));
    auto sel = resolve_device(dev_->path());
    ASSERT_TRUE(sel) << sel.error().message;
    cfg_.devices.push_back(*sel);
    if (tune) tune(cfg_);
    auto c = Capture::start(cfg_);
    ASSERT_TRUE(c) << c.error().message;
    cap_ = std::move(*c);
  }

  // Children named after `comms[i]` run `loads[i]` at once; each must end 0.
  void run(const std::vector<std::string>& comms,
           const std::vector<std::vector<std::vector<IoOp>>>& loads) {
    std::vector<IoChild> kids;
    for (size_t i = 0; i < comms.size(); i++) {
      auto k = IoChild::spawn(comms[i], dev_->path(), loads[i]);
      ASSERT_TRUE(k) << k.error().message;
      kids.push_back(std::move(*k));
    }
    for (auto& k : kids) k.go();
    for (auto& k : kids) EXPECT_EQ(k.wait(), 0) << "a workload child failed";
  }
  void run(const std::string& comm, const std::vector<std::vector<IoOp>>& load) {
    run(std::vector<std::string>{comm}, {load});
  }

  // One poll of `ms` and the stop: every request the capture delivered.
  std::vector<Request> drain(int ms = 100) {
    std::vector<Request> got;
    auto fn = [&](const Request& r) { got.push_back(r); };
    EXPECT_TRUE(cap_->poll(ms, fn));
    EXPECT_TRUE(cap_->stop(fn));
    return got;
  }

  LoopDevice& dev() { return *dev_; }
  Capture& cap() { return *cap_; }

 private:
  std::optional<LoopDevice> dev_;
  CaptureConfig cfg_;
  std::unique_ptr<Capture> cap_;
};

}  // namespace blkrr::testing
