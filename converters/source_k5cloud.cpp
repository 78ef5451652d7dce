// Fujitsu K5cloud traces (SNIA IOTTA): CSV without a header
//   ID,Timestamp,Type,Offset,Length
// ID the virtual volume, Timestamp in seconds since the first request of the
// whole dataset (with a fraction), Type R or W, Offset and Length in bytes.
// The dataset ships one file per volume and day in tar.gz archives, which
// are read as a stream like Tencent's.
#include "converters/dataset_csv.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {
const char* parse_k5cloud(const std::string_view* f, DatasetRecord& out) {
  if (!parse_volume_id(f[0], out.volume)) return "bad ID (0..1048575)";
  if (!parse_dataset_seconds(f[1], out.time_ns)) return "bad Timestamp";
  if (!parse_rw_letter(f[2], out.op)) return "bad Type (expected R or W)";
  if (!parse_u64_field(f[3], out.offset)) return "bad Offset";
  if (!parse_u64_field(f[4], out.bytes)) return "bad Length";
  return nullptr;
}

constexpr DatasetFormat kK5cloud = {
    InputFormat::kK5cloud,
    "Fujitsu K5cloud trace",
    "ID,Timestamp,Type,Offset,Length",
    nullptr,
    5,
    "as given (seconds since the dataset's first request, with a fraction)",
    "Type R/W, Offset and Length in bytes; no completion times",
    false,
    false,
    parse_k5cloud,
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_k5cloud_source(const std::string& path,
                                                           const SourceOptions& opts) {
  return open_dataset_source(path, opts, kK5cloud);
}

}  // namespace blkrr
