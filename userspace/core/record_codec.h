// Fixed 84-byte on-disk record layout of native trace blocks, and the
// transform that makes it compress well: times become deltas, then the
// records are byte-shuffled (byte k of every record stored together).
//
//  off size field
//    0   8  issue time: zigzag(issue - previous record's issue)
//    8   8  completion: 0 = not seen, else zigzag(complete - issue) + 1
//   16   8  disk time (ns)          24   8  sector
//   32   8  cgroup id               40   4  bytes
//   44   4  whole-disk dev_t        48   4  partition dev_t
//   52   4  pid (thread)            56   4  tgid
//   60   4  error (int32)           64   1  op   65 1 record flags  66 2 request flags
//   68  16  comm
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/request.h"

namespace blkrr {

constexpr size_t kRecordSize = 84;

void encode_records(const std::vector<Request>& in, std::vector<uint8_t>& out);
void decode_records(const std::vector<uint8_t>& raw, size_t nrec, std::vector<Request>& out);

// Column elision (blocks tagged BLKC, format 1.1): of the nrec x 84 shuffled
// bytes, a byte column that holds one value in every record is stored once.
//   u8 mask[11]   bit k (byte k/8, bit k%8) set: column k is constant
//   the value of each constant column, in column order
//   every other column, nrec bytes each, in column order
// Fields that do not change within a block (device, pid, comm, high bytes of
// the times...) then cost zlib nothing to scan: the recorder's compression
// time is proportional to the bytes it is given.
constexpr size_t kColumnMaskBytes = (kRecordSize + 7) / 8;
void pack_columns(const std::vector<uint8_t>& shuffled, size_t nrec, std::vector<uint8_t>& out);
// False when `packed` is not a valid packing of nrec records.
bool unpack_columns(const uint8_t* packed, size_t len, size_t nrec, std::vector<uint8_t>& shuffled);

}  // namespace blkrr
