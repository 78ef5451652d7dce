#include "core/record_codec.h"

#include <algorithm>
#include <cstring>

namespace blkrr {
namespace {

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ (v < 0 ? ~0ull : 0ull);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

template <class T>
void put(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    p[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <class T>
T get(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(p[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

void encode_records(const std::vector<Request>& in, std::vector<uint8_t>& out) {
  const size_t n = in.size();
  std::vector<uint8_t> rec(n * kRecordSize);
  uint64_t prev_issue = 0;
  for (size_t i = 0; i < n; ++i) {
    const Request& r = in[i];
    uint8_t* p = rec.data() + i * kRecordSize;
    put<uint64_t>(p + 0, zigzag(static_cast<int64_t>(r.issue_ns - prev_issue)));
    prev_issue = r.issue_ns;
    put<uint64_t>(p + 8,
                  r.completed() ? zigzag(static_cast<int64_t>(r.complete_ns - r.issue_ns)) + 1 : 0);
    put<uint64_t>(p + 16, r.disk_time_ns);
    put<uint64_t>(p + 24, r.sector);
    put<uint64_t>(p + 32, r.cgroup_id);
    put<uint32_t>(p + 40, r.bytes);
    put<uint32_t>(p + 44, r.dev);
    put<uint32_t>(p + 48, r.part);
    put<uint32_t>(p + 52, r.pid);
    put<uint32_t>(p + 56, r.tgid);
    put<uint32_t>(p + 60, static_cast<uint32_t>(r.error));
    p[64] = static_cast<uint8_t>(r.op);
    p[65] = r.rec_flags;
    put<uint16_t>(p + 66, r.flags);
    std::memcpy(p + 68, r.comm.data(), 16);
  }
  out.resize(rec.size());
  for (size_t b = 0; b < kRecordSize; ++b) {
    uint8_t* dst = out.data() + b * n;
    const uint8_t* src = rec.data() + b;
    for (size_t i = 0; i < n; ++i) dst[i] = src[i * kRecordSize];
  }
}

void decode_records(const std::vector<uint8_t>& raw, size_t n, std::vector<Request>& out) {
  std::vector<uint8_t> rec(n * kRecordSize);
  for (size_t b = 0; b < kRecordSize; ++b) {
    const uint8_t* src = raw.data() + b * n;
    uint8_t* dst = rec.data() + b;
    for (size_t i = 0; i < n; ++i) dst[i * kRecordSize] = src[i];
  }
  out.resize(n);
  uint64_t prev_issue = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = rec.data() + i * kRecordSize;
    Request& r = out[i];
    r.issue_ns = prev_issue + static_cast<uint64_t>(unzigzag(get<uint64_t>(p)));
    prev_issue = r.issue_ns;
    uint64_t c = get<uint64_t>(p + 8);
    r.complete_ns = c == 0 ? kNoTime : r.issue_ns + static_cast<uint64_t>(unzigzag(c - 1));
    r.disk_time_ns = get<uint64_t>(p + 16);
    r.sector = get<uint64_t>(p + 24);
    r.cgroup_id = get<uint64_t>(p + 32);
    r.bytes = get<uint32_t>(p + 40);
    r.dev = get<uint32_t>(p + 44);
    r.part = get<uint32_t>(p + 48);
    r.pid = get<uint32_t>(p + 52);
    r.tgid = get<uint32_t>(p + 56);
    r.error = static_cast<int32_t>(get<uint32_t>(p + 60));
    r.op = p[64] <= static_cast<uint8_t>(Op::kOther) ? static_cast<Op>(p[64]) : Op::kOther;
    r.rec_flags = p[65];
    r.flags = get<uint16_t>(p + 66);
    std::memcpy(r.comm.data(), p + 68, 16);
    r.comm[15] = '\0';
  }
}

void pack_columns(const std::vector<uint8_t>& in, size_t n, std::vector<uint8_t>& out) {
  out.assign(kColumnMaskBytes, 0);
  if (n == 0) return;
  bool constant[kRecordSize];
  size_t varying = 0;
  for (size_t b = 0; b < kRecordSize; ++b) {
    const uint8_t* col = in.data() + b * n;
    constant[b] = std::all_of(col + 1, col + n, [v = col[0]](uint8_t x) { return x == v; });
    if (constant[b]) {
      out[b / 8] |= static_cast<uint8_t>(1u << (b % 8));
      out.push_back(col[0]);
    } else {
      ++varying;
    }
  }
  size_t at = out.size();
  out.resize(at + varying * n);
  for (size_t b = 0; b < kRecordSize; ++b) {
    if (constant[b]) continue;
    std::memcpy(out.data() + at, in.data() + b * n, n);
    at += n;
  }
}

bool unpack_columns(const uint8_t* p, size_t len, size_t n, std::vector<uint8_t>& out) {
  if (len < kColumnMaskBytes) return false;
  size_t nconst = 0;
  for (size_t b = 0; b < kRecordSize; ++b) nconst += (p[b / 8] >> (b % 8)) & 1;
  if (p[kColumnMaskBytes - 1] >> (kRecordSize % 8)) return false;  // bits past the last column
  if (len != kColumnMaskBytes + nconst + (kRecordSize - nconst) * n) return false;
  out.resize(n * kRecordSize);
  const uint8_t* cval = p + kColumnMaskBytes;
  const uint8_t* var = cval + nconst;
  for (size_t b = 0; b < kRecordSize; ++b) {
    uint8_t* dst = out.data() + b * n;
    if ((p[b / 8] >> (b % 8)) & 1) {
      std::memset(dst, *cval++, n);
    } else {
      std::memcpy(dst, var, n);
      var += n;
    }
  }
  return true;
}

}  // namespace blkrr
