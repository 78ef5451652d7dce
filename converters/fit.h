// Fitting a load onto a target of another size for the tools that replay
// convert's outputs (fio --read_iolog, blkreplay): `convert --wrap SIZE|DEV`
// and `--scale SIZE|DEV` map positions as `blkrr replay` does (device_map.h).
#pragma once

#include <cstdint>
#include <string>

#include "converters/device_map.h"
#include "core/result.h"

namespace blkrr {

struct FitOptions {
  MapMode mode = MapMode::kWrap;
  uint64_t target_bytes = 0;  // the size positions must fit in
  std::string target;         // what the user named: "10G" or "/dev/sdb"
};

// "--wrap 10G" or "--scale /dev/sdb": a size ("512", "4k", "30G") or a block
// device or regular file whose size is read. Usage errors name the option.
Result<FitOptions> parse_fit(MapMode mode, const std::string& arg);

// What the mapping did, for the convert summary.
struct FitReport {
  FitOptions options;
  uint64_t load_end_sector = 0;  // before mapping (after the transforms)
  uint64_t wrapped = 0, clamped = 0, too_large = 0;
  std::string text() const;  // one or two summary lines, in plain words
};

}  // namespace blkrr
