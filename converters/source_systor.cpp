// SNIA IOTTA systor'17 traces: CSV with a header line
//   Timestamp,Response,IOType,LUN,Offset,Size
// Timestamp in seconds of Unix time with a fraction, Response the latency in
// seconds, IOType R or W, LUN the volume, Offset and Size in bytes.
// Some lines have an empty IOType: neither a read nor a write can be
// replayed for them, so they are left out and counted (not an error). An
// empty Response leaves the request without a completion time.
#include "converters/dataset_csv.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {
const char* parse_systor(const std::string_view* f, DatasetRecord& out) {
  if (!parse_dataset_seconds(f[0], out.time_ns)) return "bad Timestamp";
  if (!trim(f[1]).empty()) {
    if (!parse_dataset_seconds(f[1], out.latency_ns)) return "bad Response";
    if (out.latency_ns > kMaxLatencyNs) return "Response longer than a day";
  }
  if (!parse_volume_id(f[3], out.volume)) return "bad LUN (0..1048575)";
  if (!parse_u64_field(f[4], out.offset)) return "bad Offset";
  if (!parse_u64_field(f[5], out.bytes)) return "bad Size";
  if (trim(f[2]).empty()) {
    out.left_out = "lines with an empty IOType (left out)";
    return nullptr;
  }
  if (!parse_rw_letter(f[2], out.op)) return "bad IOType (expected R, W or empty)";
  return nullptr;
}

constexpr DatasetFormat kSystor = {
    InputFormat::kSystor,
    "SNIA systor'17 trace",
    "Timestamp,Response,IOType,LUN,Offset,Size",
    "Timestamp,Response,IOType,LUN,Offset,Size",
    6,
    "1 us (Unix time in seconds with six decimals)",
    "Response is the latency in seconds, Offset and Size in bytes; lines with an empty "
    "IOType are left out and counted",
    false,
    true,
    parse_systor,
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_systor_source(const std::string& path,
                                                          const SourceOptions& opts) {
  return open_dataset_source(path, opts, kSystor);
}

}  // namespace blkrr
