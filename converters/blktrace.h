// blktrace(8) binary captures: per-CPU files NAME.blktrace.N of struct
// blk_io_trace events (48-byte header + pdu_len bytes of payload), each file
// sorted by time. The reader merges the files by time and turns Q (queued
// bio) or D (issued request) events into Requests; C (complete) events give
// the latency of D requests.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "core/request.h"
#include "core/trace_format.h"

namespace blkrr::blktrace {

constexpr uint32_t kMagic = 0x65617400;  // low byte: version
constexpr uint32_t kVersion = 7;         // the only version blktrace writes
constexpr size_t kEventSize = 48;

// Low 16 bits of `action`.
enum Action : uint16_t {
  kQueue = 1,
  kBackMerge = 2,
  kFrontMerge = 3,
  kGetRq = 4,
  kSleepRq = 5,
  kRequeue = 6,
  kIssue = 7,
  kComplete = 8,
  kPlug = 9,
  kUnplugIo = 10,
  kUnplugTimer = 11,
  kInsert = 12,
  kSplit = 13,
  kBounce = 14,
  kRemap = 15,
  kAbort = 16,
  kDrvData = 17,
};
// Category bits in the high 16 bits of `action`.
enum Category : uint32_t {
  kCatRead = 1u << 0,
  kCatWrite = 1u << 1,
  kCatFlush = 1u << 2,
  kCatSync = 1u << 3,
  kCatQueue = 1u << 4,
  kCatRequeue = 1u << 5,
  kCatIssue = 1u << 6,
  kCatComplete = 1u << 7,
  kCatFs = 1u << 8,
  kCatPc = 1u << 9,
  kCatNotify = 1u << 10,
  kCatAhead = 1u << 11,
  kCatMeta = 1u << 12,
  kCatDiscard = 1u << 13,
  kCatDrvData = 1u << 14,
  kCatFua = 1u << 15,
};
// Notify actions (with kCatNotify): process name, timestamp, message.
constexpr uint16_t kNotifyProcess = 0;

struct Event {
  uint32_t magic = 0;
  uint32_t sequence = 0;
  uint64_t time = 0;  // ns
  uint64_t sector = 0;
  uint32_t bytes = 0;
  uint32_t action = 0;
  uint32_t pid = 0;
  uint32_t device = 0;  // kernel dev_t (major << 20 | minor)
  uint32_t cpu = 0;
  uint16_t error = 0;
  uint16_t pdu_len = 0;

  uint16_t act() const { return static_cast<uint16_t>(action & 0xffff); }
  uint32_t cat() const { return action >> 16; }
};

// Decodes one 48-byte event header (byte-swapping if `swap`).
Event decode(const unsigned char* p, bool swap);
// Operation and request flags from the category bits (and the size, since a
// flush without data is the flush operation itself).
void op_and_flags(const Event& e, Op& op, uint16_t& flags);

// Pairs issue (D) events with their completions (C) by device and sector and
// hands the requests out in issue order, each once it completed or once no
// completion came within 10 s of trace time. Memory: the requests in flight,
// at most kMaxInFlight: beyond that the oldest goes out without a completion
// (counted, so a capture without completions cannot exhaust memory).
constexpr size_t kMaxInFlight = 1u << 18;
class Pairer {
 public:
  explicit Pairer(bool pair) : pair_(pair) {}
  void issue(const Request& r);
  void complete(DevT dev, uint64_t sector, uint64_t time_ns, int32_t error);
  void requeue(DevT dev, uint64_t sector);  // the last issue is void; a new D follows
  void set_now(uint64_t time_ns) {
    if (time_ns > now_) now_ = time_ns;
  }
  // Next request ready to go out; at_end: the input is exhausted.
  bool pop(Request& out, bool at_end);
  const Counters& counters() const { return counters_; }

 private:
  struct Pending {
    Request r;
    bool dead = false;
  };
  static uint64_t key_of(DevT dev, uint64_t sector) { return (sector << 12) ^ dev; }
  void forget_front_key();
  uint64_t take(DevT dev, uint64_t sector, bool& found);

  bool pair_;
  std::deque<Pending> pending_;
  uint64_t base_seq_ = 0;  // sequence number of pending_.front()
  std::unordered_map<uint64_t, std::vector<uint64_t>> by_key_;  // usually 1 each
  uint64_t now_ = 0;
  Counters counters_;
};

}  // namespace blkrr::blktrace
