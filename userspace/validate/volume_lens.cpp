#include "validate/volume_lens.h"

#include "core/device.h"

namespace blkrr::validate {
namespace {

bool is_write(Op op) {
  return op == Op::kWrite;
}

}  // namespace

VolumeLens::VolumeLens(VolumeMap volume, const MatchOptions& o) : volume_(std::move(volume)) {
  for (uint32_t copy : mirror_copies(volume_.extents))
    members_.push_back(
        Member{copy, mirror_view(volume_.extents, copy), std::make_unique<WindowMatcher>(o)});
}

void VolumeLens::add_block(const Request& r, WindowMatcher& main) {
  per_disk_[r.dev]++;
  auto pieces = requests_on_volume(r, volume_.extents, volume_.volume);
  for (const auto& p : pieces) main.add_block(p);
  records_ += pieces.size();
  if (pieces.size() > 1) split_ += pieces.size() - 1;
  bool mirrored = false;
  if (is_write(r.op))
    for (auto& m : members_) {
      auto copies = requests_on_volume(r, m.view, volume_.volume);
      for (const auto& c : copies) m.matcher->add_block(c);
      mirrored = mirrored || !copies.empty();
    }
  if (mirrored) mirror_writes_++;
  if (pieces.empty() && !mirrored) outside_++;
}

void VolumeLens::add_replayed(const ReplayedRequest& r) {
  if (r.submitted() && r.sectors > 0) {
    uint64_t pieces = 0;  // on the members that take the request (a mirror's first)
    for (const auto& p : chunk_pieces(volume_.extents, r.sector, r.sectors))
      if (!p.reads_only) pieces++;
    if (pieces > 1) {
      replayed_split_++;
      replayed_pieces_ += pieces;
    }
  }
  if (!is_write(r.op)) return;
  for (auto& m : members_) m.matcher->add_replayed(r);
}

void VolumeLens::advance(uint64_t w) {
  for (auto& m : members_) m.matcher->advance(w);
}

void VolumeLens::finish(Report& report, const Losses& losses) {
  StackCheck s;
  s.volume = volume_.label.empty() ? volume_.name : volume_.name + " (" + volume_.label + ")";
  s.stack = volume_.stack;
  s.map = format_extents(volume_.extents);
  DeviceNamer names;
  for (const auto& [dev, n] : per_disk_) s.disks.push_back({names.name(dev), n});
  s.volume_records = records_;
  s.outside = outside_;
  s.split = split_;
  s.mirror_writes = mirror_writes_;
  s.replayed_split = replayed_split_;
  s.replayed_pieces = replayed_pieces_;
  for (auto& m : members_) {
    Report r = m.matcher->finish(losses);
    ExtentMap own;
    for (const auto& e : volume_.extents)
      if (e.copy == m.copy) own.push_back(e);
    StackCheck::Mirror mm{m.copy,    format_extents(own), r.submitted,
                          r.covered, r.missing_count,     std::move(r.missing)};
    if (mm.missing && report.verdict == Verdict::kComplete) {
      report.verdict = Verdict::kIncomplete;
      report.verdict_reason = std::to_string(mm.missing) +
                              " replayed writes not seen on mirror copy " + std::to_string(m.copy) +
                              " (" + mm.extents + ")";
    }
    s.mirrors.push_back(std::move(mm));
  }
  report.stack = std::move(s);
}

}  // namespace blkrr::validate
