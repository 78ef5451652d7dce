// Selection filters and blkreplay's pipe transformations for `blkrr convert`.
//
//   --slip EVERY:SECTORS   every EVERY-th request, shift all later sectors by SECTORS more
//   --subst R=W            turn one operation into another
//   --spread F[:A[:O]]     sector -> floor(sector*F/A)*A + sector%A + O (A = 8, O = 0)
//   --resize F[:MIN:MAX]   sectors -> clamp(floor(sectors*F), MIN, MAX)
// These follow blkreplay's pipe_slip/subst/spread/resize modules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr {

struct Selection {
  std::vector<uint32_t> pids;      // thread or process id
  std::vector<std::string> comms;  // exact task names
  std::vector<uint64_t> cgroups;   // cgroup ids
  uint32_t op_mask = 0;            // bit (1 << Op); 0 = every operation
  bool window = false;             // --window START:DURATION, relative to the first request
  int64_t window_start_ns = 0;
  int64_t window_len_ns = 0;

  bool active() const {
    return !pids.empty() || !comms.empty() || !cgroups.empty() || op_mask || window;
  }
  // Everything but the window (which needs the rebased time).
  bool matches(const Request& r) const;
};

Status parse_pid_list(std::string_view s, std::vector<uint32_t>& out);
Status parse_u64_list(std::string_view s, std::vector<uint64_t>& out);
Status parse_op_list(std::string_view s, uint32_t& mask);  // "R,W", "read,flush"
Status parse_window(std::string_view s, Selection& sel);   // "600:300", "10m:5m"

struct Transform {
  uint64_t slip_every = 0;
  int64_t slip_sectors = 0;
  bool subst = false;
  Op subst_from = Op::kRead, subst_to = Op::kWrite;
  double spread_factor = 0;  // 0 = off
  uint64_t spread_align = 8;
  int64_t spread_offset = 0;
  double resize_factor = 0;  // 0 = off
  uint64_t resize_min = 1;
  uint64_t resize_max = UINT32_MAX / 512;

  bool active() const { return slip_every || subst || spread_factor > 0 || resize_factor > 0; }
  // Applies slip, subst, spread and resize (in that order, like blkreplay's
  // pipeline). Slip keeps state: call once per request, in output order.
  void apply(Request& r);

 private:
  uint64_t slip_step_ = 0;
  int64_t slip_offset_ = 0;
};

Status parse_slip(std::string_view s, Transform& t);
Status parse_subst(std::string_view s, Transform& t);
Status parse_spread(std::string_view s, Transform& t);
Status parse_resize(std::string_view s, Transform& t);

}  // namespace blkrr
