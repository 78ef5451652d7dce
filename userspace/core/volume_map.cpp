#include "core/volume_map.h"

#include <algorithm>

#include "core/args.h"
#include "core/device.h"
#include "core/units.h"

namespace blkrr {
namespace {

// The n-th blank-separated word of `s` (0-based), or "".
std::string_view word(std::string_view s, size_t n) {
  size_t i = 0;
  for (;;) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (i == j) return {};
    if (n-- == 0) return s.substr(i, j - i);
    i = j;
  }
}

Result<Extent> extent_of(std::string_view type, uint64_t start, uint64_t len,
                         std::string_view dev_word, std::string_view offset_word) {
  auto dev = parse_majmin(dev_word);
  auto off = parse_u64(offset_word);
  if (!dev || !off || *off > UINT64_MAX - len)
    return Error(ErrorKind::kBadInput, "device-mapper " + std::string(type) + " target at sector " +
                                           std::to_string(start) +
                                           ": cannot read its device and offset");
  return Extent{start, len, *dev, *off};
}

}  // namespace

Result<Extent> parse_dm_target(std::string_view type, uint64_t start, uint64_t len,
                               std::string_view params) {
  if (type == "linear") return extent_of(type, start, len, word(params, 0), word(params, 1));
  // <cipher> <key> <iv_offset> <device> <offset>: words 3 and 4 only.
  if (type == "crypt") return extent_of(type, start, len, word(params, 3), word(params, 4));
  return Error(ErrorKind::kUnsupported,
               "device-mapper target '" + std::string(type) + "' at sector " +
                   std::to_string(start) +
                   " does not map the volume's sectors one to one onto one device");
}

ExtentMap map_range(const ExtentMap& map, uint64_t sector, uint64_t n) {
  ExtentMap out;
  const uint64_t end = sector + n;
  for (const auto& e : map) {
    const uint64_t a = std::max(sector, e.vol_start);
    const uint64_t b = std::min(end, e.vol_start + e.len);
    if (a >= b) continue;
    out.push_back(Extent{a, b - a, e.dev, e.dev_start + (a - e.vol_start), e.reads_only, e.copy});
  }
  return out;
}

Result<ExtentMap> compose(const ExtentMap& upper, DevT lower_dev, const ExtentMap& lower) {
  ExtentMap out;
  // Copies multiply only through a level that is a mirror itself.
  const bool lower_mirrored = !mirror_copies(lower).empty();
  for (const auto& u : upper) {
    if (u.dev != lower_dev) {
      out.push_back(u);
      continue;
    }
    uint64_t covered = 0;  // by the pieces that are not a mirror's other members
    for (auto piece : map_range(lower, u.dev_start, u.len)) {
      if (!piece.reads_only) covered += piece.len;
      piece.vol_start = u.vol_start + (piece.vol_start - u.dev_start);
      piece.reads_only = piece.reads_only || u.reads_only;
      piece.copy = lower_mirrored ? u.copy * kMirrorCopyBase + piece.copy : u.copy;
      out.push_back(piece);
    }
    if (covered != u.len) {
      const uint64_t vol_end = u.vol_start + u.len, dev_end = u.dev_start + u.len;
      return Error(
          ErrorKind::kBadInput,
          strfmt("volume sectors %llu..%llu lie on %s sectors %llu..%llu, which the "
                 "device below does not hold whole",
                 static_cast<unsigned long long>(u.vol_start),
                 static_cast<unsigned long long>(vol_end), dev_to_string(lower_dev).c_str(),
                 static_cast<unsigned long long>(u.dev_start),
                 static_cast<unsigned long long>(dev_end)));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Extent& a, const Extent& b) { return a.vol_start < b.vol_start; });
  return out;
}

ExtentMap coalesce(const ExtentMap& map) {
  ExtentMap out;
  for (const auto& e : map) {
    if (!out.empty()) {
      Extent& l = out.back();
      if (l.dev == e.dev && l.reads_only == e.reads_only && l.copy == e.copy &&
          l.vol_start + l.len == e.vol_start && l.dev_start + l.len == e.dev_start) {
        l.len += e.len;
        continue;
      }
    }
    out.push_back(e);
  }
  return out;
}

std::optional<uint64_t> volume_sector_of(const ExtentMap& map, DevT dev, uint64_t sector,
                                         uint64_t n) {
  for (const auto& e : map) {
    if (e.dev != dev || sector < e.dev_start || sector - e.dev_start >= e.len) continue;
    if (sector - e.dev_start + n > e.len) return std::nullopt;  // runs past the extent
    return e.vol_start + (sector - e.dev_start);
  }
  return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> filter_ranges(const ExtentMap& map, DevT dev,
                                                         size_t max_ranges) {
  std::vector<std::pair<uint64_t, uint64_t>> r;
  for (const auto& e : map)
    if (e.dev == dev && e.len) r.emplace_back(e.dev_start, e.dev_start + e.len);
  std::sort(r.begin(), r.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& x : r) {
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  while (max_ranges > 0 && out.size() > max_ranges) {
    size_t best = 0;  // the gap after out[best] is the smallest
    for (size_t i = 1; i + 1 < out.size(); ++i)
      if (out[i + 1].first - out[i].second < out[best + 1].first - out[best].second) best = i;
    out[best].second = out[best + 1].second;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return out;
}

std::vector<Request> requests_on_volume(const Request& r, const ExtentMap& map, DevT volume) {
  std::vector<Request> out;
  const uint64_t n = std::max<uint64_t>(r.sectors(), 1);
  const bool read = r.op == Op::kRead;
  for (const auto& e : map) {
    if (e.dev != r.dev || (e.reads_only && !read)) continue;
    const uint64_t a = std::max(r.sector, e.dev_start);
    const uint64_t b = std::min(r.sector + n, e.dev_start + e.len);
    if (a >= b) continue;
    Request v = r;
    v.dev = v.part = volume;
    v.sector = e.vol_start + (a - e.dev_start);
    v.bytes = r.bytes == 0 ? 0 : static_cast<uint32_t>((b - a) * 512);
    out.push_back(v);
  }
  if (out.size() < 2) return out;
  std::sort(out.begin(), out.end(), [&](const Request& x, const Request& y) {
    return x.sector < y.sector;  // the order of the pieces in the volume
  });
  uint64_t left = r.disk_time_ns, bytes = 0;
  for (const auto& v : out) bytes += v.bytes;
  for (size_t i = 0; i < out.size(); ++i) {  // disk time shared by bytes, the last takes the rest
    uint64_t share = i + 1 == out.size()
                         ? left
                         : static_cast<uint64_t>(static_cast<double>(r.disk_time_ns) *
                                                 out[i].bytes / static_cast<double>(bytes));
    out[i].disk_time_ns = std::min(share, left);
    left -= out[i].disk_time_ns;
  }
  return out;
}

std::vector<uint32_t> mirror_copies(const ExtentMap& map) {
  std::vector<uint32_t> out;
  for (const auto& e : map)
    if (e.copy != 0) out.push_back(e.copy);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ExtentMap mirror_view(const ExtentMap& map, uint32_t copy) {
  ExtentMap out = map;
  for (auto& e : out) e.reads_only = e.copy != copy;
  return out;
}

std::string format_extents(const ExtentMap& map) {
  std::string s;
  for (const auto& e : map)
    s += strfmt("%s%llu+%llu>%s@%llu%s", s.empty() ? "" : ",",
                static_cast<unsigned long long>(e.vol_start),
                static_cast<unsigned long long>(e.len), dev_to_string(e.dev).c_str(),
                static_cast<unsigned long long>(e.dev_start), e.reads_only ? "(reads)" : "");
  return s;
}

std::vector<VolumePiece> attribution_pieces(const std::vector<std::pair<DevT, ExtentMap>>& volumes,
                                            size_t max, std::vector<DevT>* left_out) {
  std::vector<VolumePiece> out;
  std::vector<DevT> seen;
  for (const auto& [volume, map] : volumes) {
    if (std::find(seen.begin(), seen.end(), volume) != seen.end()) continue;
    seen.push_back(volume);
    ExtentMap pieces = coalesce(map);
    if (out.size() + pieces.size() > max) {
      if (left_out) left_out->push_back(volume);
      continue;
    }
    for (const auto& e : pieces) out.push_back({volume, e});
  }
  return out;
}

}  // namespace blkrr
