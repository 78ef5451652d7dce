// Tencent CBS block traces (SNIA IOTTA, 2018): CSV, one request per line:
//   Timestamp,Offset,Size,IOType,VolumeID
// Timestamp in whole seconds of Unix time, Offset and Size in 512-byte
// sectors, IOType 0 = read, 1 = write. Published as hourly .tgz archives,
// which are read as a stream (converters/dataset_lines.h). The seconds are
// spread over their second (spread_second_ns in converters/dataset_csv.h).
#include "converters/dataset_csv.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {
// Unix seconds up to the year 2286: more is a damaged line.
constexpr uint64_t kMaxUnixSeconds = 9999999999;

const char* parse_tencent(const std::string_view* f, DatasetRecord& out) {
  uint64_t ts, sectors;
  std::string_view type = trim(f[3]);
  if (!parse_u64_field(f[0], ts)) return "bad Timestamp";
  if (ts > kMaxUnixSeconds) return "Timestamp too large (seconds after the year 2286)";
  if (!parse_u64_field(f[1], out.offset) || out.offset > kMaxByteOffset / 512) return "bad Offset";
  if (!parse_u64_field(f[2], sectors) || sectors > kMaxRequestBytes / 512) return "bad Size";
  if (type == "0")
    out.op = Op::kRead;
  else if (type == "1")
    out.op = Op::kWrite;
  else
    return "bad IOType (expected 0 = read or 1 = write)";
  if (!parse_volume_id(f[4], out.volume)) return "bad VolumeID (0..1048575)";
  out.time_ns = ts * 1000000000u;
  out.offset *= 512;
  out.bytes = sectors * 512;
  return nullptr;
}

constexpr DatasetFormat kTencent = {
    InputFormat::kTencent,
    "Tencent CBS block trace",
    "Timestamp,Offset,Size,IOType,VolumeID",
    "Timestamp,Offset,Size,IOType,VolumeID",
    5,
    "1 s (whole seconds of Unix time)",
    "Offset and Size in 512-byte sectors, IOType 0 = read, 1 = write; no completion times",
    true,
    false,
    parse_tencent,
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_tencent_source(const std::string& path,
                                                           const SourceOptions& opts) {
  return open_dataset_source(path, opts, kTencent);
}

}  // namespace blkrr
