#include "core/rotation.h"

#include <sys/random.h>
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "core/trace_format.h"

namespace blkrr {

namespace {
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

std::string piece_file_name(const std::string& stem, uint64_t seq, uint64_t real_ns) {
  time_t t = static_cast<time_t>(real_ns / 1'000'000'000ull);
  tm utc{};
  gmtime_r(&t, &utc);
  char ts[32];
  strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &utc);
  char num[32];
  std::snprintf(num, sizeof(num), "%06llu", static_cast<unsigned long long>(seq));
  return stem + "." + num + "." + ts + ".blkrr";
}

std::optional<uint64_t> parse_piece_file_name(std::string_view stem_base,
                                              std::string_view file_name) {
  constexpr std::string_view kExt = ".blkrr";
  if (file_name.size() <= stem_base.size() + 1 + kExt.size() ||
      file_name.substr(0, stem_base.size()) != stem_base || file_name[stem_base.size()] != '.')
    return std::nullopt;
  std::string_view rest = file_name.substr(stem_base.size() + 1);
  if (rest.substr(rest.size() - kExt.size()) != kExt) return std::nullopt;
  rest.remove_suffix(kExt.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view seq = rest.substr(0, dot), ts = rest.substr(dot + 1);
  // YYYYMMDDTHHMMSSZ
  if (seq.size() < 6 || seq.size() > 18 || !all_digits(seq) || ts.size() != 16 ||
      !all_digits(ts.substr(0, 8)) || ts[8] != 'T' || !all_digits(ts.substr(9, 6)) || ts[15] != 'Z')
    return std::nullopt;
  uint64_t n = 0;
  for (char c : seq) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n;
}

std::string piece_stem(std::string_view path) {
  std::string_view name =
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  // BASE.NNNNNN.YYYYMMDDTHHMMSSZ.blkrr: the time is 16 characters.
  constexpr size_t kTail = 1 + 16 + 6;  // ".TIME" and ".blkrr"
  if (name.size() <= kTail) return "";
  std::string_view head = name.substr(0, name.size() - kTail);
  auto dot = head.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  std::string_view base = head.substr(0, dot);
  return parse_piece_file_name(base, name) ? std::string(base) : std::string();
}

std::vector<std::vector<std::string>> group_rotated_pieces(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> out;
  std::string prev;
  for (const auto& p : paths) {
    std::string id = recording_id_of(p);
    if (id.empty() || id != prev || out.empty())
      out.push_back({p});
    else
      out.back().push_back(p);
    prev = id;
  }
  return out;
}

std::string new_recording_id() {
  unsigned char b[16] = {};
  size_t got = 0;
  while (got < sizeof(b)) {
    ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
    if (n <= 0) break;  // EINTR or no entropy source: the clock fills the rest
    got += static_cast<size_t>(n);
  }
  if (got < sizeof(b)) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    for (size_t i = got; i < sizeof(b); ++i)
      b[i] = static_cast<unsigned char>((ts.tv_nsec >> (8 * (i % 4))) ^ (ts.tv_sec >> i));
  }
  std::string out;
  char hex[3];
  for (unsigned char c : b) {
    std::snprintf(hex, sizeof(hex), "%02x", c);
    out += hex;
  }
  return out;
}

size_t piece_of(uint64_t issue_ns, const std::vector<uint64_t>& starts) {
  auto it = std::upper_bound(starts.begin(), starts.end(), issue_ns);
  return it == starts.begin() ? 0 : static_cast<size_t>(it - starts.begin()) - 1;
}

bool piece_can_close(uint64_t end_ns, const CloseView& v) {
  if (v.held != 0 || !v.drained_since_walk || v.walk_ns < end_ns) return false;
  if (v.walk_ns - end_ns < kWalkMarginNs) return false;
  return v.oldest_inflight_ns >= end_ns;
}

std::vector<PieceFile> retention_victims(std::vector<PieceFile> closed, uint64_t keep,
                                         uint64_t max_total, uint64_t open_bytes) {
  std::sort(closed.begin(), closed.end(),
            [](const PieceFile& a, const PieceFile& b) { return a.seq < b.seq; });
  uint64_t total = open_bytes;
  for (const auto& p : closed) total += p.bytes;
  std::vector<PieceFile> out;
  size_t left = closed.size();
  for (const auto& p : closed) {
    bool too_many = keep != 0 && left > keep;
    bool too_big = max_total != 0 && total > max_total;
    if (!too_many && !too_big) break;
    out.push_back(p);
    total -= p.bytes;
    --left;
  }
  return out;
}

}  // namespace blkrr
