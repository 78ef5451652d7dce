#include "cli/record_flight.h"

#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "core/clock.h"
#include "core/rotation.h"
#include "core/units.h"

namespace blkrr::cli {

namespace {

// A block is sealed at least this often (and the ring evicts then).
constexpr uint64_t kSealEveryNs = 1'000'000'000ull;
constexpr uint64_t kSealRecords = 8192;
// After the in-flight walk cleared a window's end, the records still held
// for their disk time: the window is taken once they are written.
constexpr uint64_t kHoldMarginNs = 250'000'000ull;

std::string describe(const Request& r) {
  return strfmt("%s %" PRIu32 " B at sector %" PRIu64 " of %s by %s (pid %" PRIu32
                "), issued at %" PRIu64 " ns, latency %s",
                std::string(op_name(r.op)).c_str(), r.bytes, r.sector, dev_to_string(r.dev).c_str(),
                utf8_or_replace(r.comm_view()).c_str(), r.tgid, r.issue_ns,
                fmt_duration_ns(static_cast<double>(r.latency_ns())).c_str());
}

uint64_t real_of(const TraceHeader& h, uint64_t mono) {
  return mono >= h.mono_anchor_ns ? h.real_anchor_ns + (mono - h.mono_anchor_ns)
                                  : h.real_anchor_ns - (h.mono_anchor_ns - mono);
}

}  // namespace

// ------------------------------------------------------------ DumpWriter

DumpWriter::DumpWriter() : thread_([this] { run(); }) {}

DumpWriter::~DumpWriter() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DumpWriter::submit(Job job) {
  {
    std::lock_guard<std::mutex> l(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
}

void DumpWriter::drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_.wait(l, [this] { return jobs_.empty() && !busy_; });
}

std::optional<Error> DumpWriter::error() {
  std::lock_guard<std::mutex> l(mu_);
  return err_;
}

std::string DumpWriter::last_path() {
  std::lock_guard<std::mutex> l(mu_);
  return last_;
}

void DumpWriter::run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    l.unlock();
    Status st = err_ ? Status{} : write(job);
    l.lock();
    busy_ = false;
    if (!st && !err_) err_ = st.error();
    if (st) last_ = job.path;
    if (jobs_.empty()) idle_.notify_all();
  }
}

// Under a temporary name, renamed when complete: a dump is whole or absent.
Status DumpWriter::write(const Job& job) {
  TraceWriter::Options o;
  o.rle = true;
  o.own_writeback = true;
  o.atomic = true;
  // A failure leaves no file (the temporary is removed with the writer).
  const std::string failed = "--ring: the window " + job.path + " is not written";
  auto w = TraceWriter::create(job.path, job.header, o);
  // Without the writer's hint (a window keeps no partial blocks).
  auto fail = [&](const Error& e) {
    return e.sys_errno ? Error::system(failed + ": writing it", e.sys_errno) : e.context(failed);
  };
  if (!w) return fail(w.error());
  uint64_t n = 0;
  Status st = job.window.for_each([&](const Request& r) {
    ++n;
    return w->append(r);
  });
  Counters c = job.counters;
  c["records_written"] = n;
  if (st) st = w->close(c);
  if (!st) return fail(st.error());
  written_.fetch_add(1);
  bytes_.fetch_add(w->bytes_written());
  std::fprintf(stderr, "blkrr record: wrote %s (%" PRIu64 " requests, %s: %s)\n", job.path.c_str(),
               n, job.header.settings.at("dump.trigger").c_str(),
               job.header.settings.at("dump.fired_by").c_str());
  return {};
}

// ------------------------------------------------------------ FlightRecorder

FlightRecorder::FlightRecorder(const FlightPlan& plan, const std::string& stem,
                               const TraceHeader& header, uint64_t t0, uint64_t hold_ns,
                               uint64_t min_free)
    : plan_(plan),
      stem_(stem),
      header_(header),
      t0_(t0),
      hold_ns_(hold_ns),
      min_free_(min_free),
      ring_(plan.ring_bytes),
      last_seal_(t0) {
  // Dumps go on after the highest number of this stem's dumps in the folder.
  const std::string ring_stem = stem_ + ".ring";
  const auto slash = ring_stem.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : ring_stem.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? ring_stem : ring_stem.substr(slash + 1);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (auto seq = parse_piece_file_name(base, e.path().filename().string()))
      next_seq_ = std::max(next_seq_, *seq + 1);
}

void FlightRecorder::fire(const std::string& trigger, uint64_t at_ns, const std::string& fired_by) {
  if (trigger != "signal") {
    if (last_fire_ != 0 && at_ns < last_fire_ + plan_.holdoff_ns) {
      ++held_off_;
      return;
    }
    last_fire_ = at_ns;
  }
  ++fired_;
  DumpRequest d;
  d.trigger = trigger;
  d.fired_by = fired_by;
  d.fire_ns = at_ns;
  d.start_ns = at_ns > plan_.ring_ns ? at_ns - plan_.ring_ns : 0;
  d.end_ns = at_ns + (trigger == "signal" ? 0 : plan_.post_ns);
  std::fprintf(stderr, "blkrr record: %s trigger at %s: %s; writing the window\n", trigger.c_str(),
               fmt_utc(static_cast<double>(real_of(header_, at_ns)) / 1e9).c_str(),
               fired_by.c_str());
  pending_.push_back(std::move(d));
}

Status FlightRecorder::received(const Request& r) {
  if (plan_.trigger_latency_ns && r.completed() && r.latency_ns() >= plan_.trigger_latency_ns)
    fire("latency", r.issue_ns + plan_.trigger_latency_ns, describe(r));
  return {};
}

Status FlightRecorder::write(const Request& r) {
  ring_.add(r);
  ++records_;
  if (plan_.trigger_util > 0 && r.completed() && r.complete_ns >= t0_)
    busy_[r.dev][(r.complete_ns - t0_) / 1'000'000'000ull] += r.disk_time_ns;
  if (ring_.pending() >= kSealRecords) return ring_.seal();
  return {};
}

// A request still in flight after --trigger-latency (a hung one) fires it
// without waiting for its completion.
void FlightRecorder::check_inflight(uint64_t now, const Capture& cap) {
  const uint64_t oldest = cap.oldest_inflight_issue_ns();
  if (oldest == UINT64_MAX || oldest == last_hung_issue_) return;
  if (now < oldest || now - oldest < plan_.trigger_latency_ns) return;
  last_hung_issue_ = oldest;
  fire("latency", oldest + plan_.trigger_latency_ns,
       strfmt("a request issued at %" PRIu64 " ns still in flight after %s", oldest,
              fmt_duration_ns(static_cast<double>(plan_.trigger_latency_ns)).c_str()));
}

// Each second (since the recording started) whose records have all been
// written: a device busy for --trigger-util percent of it fires.
void FlightRecorder::check_util(uint64_t now) {
  if (now < hold_ns_ + kHoldMarginNs + t0_) return;
  const uint64_t done_before = (now - hold_ns_ - kHoldMarginNs - t0_) / 1'000'000'000ull;
  for (auto& [dev, secs] : busy_) {
    while (!secs.empty() && secs.begin()->first < done_before) {
      const auto [sec, busy] = *secs.begin();
      secs.erase(secs.begin());
      const double pct = std::min(100.0, static_cast<double>(busy) / 1e7);
      if (pct < plan_.trigger_util) continue;
      const uint64_t from = t0_ + sec * 1'000'000'000ull;
      fire("util", from + 1'000'000'000ull,
           strfmt("%s busy %.1f %% in the second from %" PRIu64 " ns to %" PRIu64 " ns",
                  dev_to_string(dev).c_str(), pct, from, from + uint64_t{1000000000}));
    }
  }
}

Status FlightRecorder::tick(uint64_t now, const Capture& cap, const CountersNow& counters) {
  if (auto e = writer_.error()) return *e;
  for (uint64_t n = usr1_.take(); n > 0; --n) fire("signal", now, "SIGUSR1");
  if (plan_.trigger_latency_ns) check_inflight(now, cap);
  if (plan_.trigger_util > 0) check_util(now);
  if (now - last_seal_ >= kSealEveryNs) {
    BLKRR_TRY(ring_.seal());
    last_seal_ = now;
    // What a trigger may still ask for: its window before, its detection
    // (a tick, the disk-time hold) and its --post after.
    const uint64_t keep = plan_.ring_ns + plan_.post_ns + hold_ns_ + 5'000'000'000ull;
    if (now > keep) ring_.evict_before(now - keep);
  }
  return start_ready(now, cap, counters);
}

// A window is taken once no request issued before its end can still arrive
// (the rule that closes a rotated piece, core/rotation.h) and the records
// held for their disk time have been written.
Status FlightRecorder::start_ready(uint64_t now, const Capture& cap, const CountersNow& counters) {
  if (pending_.empty()) return {};
  view_.drained_since_walk = view_.walk_ns != 0;
  bool need_walk = false;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (piece_can_close(it->end_ns, view_) && now >= view_.walk_ns + hold_ns_ + kHoldMarginNs) {
      BLKRR_TRY(submit(*it, counters()));
      it = pending_.erase(it);
      continue;
    }
    need_walk = need_walk || now >= it->end_ns + kWalkMarginNs;
    ++it;
  }
  // A walk that cleared a pending end stays until the hold passed.
  const bool keep_walk =
      std::any_of(pending_.begin(), pending_.end(),
                  [this](const DumpRequest& d) { return piece_can_close(d.end_ns, view_); });
  if (need_walk && !keep_walk) {
    view_.walk_ns = mono_ns();
    view_.oldest_inflight_ns = cap.oldest_inflight_issue_ns();
    view_.drained_since_walk = false;
  }
  return {};
}

std::string FlightRecorder::next_path(uint64_t real_ns) {
  struct stat st;
  for (;;) {
    std::string p = piece_file_name(stem_ + ".ring", next_seq_++, real_ns);
    if (::stat(p.c_str(), &st) != 0) return p;
  }
}

Status FlightRecorder::submit(const DumpRequest& d, const Counters& counters) {
  BLKRR_TRY(ring_.seal());
  if (min_free_) {
    const std::string dir = dir_of(stem_);
    if (auto sp = space_of(dir); sp && sp->free < min_free_) {
      ++skipped_;
      std::fprintf(stderr,
                   "blkrr record: %s has %s free, less than --min-free %s: the %s window is not "
                   "written (%" PRIu64 " so far)\n",
                   dir.c_str(), fmt_bytes(static_cast<double>(sp->free)).c_str(),
                   fmt_bytes(static_cast<double>(min_free_)).c_str(), d.trigger.c_str(), skipped_);
      return {};
    }
  }
  DumpWriter::Job job;
  job.header = header_;
  auto& s = job.header.settings;
  s["dump.trigger"] = d.trigger;
  s["dump.fired_by"] = d.fired_by;
  s["dump.time_ns"] = std::to_string(d.fire_ns);
  s["dump.time_utc"] = fmt_utc(static_cast<double>(real_of(header_, d.fire_ns)) / 1e9);
  s["dump.window_start_ns"] = std::to_string(d.start_ns);
  s["dump.window_end_ns"] = std::to_string(d.end_ns);
  job.counters = counters;
  if (ring_.memory_floor_ns() > d.start_ns) {
    job.counters["ring_window_incomplete_before_ns"] = ring_.memory_floor_ns();
    job.counters["ring_evicted_by_memory"] = ring_.evicted_by_memory();
  }
  job.counters["triggers_held_off"] = held_off_;
  job.window = ring_.snapshot(d.start_ns, d.end_ns);
  job.path = next_path(real_of(header_, d.fire_ns));
  writer_.submit(std::move(job));
  return {};
}

Status FlightRecorder::finish(const Counters& cumulative) {
  // Windows still waiting (their --post cut short by the stop): what there is.
  const uint64_t now = mono_ns();
  for (auto& d : pending_) {
    d.end_ns = std::min(d.end_ns, now);
    BLKRR_TRY(submit(d, cumulative));
  }
  pending_.clear();
  writer_.drain();
  if (auto e = writer_.error()) return *e;
  return {};
}

void FlightRecorder::abandon(const Counters&) {
  pending_.clear();
  writer_.drain();
}

std::string FlightRecorder::summary_target() const {
  return strfmt("memory (--ring; %" PRIu64 " windows written to %s.ring.NNNNNN.*.blkrr, %" PRIu64
                " triggers held off, %" PRIu64 " windows not written for --min-free)",
                writer_.written(), stem_.c_str(), held_off_, skipped_);
}

std::string FlightRecorder::kept_after_error() const {
  return strfmt("the %" PRIu64 " windows written before are whole", writer_.written());
}

OutputProgress FlightRecorder::progress() const {
  OutputProgress op;
  op.path = "memory";
  op.bytes = ring_.bytes();
  op.extra =
      strfmt(" (%" PRIu64 " requests, at most %s), %" PRIu64 " windows written", ring_.records(),
             fmt_bytes(static_cast<double>(plan_.ring_bytes)).c_str(), writer_.written());
  return op;
}

}  // namespace blkrr::cli
