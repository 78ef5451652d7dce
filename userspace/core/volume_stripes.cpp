#include "core/volume_stripes.h"

#include <algorithm>

#include "core/args.h"
#include "core/device.h"
#include "core/units.h"

namespace blkrr {
namespace {

// Where volume sector v lies from the start of vol_start's chunk.
uint64_t pos(const Extent& e, uint64_t v) {
  return e.phase + (v - e.vol_start);
}

// The device sector of volume sector v, which lies in a chunk of the member.
uint64_t device_sector_at(const Extent& e, uint64_t v) {
  if (!is_striped(e)) return e.dev_start + (v - e.vol_start);
  const uint64_t p = pos(e, v);
  return e.dev_start + ((p / e.chunk / e.stripes) * e.chunk + p % e.chunk - e.phase);
}

// The volume sector at pattern position p (p >= phase) of e.
uint64_t volume_at_pos(const Extent& e, uint64_t p) {
  return e.vol_start + (p - e.phase);
}

Error area_error(const std::string& what, const std::string& why) {
  return Error(ErrorKind::kBadInput, what + ": " + why);
}

}  // namespace

uint64_t dev_len(const Extent& e) {
  if (!is_striped(e) || e.len == 0) return e.len;
  return device_sector_at(e, e.vol_start + e.len - 1) + 1 - e.dev_start;
}

uint64_t volume_sector_at(const Extent& e, uint64_t d) {
  if (!is_striped(e)) return e.vol_start + (d - e.dev_start);
  const uint64_t m = d - e.dev_start + e.phase;
  return volume_at_pos(e, (m / e.chunk) * e.stripes * e.chunk + m % e.chunk);
}

std::optional<Extent> clip_volume(const Extent& e, uint64_t a, uint64_t b) {
  a = std::max(a, e.vol_start);
  b = std::min(b, e.vol_start + e.len);
  if (a >= b) return std::nullopt;
  if (is_striped(e)) {
    const uint64_t s = e.stripes, c = e.chunk;
    uint64_t k = pos(e, a) / c;
    if (k % s) a = volume_at_pos(e, (k / s + 1) * s * c);  // the member's next chunk
    if (a >= b) return std::nullopt;
    k = pos(e, b - 1) / c;
    if (k % s) b = volume_at_pos(e, (k - k % s) * c + c - 1) + 1;  // its chunk before
    if (a >= b) return std::nullopt;
  }
  Extent out = e;
  out.vol_start = a;
  out.len = b - a;
  out.dev_start = device_sector_at(e, a);
  if (is_striped(e)) out.phase = pos(e, a) % e.chunk;
  return out;
}

std::optional<Extent> clip_device(const Extent& e, uint64_t a, uint64_t b) {
  a = std::max(a, e.dev_start);
  b = std::min(b, e.dev_start + dev_len(e));
  if (a >= b) return std::nullopt;
  Extent out = e;
  out.vol_start = volume_sector_at(e, a);
  out.len = volume_sector_at(e, b - 1) + 1 - out.vol_start;
  out.dev_start = a;
  if (is_striped(e)) out.phase = (a - e.dev_start + e.phase) % e.chunk;
  return out;
}

void for_each_piece(const Extent& e, uint64_t a, uint64_t b,
                    const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
  a = std::max(a, e.dev_start);
  b = std::min(b, e.dev_start + dev_len(e));
  while (a < b) {
    uint64_t n = b - a;
    if (is_striped(e)) n = std::min(n, e.chunk - (a - e.dev_start + e.phase) % e.chunk);
    fn(a, volume_sector_at(e, a), n);
    a += n;
  }
}

bool stripe_continues(const Extent& e, const Extent& next) {
  if (!is_striped(e) || !is_striped(next)) return false;
  if (e.dev != next.dev || e.stripes != next.stripes || e.stripe != next.stripe ||
      e.chunk != next.chunk || e.reads_only != next.reads_only || e.copy != next.copy)
    return false;
  if (e.dev_start + dev_len(e) != next.dev_start) return false;
  return volume_sector_at(e, next.dev_start) == next.vol_start &&
         next.phase == (next.dev_start - e.dev_start + e.phase) % e.chunk;
}

Result<ExtentMap> striped_area(const std::string& what, uint64_t start, uint64_t len,
                               uint64_t chunk,
                               const std::vector<std::pair<DevT, uint64_t>>& members) {
  const uint64_t s = members.size();
  if (s == 0 || s > UINT32_MAX) return area_error(what, "no stripes (or too many)");
  if (chunk == 0) return area_error(what, "a chunk size of 0 sectors");
  if (chunk > UINT64_MAX / s) return area_error(what, "the chunk size times the stripes overflows");
  if (len == 0 || len % (chunk * s) != 0 || start > UINT64_MAX - len)
    return area_error(
        what, strfmt("%llu sectors at %llu are no whole number of rows of %llu "
                     "stripes of %llu sectors",
                     static_cast<unsigned long long>(len), static_cast<unsigned long long>(start),
                     static_cast<unsigned long long>(s), static_cast<unsigned long long>(chunk)));
  const uint64_t per_member = len / s;
  ExtentMap out;
  for (uint64_t i = 0; i < s; ++i) {
    const auto& [dev, offset] = members[i];
    if (offset > UINT64_MAX - per_member)
      return area_error(what, "stripe " + std::to_string(i) + " on " + dev_to_string(dev) +
                                  " runs past the last sector a device can have");
    if (s == 1) {
      out.push_back(Extent{start, len, dev, offset});
      continue;
    }
    Extent e{start + i * chunk, len - (s - 1) * chunk, dev, offset};
    e.stripes = static_cast<uint32_t>(s);
    e.stripe = static_cast<uint32_t>(i);
    e.chunk = chunk;
    out.push_back(e);
  }
  return out;
}

}  // namespace blkrr
