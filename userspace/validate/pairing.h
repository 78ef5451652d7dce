// Is this trace a recording of this replay at all? Before matching request
// by request, `validate` compares where and when the replay ran (from the
// replay result's INFO lines) with what the trace recorded (its header's
// host and devices, and its time span), so that the wrong trace is named as
// such instead of blaming the replay for the requests it "missed".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/result.h"

namespace blkrr::validate {

// Where and when a replay ran, as its result file says.
struct ReplayOrigin {
  std::string host;                        // "INFO: host NAME kernel ..."
  std::optional<DevT> device;              // "INFO: device_number MAJ:MIN" (block devices)
  std::string device_text;                 // "INFO: device ..." as written
  std::optional<uint64_t> opened_unix_ns;  // "INFO: opened_unix_ns N": the result file's creation
};
ReplayOrigin origin_from_info(const std::vector<std::string>& info_lines);

// What a trace recorded: its host and devices (native traces), and the
// wall-clock span of its requests when the header anchors its clock.
struct TraceExtent {
  std::string host;
  std::vector<DeviceInfo> devices;
  std::optional<uint64_t> first_unix_ns, last_unix_ns;
};

// Ok when nothing says the trace is of another device or time; else an
// error (kBadInput, exit status 2) that says what does not fit and what to
// give instead. `replay_span_ns`: the last submission or completion after
// the replay's start. `device_chosen`: -d picked the trace's device.
Status check_pairing(const ReplayOrigin& r, uint64_t replay_span_ns, const TraceExtent& t,
                     bool device_chosen);

// The slack allowed between the replay's run and the trace's span.
constexpr uint64_t kPairingSlackNs = 10'000'000'000;

}  // namespace blkrr::validate
