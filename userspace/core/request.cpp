#include "core/request.h"

#include <algorithm>
#include <cstring>

namespace blkrr {

std::string dev_to_string(DevT d) {
  return std::to_string(dev_major(d)) + ":" + std::to_string(dev_minor(d));
}

std::string_view Request::comm_view() const {
  const char* end = std::find(comm.begin(), comm.end(), '\0');
  return {comm.data(), static_cast<size_t>(end - comm.begin())};
}

void Request::set_comm(std::string_view s) {
  comm.fill('\0');
  std::memcpy(comm.data(), s.data(), std::min(s.size(), comm.size() - 1));
}

namespace {
struct OpInfo {
  Op op;
  std::string_view name;
  char letter;
};
constexpr OpInfo kOps[] = {
    {Op::kRead, "read", 'R'},
    {Op::kWrite, "write", 'W'},
    {Op::kFlush, "flush", 'F'},
    {Op::kDiscard, "discard", 'D'},
    {Op::kSecureErase, "secure-erase", 'E'},
    {Op::kWriteZeroes, "write-zeroes", 'Z'},
    {Op::kZoneAppend, "zone-append", 'A'},
    {Op::kOther, "other", '?'},
};
struct FlagInfo {
  uint16_t bit;
  std::string_view name;
};
constexpr FlagInfo kFlags[] = {
    {kFlagSync, "sync"},         {kFlagMeta, "meta"},           {kFlagFua, "fua"},
    {kFlagPreflush, "preflush"}, {kFlagReadahead, "readahead"}, {kFlagBackground, "background"},
    {kFlagNoMerge, "nomerge"},   {kFlagIdle, "idle"},           {kFlagPrio, "prio"},
};
}  // namespace

std::string_view op_name(Op op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "other";
}

char op_letter(Op op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.letter;
  return '?';
}

std::optional<Op> parse_op(std::string_view s) {
  for (const auto& o : kOps) {
    if (s == o.name) return o.op;
    if (s.size() == 1 && (s[0] == o.letter || s[0] == o.letter + ('a' - 'A')) && o.op != Op::kOther)
      return o.op;
  }
  return std::nullopt;
}

std::string flags_to_string(uint16_t flags) {
  std::string out;
  for (const auto& f : kFlags) {
    if (flags & f.bit) {
      if (!out.empty()) out += ',';
      out += f.name;
    }
  }
  return out;
}

std::string rwbs(Op op, uint16_t flags) {
  std::string s;
  if (flags & kFlagPreflush) s += 'F';
  switch (op) {
    case Op::kWrite:
      s += 'W';
      break;
    case Op::kRead:
      s += 'R';
      break;
    case Op::kDiscard:
      s += 'D';
      break;
    case Op::kSecureErase:
      s += "DE";
      break;
    case Op::kFlush:
      s += 'F';
      break;
    case Op::kWriteZeroes:
      s += "WZ";
      break;
    case Op::kZoneAppend:
      s += "ZA";
      break;
    case Op::kOther:
      s += 'N';
      break;
  }
  if (flags & kFlagFua) s += 'F';
  if (flags & kFlagReadahead) s += 'A';
  if (flags & kFlagSync) s += 'S';
  if (flags & kFlagMeta) s += 'M';
  return s;
}

std::string rec_flags_to_string(uint8_t rf) {
  std::string out;
  auto add = [&](uint8_t bit, const char* name) {
    if (rf & bit) {
      if (!out.empty()) out += ',';
      out += name;
    }
  };
  add(kRecCompletionNotSeen, "completion-not-seen");
  add(kRecIssueNotSeen, "issue-not-seen");
  add(kRecPartial, "partial");
  add(kRecRequeued, "requeued");
  add(kRecTaskFromIssue, "task-at-issue");
  add(kRecTaskFromBio, "task-from-volume-bio");
  add(kRecKernelViaStack, "kernel-via-volume");
  add(kRecBioLevel, "bio-level");
  return out;
}

const char* request_range_error(const Request& r, bool limit_latency) {
  if (r.bytes == 0 && (r.op == Op::kRead || r.op == Op::kWrite)) return "size 0";
  if (r.bytes > kMaxRequestBytes) return "size larger than 4 GiB - 512";
  if (r.sector > (kMaxByteOffset - r.bytes) / 512) return "sector + length beyond 2^63 bytes";
  if (r.issue_ns == kNoTime) return "time out of range";
  if (r.completed()) {
    if (r.complete_ns < r.issue_ns) return "completion before issue";
    if (limit_latency && r.complete_ns - r.issue_ns > kMaxLatencyNs)
      return "latency longer than a day";
  }
  return nullptr;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], 0 if none.
size_t utf8_len(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xc2 && c <= 0xdf   ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && b(i + 1) < 0xa0) return 0;  // overlong
  if (c == 0xed && b(i + 1) > 0x9f) return 0;  // surrogates
  if (c == 0xf0 && b(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xf4 && b(i + 1) > 0x8f) return 0;  // beyond U+10FFFF
  return n;
}
}  // namespace

std::string utf8_or_replace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_len(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace blkrr
