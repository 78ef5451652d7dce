// The trace model shared by every part of blkrr: one block-layer request.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace blkrr {

// Operation of a request. Values are blkrr's own (stable on disk), not the
// kernel's REQ_OP_* numbers; the BPF side translates.
enum class Op : uint8_t {
  kRead = 0,
  kWrite = 1,
  kFlush = 2,
  kDiscard = 3,
  kSecureErase = 4,
  kWriteZeroes = 5,
  kZoneAppend = 6,
  kOther = 7,
};

// Request flags (bit set, stable on disk).
enum ReqFlag : uint16_t {
  kFlagSync = 1u << 0,
  kFlagMeta = 1u << 1,
  kFlagFua = 1u << 2,
  kFlagPreflush = 1u << 3,
  kFlagReadahead = 1u << 4,
  kFlagBackground = 1u << 5,
  kFlagNoMerge = 1u << 6,
  kFlagIdle = 1u << 7,
  kFlagPrio = 1u << 8,
};

// What the recorder knows about how complete a record is.
enum RecordFlag : uint8_t {
  kRecCompletionNotSeen = 1u << 0,  // issue seen, completion never delivered
  kRecIssueNotSeen = 1u << 1,       // completion of a request issued before attach
  kRecPartial = 1u << 2,            // completed in several partial completions
  kRecRequeued = 1u << 3,           // requeued at least once before completing
  kRecTaskFromIssue = 1u << 4,      // attributed at issue (no block_io_start seen)
  // Below a stacked volume (dm, md): charged to the task that submitted the
  // volume's bio, not to the stacking driver's thread that issued it.
  kRecTaskFromBio = 1u << 5,
  // Below a stacked volume, from a kernel thread (writeback, md's own I/O,
  // or a driver thread whose submitter was not found).
  kRecKernelViaStack = 1u << 6,
  // A bio of a device captured at the bio level (a dm, md or zram device
  // whose mapping blkrr cannot follow to its disks): the device's own bio
  // from queue to completion, not a disk request.
  kRecBioLevel = 1u << 7,
};

// Device numbers are kept in the kernel's internal encoding (major << 20 | minor).
using DevT = uint32_t;
constexpr DevT make_dev(uint32_t major, uint32_t minor) {
  return (major << 20) | (minor & 0xfffff);
}
constexpr uint32_t dev_major(DevT d) {
  return d >> 20;
}
constexpr uint32_t dev_minor(DevT d) {
  return d & 0xfffff;
}
std::string dev_to_string(DevT d);  // "7:0"

constexpr uint64_t kNoTime = ~0ull;  // completion time unknown

struct Request {
  uint64_t issue_ns = 0;           // CLOCK_MONOTONIC of block_rq_issue (or load start time)
  uint64_t complete_ns = kNoTime;  // CLOCK_MONOTONIC of the final completion
  uint64_t disk_time_ns = 0;       // adaptive disk time charged to this request
  uint64_t sector = 0;             // start sector (512 B) on the whole disk
  uint64_t cgroup_id = 0;
  uint32_t bytes = 0;
  DevT dev = 0;       // whole disk
  DevT part = 0;      // partition the request fell in (== dev if none)
  uint32_t pid = 0;   // thread id of the task that created the request
  uint32_t tgid = 0;  // process id
  int32_t error = 0;  // negative errno of the completion, 0 = ok
  Op op = Op::kRead;
  uint16_t flags = 0;           // ReqFlag bits
  uint8_t rec_flags = 0;        // RecordFlag bits
  std::array<char, 16> comm{};  // NUL-padded task name

  bool completed() const { return complete_ns != kNoTime; }
  uint64_t latency_ns() const { return completed() ? complete_ns - issue_ns : 0; }
  uint32_t sectors() const { return bytes / 512; }
  std::string_view comm_view() const;
  void set_comm(std::string_view s);
};

// Limits every reader enforces (docs/reliability.md).
constexpr uint32_t kMaxRequestBytes = 0xfffffe00u;  // 4 GiB - 512: whole sectors in 32 bits
constexpr uint64_t kMaxByteOffset = 1ull << 63;     // sector * 512 + bytes
constexpr uint64_t kMaxLatencyNs = 86400ull * 1000000000ull;  // one day
// Why the request cannot be right, or nullptr: size 0 for a read or write,
// a size beyond kMaxRequestBytes, an end beyond 2^63 bytes, a completion
// before its issue or (limit_latency) more than a day later, an issue time
// of ~0. Native traces pass limit_latency = false: the recorder measured it.
const char* request_range_error(const Request& r, bool limit_latency = true);

// `s` with every byte that is not part of a valid UTF-8 sequence replaced by
// U+FFFD (task names are raw kernel bytes; JSON output must be UTF-8).
std::string utf8_or_replace(std::string_view s);

std::string_view op_name(Op op);                 // "read", "write", "flush", ...
char op_letter(Op op);                           // R W F D E Z A ?
std::optional<Op> parse_op(std::string_view s);  // accepts names and letters
std::string flags_to_string(uint16_t flags);     // "sync,meta" or ""
// blktrace-style RWBS string, e.g. "WS", "FWFS", "RA", "D".
std::string rwbs(Op op, uint16_t flags);
std::string rec_flags_to_string(uint8_t rec_flags);

}  // namespace blkrr
