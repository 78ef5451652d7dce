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
  return out;
}

}  // namespace blkrr
