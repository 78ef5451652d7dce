// Alibaba cloud block traces (alibaba/block-traces, 2020): CSV without a
// header, one request per line:
//   device_id,opcode,offset,length,timestamp
// device_id the virtual disk, opcode R or W, offset and length in bytes,
// timestamp in microseconds of absolute Unix time.
#include "converters/dataset_csv.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {
const char* parse_alibaba(const std::string_view* f, DatasetRecord& out) {
  uint64_t ts;
  if (!parse_volume_id(f[0], out.volume)) return "bad device_id (0..1048575)";
  if (!parse_rw_letter(f[1], out.op)) return "bad opcode (expected R or W)";
  if (!parse_u64_field(f[2], out.offset)) return "bad offset";
  if (!parse_u64_field(f[3], out.bytes)) return "bad length";
  if (!parse_u64_field(f[4], ts)) return "bad timestamp";
  if (ts >= (uint64_t{1} << 62) / 1000) return "timestamp too large";
  out.time_ns = ts * 1000;
  return nullptr;
}

constexpr DatasetFormat kAlibaba = {
    InputFormat::kAlibaba,
    "Alibaba cloud block trace",
    "device_id,opcode,offset,length,timestamp",
    nullptr,
    5,
    "1 us (absolute Unix time in microseconds)",
    "opcode R/W, offset and length in bytes; no completion times",
    false,
    false,
    parse_alibaba,
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_alibaba_source(const std::string& path,
                                                           const SourceOptions& opts) {
  return open_dataset_source(path, opts, kAlibaba);
}

}  // namespace blkrr
