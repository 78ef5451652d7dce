#include "cli/record_output.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cinttypes>
#include <filesystem>

#include "core/clock.h"
#include "core/io_guard.h"
#include "core/start_at.h"
#include "core/units.h"

namespace blkrr::cli {

namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string dir_part(const std::string& stem) {
  return dir_of(stem);
}

std::string base_part(const std::string& stem) {
  auto slash = stem.rfind('/');
  return slash == std::string::npos ? stem : stem.substr(slash + 1);
}

// Flags, not amounts: every piece's trailer carries them as they are.
bool is_level_counter(const std::string& k) {
  return k.rfind("feature_off.", 0) == 0 || k == "disk_time_in_user_space" ||
         k == "load_retried_without_optional";
}

}  // namespace

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::optional<SpaceInfo> space_of(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) return std::nullopt;
  return SpaceInfo{static_cast<uint64_t>(v.f_bavail) * v.f_frsize,
                   static_cast<uint64_t>(v.f_blocks) * v.f_frsize};
}

uint64_t default_min_free(uint64_t fs_size) {
  return std::min(std::max(fs_size / 20, uint64_t{1} << 30), fs_size / 10);
}

Result<std::unique_ptr<RecordOutput>> RecordOutput::open(const OutputPlan& plan,
                                                         const TraceHeader& header, uint64_t t0) {
  std::unique_ptr<RecordOutput> o(new RecordOutput(plan, header));
  if (plan.out == "-") {
    o->plan_.min_free = 0;  // a pipe: nothing to watch
  } else if (plan.min_free == OutputPlan::kMinFreeDefault) {
    auto sp = space_of(dir_of(plan.out));
    o->plan_.min_free = sp ? default_min_free(sp->size) : 0;
  }
  if (plan.rotating()) {
    o->header_.recording_id = new_recording_id();
    BLKRR_TRY(o->scan_earlier());
    if (plan.rotate_ns) o->next_boundary_ = t0 + plan.rotate_ns;
  }
  BLKRR_TRY(o->open_piece(t0));
  o->last_flush_ = t0;
  return o;
}

RecordOutput::~RecordOutput() = default;

// The stem's existing pieces: sequence numbers go on after the highest (so
// that names keep sorting in recording order), and with --retain-earlier the
// earlier recordings' pieces join the retention.
Status RecordOutput::scan_earlier() {
  std::error_code ec;
  const std::string dir = dir_part(plan_.out), base = base_part(plan_.out);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    std::string plain = name;
    if (plain.size() > kOpenSuffix.size() &&
        plain.compare(plain.size() - kOpenSuffix.size(), kOpenSuffix.size(), kOpenSuffix) == 0)
      plain.resize(plain.size() - kOpenSuffix.size());
    auto seq = parse_piece_file_name(base, plain);
    if (!seq) continue;
    next_seq_ = std::max(next_seq_, *seq + 1);
    if (!plan_.retain_earlier || plain != name || !e.is_regular_file(ec)) continue;
    std::string path = dir;
    path.append("/").append(name);
    std::string id = recording_id_of(path);
    if (id.empty()) continue;  // not a piece of a blkrr recording: never ours to delete
    closed_.push_back({path, *seq, static_cast<uint64_t>(e.file_size(ec))});
    ids_[path] = id;
  }
  if (ec) return Error::system("cannot list " + dir, ec.value(), "check the -o directory");
  return {};
}

Status RecordOutput::open_piece(uint64_t start_ns) {
  Piece p;
  p.start_ns = start_ns;
  TraceHeader h = header_;
  if (plan_.rotating()) {
    p.seq = next_seq_++;
    if (created_ > 0) {  // every piece its own anchor, read as it opens
      const ClockPair now = read_clock_pair();
      h.mono_anchor_ns = now.mono_ns;
      h.real_anchor_ns = now.real_ns;
    }
    h.piece = p.seq;
    h.piece_start_ns = start_ns;
    const uint64_t real_start = start_ns >= h.mono_anchor_ns
                                    ? h.real_anchor_ns + (start_ns - h.mono_anchor_ns)
                                    : h.real_anchor_ns - (h.mono_anchor_ns - start_ns);
    p.path = piece_file_name(plan_.out, p.seq, real_start);
    p.open_path = p.path + std::string(kOpenSuffix);
    if (exists(p.path) || exists(p.open_path))
      return Error(ErrorKind::kUsage, "-o " + plan_.out + ": " + p.path +
                                          " exists already; blkrr record never writes over a file");
  } else {
    p.path = p.open_path = plan_.out;
  }
  TraceWriter::Options wopts;
  // zlib's run-length strategy on column-elided blocks: the cheapest
  // compression per request for ~8 bytes/request (docs/performance.md, record).
  wopts.rle = true;
  wopts.own_writeback = true;  // our own disk requests: left out (cmd_record.cpp)
  wopts.atomic = false;
  const Status st = retry_with_room([&]() -> Status {
    auto w = TraceWriter::create(p.open_path, h, wopts);
    if (!w) {
      // Not even its header fitted (a full disk): a piece of no block is
      // removed, it was created just now (never an existing file, above).
      if (plan_.rotating()) ::unlink(p.open_path.c_str());
      return w.error();
    }
    p.w = std::make_unique<TraceWriter>(std::move(*w));
    return {};
  });
  if (!st) return st.error().context("output not writable");
  if (!open_.empty()) open_.back().end_ns = start_ns;
  open_.push_back(std::move(p));
  ++created_;
  return {};
}

Status RecordOutput::advance_time_boundaries(uint64_t upto_ns) {
  if (!plan_.rotate_ns || upto_ns < next_boundary_) return {};
  // After a pause (a suspended machine) one piece starts at the last
  // boundary passed; the previous piece holds the pause.
  uint64_t b = next_boundary_ + (upto_ns - next_boundary_) / plan_.rotate_ns * plan_.rotate_ns;
  next_boundary_ = b + plan_.rotate_ns;
  return open_piece(b);
}

Result<RecordOutput::Piece*> RecordOutput::route(uint64_t issue_ns, bool count_late) {
  BLKRR_TRY(advance_time_boundaries(issue_ns));
  for (auto it = open_.rbegin(); it != open_.rend(); ++it)
    if (it->start_ns <= issue_ns) return &*it;
  // Issued before the oldest open piece: the first piece takes what was
  // issued before the recording started; otherwise its piece has closed.
  if (count_late && created_ - open_.size() != 0) ++late_;
  return &open_.front();
}

Status RecordOutput::received(const Request& r) {
  auto p = route(r.issue_ns, true);
  if (!p) return p.error();
  (*p)->held++;
  return {};
}

Status RecordOutput::write(const Request& r) {
  auto p = route(r.issue_ns, false);
  if (!p) return p.error();
  if ((*p)->held) (*p)->held--;
  if (paused_) {
    ++not_kept_;
    return {};
  }
  TraceWriter& w = *(*p)->w;
  const Status st = w.append(r);  // the record is pending even if the write failed
  if (!st) BLKRR_TRY(retry_with_room([&] { return w.flush(); }, st));
  ++records_;
  return {};
}

Counters RecordOutput::piece_counters(const Counters& cumulative, const Piece& p) {
  Counters c;
  for (const auto& [k, v] : cumulative) {
    if (is_level_counter(k)) {
      c[k] = v;
      continue;
    }
    uint64_t& given = in_trailers_[k];
    c[k] = v >= given ? v - given : 0;
    given = std::max(given, v);
  }
  c["records_written"] = p.w->records_written();
  if (plan_.rotating()) {
    c["piece_end_ns"] = p.end_ns;
    if (late_) c["late_for_closed_piece"] = late_;
  }
  return c;
}

Status RecordOutput::close_front(const Counters& cumulative) {
  Piece& p = open_.front();
  if (p.end_ns == UINT64_MAX) p.end_ns = mono_ns();
  // records_written counts the records in blocks
  BLKRR_TRY(retry_with_room([&] { return p.w->flush(); }));
  const Counters trailer = piece_counters(cumulative, p);
  BLKRR_TRY(retry_with_room([&] { return p.w->close(trailer); }));
  const uint64_t size = p.w->bytes_written();
  closed_bytes_ += size;
  if (plan_.rotating()) {
    if (::rename(p.open_path.c_str(), p.path.c_str()) != 0)
      return Error::system("cannot rename " + p.open_path + " to " + p.path, errno);
    closed_.push_back({p.path, p.seq, size});
    ids_[p.path] = header_.recording_id;
  }
  open_.pop_front();
  return apply_retention();
}

Status RecordOutput::close_ready(uint64_t now, const Capture& cap, const CountersNow& counters) {
  // The walk of the previous tick counts: a poll has drained the ring
  // buffer since.
  view_.drained_since_walk = view_.walk_ns != 0;
  while (open_.size() > 1) {
    view_.held = open_.front().held;
    if (!piece_can_close(open_.front().end_ns, view_)) break;
    BLKRR_TRY(close_front(counters()));
  }
  if (open_.size() > 1 && now >= open_.front().end_ns + kWalkMarginNs) {
    view_.walk_ns = mono_ns();
    view_.oldest_inflight_ns = cap.oldest_inflight_issue_ns();
    view_.drained_since_walk = false;
  }
  return {};
}

// The current piece's size with its pending records (at most 84 bytes each
// before compression; about 10 after, docs/trace-format.md): once the
// estimate reaches --rotate-size the block is written and the file's real
// size decides, so that a piece ends near SIZE, not a second of blocks later.
bool RecordOutput::size_reached(TraceWriter& w) {
  constexpr uint64_t kEstimatedBytesPerRecord = 16;
  if (w.bytes_written() + w.pending_records() * kEstimatedBytesPerRecord < plan_.rotate_bytes)
    return false;
  if (w.pending_records() && !w.flush().ok()) return false;  // the next append reports it
  return w.bytes_written() >= plan_.rotate_bytes;
}

Status RecordOutput::tick(uint64_t now, const Capture& cap, const CountersNow& counters) {
  BLKRR_TRY(check_space(now));
  if (plan_.rotating()) {
    BLKRR_TRY(advance_time_boundaries(now));
    if (plan_.rotate_bytes && size_reached(*open_.back().w))
      BLKRR_TRY(open_piece(std::max(now, open_.back().start_ns + 1)));
    BLKRR_TRY(close_ready(now, cap, counters));
    if (plan_.max_total) BLKRR_TRY(apply_retention());
  }
  if (now - last_flush_ >= 1'000'000'000ull) {
    for (auto& p : open_) BLKRR_TRY(retry_with_room([&] { return p.w->flush(); }));
    last_flush_ = now;
  }
  return {};
}

Status RecordOutput::apply_retention() {
  if (plan_.keep == 0 && plan_.max_total == 0) return {};
  uint64_t open_bytes = 0;
  for (const auto& p : open_) open_bytes += p.w->bytes_written();
  for (const auto& v : retention_victims(closed_, plan_.keep, plan_.max_total, open_bytes)) {
    std::erase_if(closed_, [&](const PieceFile& f) { return f.path == v.path; });
    // Only a file whose header still names the recording it was taken for.
    const std::string want = ids_[v.path];
    ids_.erase(v.path);
    if (want.empty() || recording_id_of(v.path) != want) {
      std::fprintf(stderr, "blkrr record: %s is no longer a piece of recording %s; kept\n",
                   v.path.c_str(), want.c_str());
      continue;
    }
    if (::unlink(v.path.c_str()) != 0 && errno != ENOENT)
      return Error::system("--keep/--max-total: cannot delete " + v.path, errno);
    ++deleted_;
  }
  return {};
}

Status RecordOutput::finish(const Counters& cumulative) {
  while (!open_.empty()) BLKRR_TRY(close_front(cumulative));
  return {};
}

void RecordOutput::abandon(const Counters& cumulative) {
  for (auto& p : open_) {
    if (p.end_ns == UINT64_MAX) p.end_ns = mono_ns();
    (void)p.w->flush();
    // May fail too (disk full): the flushed blocks stay readable under the
    // name it has.
    if (p.w->close(piece_counters(cumulative, p)).ok() && plan_.rotating())
      (void)::rename(p.open_path.c_str(), p.path.c_str());
  }
  open_.clear();
}

uint64_t RecordOutput::bytes_written() const {
  uint64_t n = closed_bytes_;
  for (const auto& p : open_) n += p.w->bytes_written();
  return n;
}

uint64_t RecordOutput::bytes_on_disk() const {
  uint64_t n = 0;
  for (const auto& f : closed_) n += f.bytes;
  for (const auto& p : open_) n += p.w->bytes_written();
  return n;
}

std::string RecordOutput::current_path() const {
  if (open_.empty()) return "";
  return plan_.out == "-" ? std::string("standard output") : open_.back().open_path;
}

uint64_t RecordOutput::current_bytes() const {
  return open_.empty() ? 0 : open_.back().w->bytes_written();
}

std::string RecordOutput::summary_target() const {
  if (plan_.out == "-") return "standard output";
  if (!plan_.rotating()) return plan_.out;
  return strfmt("%" PRIu64 " files %s.NNNNNN.*.blkrr (%" PRIu64 " deleted by retention)", created_,
                plan_.out.c_str(), deleted_);
}

OutputProgress RecordOutput::progress() const {
  OutputProgress op;
  op.path = current_path();
  op.bytes = current_bytes();
  op.files = files_created();
  op.total_bytes = bytes_written();
  op.on_disk = bytes_on_disk();
  op.rotating = plan_.rotating();
  return op;
}

// --min-free, after every poll: below it, with --max-total this recording's
// oldest closed piece goes first; if that is not enough, writing pauses (the
// records are counted, not kept) until the free space is a tenth above it.
Status RecordOutput::check_space(uint64_t now) {
  if (plan_.min_free == 0 || now - last_space_check_ < 100'000'000ull) return {};
  last_space_check_ = now;
  const std::string dir = dir_of(plan_.out);
  auto sp = space_of(dir);
  if (!sp) return {};
  while (sp->free < plan_.min_free && plan_.max_total && !closed_.empty()) {
    BLKRR_TRY(delete_oldest_for_room("to keep --min-free"));
    sp = space_of(dir);
    if (!sp) return {};
  }
  if (!paused_ && sp->free < plan_.min_free) {
    paused_ = true;
    std::fprintf(stderr,
                 "blkrr record: %s has %s free, less than --min-free %s: writing paused, "
                 "requests counted as not kept until there is room\n",
                 dir.c_str(), fmt_bytes(static_cast<double>(sp->free)).c_str(),
                 fmt_bytes(static_cast<double>(plan_.min_free)).c_str());
  } else if (paused_ && sp->free >= plan_.min_free + plan_.min_free / 10) {
    paused_ = false;
    std::fprintf(stderr,
                 "blkrr record: %s has %s free again: writing resumed (%" PRIu64
                 " requests not kept so far)\n",
                 dir.c_str(), fmt_bytes(static_cast<double>(sp->free)).c_str(), not_kept_);
  }
  return {};
}

// A write that failed for want of room (ENOSPC, EDQUOT) is made again after
// deleting this recording's oldest closed piece, as long as --keep or
// --max-total is given and such a piece is left; `failed` is the first
// attempt when the caller made it already.
Status RecordOutput::retry_with_room(const std::function<Status()>& op,
                                     std::optional<Status> failed) {
  Status st = failed ? *failed : op();
  while (!st && (plan_.keep || plan_.max_total) && !closed_.empty() &&
         (st.error().sys_errno == ENOSPC || st.error().sys_errno == EDQUOT)) {
    BLKRR_TRY(delete_oldest_for_room("to make room (" +
                                     std::string(std::strerror(st.error().sys_errno)) + ")"));
    st = op();
  }
  return st;
}

Status RecordOutput::delete_oldest_for_room(const std::string& why) {
  auto oldest =
      std::min_element(closed_.begin(), closed_.end(),
                       [](const PieceFile& a, const PieceFile& b) { return a.seq < b.seq; });
  const PieceFile victim = *oldest;
  closed_.erase(oldest);
  const std::string want = ids_[victim.path];
  ids_.erase(victim.path);
  if (want.empty() || recording_id_of(victim.path) != want) return {};
  if (::unlink(victim.path.c_str()) != 0 && errno != ENOENT)
    return Error::system("cannot delete " + victim.path + " " + why, errno);
  ++deleted_;
  std::fprintf(stderr, "blkrr record: deleted %s %s\n", victim.path.c_str(), why.c_str());
  return {};
}

}  // namespace blkrr::cli
