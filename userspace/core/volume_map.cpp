#include "core/volume_map.h"

#include <algorithm>

#include "core/args.h"
#include "core/device.h"
#include "core/units.h"
#include "core/volume_stripes.h"

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

// "<stripes> <chunk sectors> (<dev> <offset>)+" of a striped target.
Result<ExtentMap> stripes_of(uint64_t start, uint64_t len, std::string_view params) {
  const std::string what = "device-mapper striped target at sector " + std::to_string(start);
  auto n = parse_u64(word(params, 0));
  auto chunk = parse_u64(word(params, 1));
  if (!n || !chunk || *n == 0 || *n > 4096)
    return Error(ErrorKind::kBadInput,
                 what + ": cannot read its number of stripes (1 to 4096) and chunk size");
  std::vector<std::pair<DevT, uint64_t>> members;
  for (uint64_t i = 0; i < *n; ++i) {
    auto dev = parse_majmin(word(params, 2 + 2 * i));
    auto off = parse_u64(word(params, 3 + 2 * i));
    if (!dev || !off)
      return Error(ErrorKind::kBadInput, what + ": cannot read the device and offset of stripe " +
                                             std::to_string(i) + " of " + std::to_string(*n));
    members.emplace_back(*dev, *off);
  }
  return striped_area(what, start, len, *chunk, members);
}

// The pieces of extent u (on the device `lower` maps) on the devices below,
// in u's volume sectors.
Result<ExtentMap> pieces_below(const Extent& u, const ExtentMap& lower) {
  ExtentMap out;
  if (!is_striped(u)) {  // u's device sectors, shifted to u's volume sectors
    for (auto piece : map_range(lower, u.dev_start, u.len)) {
      piece.vol_start = u.vol_start + (piece.vol_start - u.dev_start);
      out.push_back(piece);
    }
    return out;
  }
  const uint64_t end = u.dev_start + dev_len(u);
  for (const auto& l : lower) {  // u's member range through each linear piece below
    const uint64_t a = std::max(u.dev_start, l.vol_start), b = std::min(end, l.vol_start + l.len);
    if (a >= b) continue;
    if (is_striped(l))
      return Error(ErrorKind::kUnsupported,
                   "a striped level over a striped device (" + dev_to_string(u.dev) +
                       ") is not mapped; record the devices below it instead");
    auto piece = clip_device(u, a, b);
    if (!piece) continue;
    piece->dev = l.dev;
    piece->dev_start = l.dev_start + (a - l.vol_start);
    piece->reads_only = l.reads_only;
    piece->copy = l.copy;
    out.push_back(*piece);
  }
  return out;
}

Error not_held(const Extent& u, DevT lower_dev) {
  const uint64_t vol_end = u.vol_start + u.len, dev_end = u.dev_start + dev_len(u);
  return Error(
      ErrorKind::kBadInput,
      strfmt("volume sectors %llu..%llu lie on %s sectors %llu..%llu, which the "
             "device below does not hold whole",
             static_cast<unsigned long long>(u.vol_start), static_cast<unsigned long long>(vol_end),
             dev_to_string(lower_dev).c_str(), static_cast<unsigned long long>(u.dev_start),
             static_cast<unsigned long long>(dev_end)));
}

}  // namespace

Result<ExtentMap> parse_dm_target(std::string_view type, uint64_t start, uint64_t len,
                                  std::string_view params) {
  auto one = [](Result<Extent> e) -> Result<ExtentMap> {
    if (!e) return e.error();
    return ExtentMap{*e};
  };
  if (type == "linear") return one(extent_of(type, start, len, word(params, 0), word(params, 1)));
  // <cipher> <key> <iv_offset> <device> <offset>: words 3 and 4 only.
  if (type == "crypt") return one(extent_of(type, start, len, word(params, 3), word(params, 4)));
  if (type == "striped") return stripes_of(start, len, params);
  return Error(ErrorKind::kUnsupported,
               "device-mapper target '" + std::string(type) + "' at sector " +
                   std::to_string(start) +
                   " does not map the volume's sectors arithmetically onto the devices below "
                   "(blkrr follows linear, crypt and striped targets); record the devices "
                   "below it instead");
}

ExtentMap map_range(const ExtentMap& map, uint64_t sector, uint64_t n) {
  ExtentMap out;
  const uint64_t end = n > UINT64_MAX - sector ? UINT64_MAX : sector + n;
  for (const auto& e : map)
    if (auto c = clip_volume(e, sector, end)) out.push_back(*c);
  return out;
}

ExtentMap chunk_pieces(const ExtentMap& map, uint64_t sector, uint64_t n) {
  ExtentMap out;
  for (const auto& e : map_range(map, sector, n))
    for_each_piece(e, e.dev_start, e.dev_start + dev_len(e),
                   [&](uint64_t d, uint64_t v, uint64_t k) {
                     out.push_back(Extent{v, k, e.dev, d, e.reads_only, e.copy});
                   });
  std::stable_sort(out.begin(), out.end(),
                   [](const Extent& a, const Extent& b) { return a.vol_start < b.vol_start; });
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
    auto pieces = pieces_below(u, lower);
    if (!pieces) return pieces.error();
    uint64_t covered = 0;  // device sectors of u held by pieces that are not other members
    for (auto& piece : *pieces) {
      if (!piece.reads_only) covered += dev_len(piece);
      piece.reads_only = piece.reads_only || u.reads_only;
      piece.copy = lower_mirrored ? u.copy * kMirrorCopyBase + piece.copy : u.copy;
      out.push_back(piece);
    }
    if (covered != dev_len(u)) return not_held(u, lower_dev);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Extent& a, const Extent& b) { return a.vol_start < b.vol_start; });
  return out;
}

ExtentMap coalesce(const ExtentMap& map) {
  ExtentMap out;
  for (const auto& e : map) {
    // A member's share of a striped area continues an earlier extent of it,
    // with the other members' extents between them in volume order.
    auto cont = std::find_if(out.rbegin(), out.rend(),
                             [&](const Extent& l) { return stripe_continues(l, e); });
    if (cont != out.rend()) {
      cont->len = e.vol_start + e.len - cont->vol_start;
      continue;
    }
    if (!out.empty()) {
      Extent& l = out.back();
      if (!is_striped(l) && !is_striped(e) && l.dev == e.dev && l.reads_only == e.reads_only &&
          l.copy == e.copy && l.vol_start + l.len == e.vol_start &&
          l.dev_start + l.len == e.dev_start) {
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
    if (e.dev != dev || sector < e.dev_start || sector - e.dev_start >= dev_len(e)) continue;
    uint64_t room = dev_len(e) - (sector - e.dev_start);  // to the end of the extent or chunk
    if (is_striped(e)) room = std::min(room, e.chunk - (sector - e.dev_start + e.phase) % e.chunk);
    if (n > room) return std::nullopt;  // runs past the extent, or into another chunk
    return volume_sector_at(e, sector);
  }
  return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> filter_ranges(const ExtentMap& map, DevT dev,
                                                         size_t max_ranges) {
  std::vector<std::pair<uint64_t, uint64_t>> r;
  for (const auto& e : map)
    if (e.dev == dev && e.len) r.emplace_back(e.dev_start, e.dev_start + dev_len(e));
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
    for_each_piece(e, r.sector, r.sector + n, [&](uint64_t, uint64_t v_sector, uint64_t k) {
      Request v = r;
      v.dev = v.part = volume;
      v.sector = v_sector;
      v.bytes = r.bytes == 0 ? 0 : static_cast<uint32_t>(k * 512);
      out.push_back(v);
    });
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
  for (const auto& e : map) {
    s +=
        strfmt("%s%llu+%llu>%s@%llu", s.empty() ? "" : ",",
               static_cast<unsigned long long>(e.vol_start), static_cast<unsigned long long>(e.len),
               dev_to_string(e.dev).c_str(), static_cast<unsigned long long>(e.dev_start));
    if (is_striped(e))
      s += strfmt("/%u.%u*%llu", e.stripe, e.stripes, static_cast<unsigned long long>(e.chunk));
    if (is_striped(e) && e.phase) s += strfmt("+%llu", static_cast<unsigned long long>(e.phase));
    if (e.reads_only) s += "(reads)";
  }
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
