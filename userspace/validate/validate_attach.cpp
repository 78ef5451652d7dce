// validate_attach: benchmark helper for tests/bench/validate.sh. Attaches
// the live validator to DEVICE, prints "ready", waits for SIGINT/SIGTERM,
// then stops and, given a replay result, validates it against what it
// captured and prints the report and how long each step took.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "core/signals.h"
#include "validate/live_validator.h"
#include "validate/offline.h"
#include "validate/report_io.h"

using namespace blkrr;
using namespace blkrr::validate;

namespace {

// Keeps what was captured as a native trace, for `blkrr validate`.
bool save_capture(const char* path, const Observation& obs) {
  TraceHeader h;
  h.tool_version = "validate_attach";
  auto w = TraceWriter::create(path, h);
  Status st = w ? Status{} : Status(w.error());
  for (size_t i = 0; st && i < obs.requests.size(); ++i) st = w->append(obs.requests[i]);
  if (st) st = w->close(obs.counters);
  if (!st) std::fprintf(stderr, "validate_attach: %s\n", st.error().message.c_str());
  return static_cast<bool>(st);
}

// Validates the replay result at REPLAY_PATH against the capture; prints the
// report and the matching speed. Exit status 0 when complete, 3 when not.
int validate_against(const char* replay_path, Observation obs) {
  auto replay = read_replay_input(replay_path);
  if (!replay) {
    std::fprintf(stderr, "validate_attach: %s\n", replay.error().message.c_str());
    return 1;
  }
  size_t n = replay->requests.size();
  TraceInput trace;
  trace.requests = std::move(obs.requests);
  trace.format = "live";
  losses_from_counters(obs.counters, trace.losses);
  OfflineOptions o;
  o.sector_offset = obs.partition_offset;
  o.match.flush_reaches_device = obs.flush_reaches_device;
  auto t0 = std::chrono::steady_clock::now();
  Report rep = validate_offline(std::move(*replay), trace, o);
  auto t1 = std::chrono::steady_clock::now();
  std::fputs(format_text(rep).c_str(), stdout);
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  std::printf("matched %zu replayed with %zu block-layer requests in %.1f ms (%.2f M req/s)\n", n,
              trace.requests.size(), ms, static_cast<double>(n + trace.requests.size()) / ms / 1e3);
  return rep.verdict == Verdict::kComplete ? 0 : 3;
}

int run(int argc, char** argv) {
  LiveOptions lo;
  lo.keep_all = true;  // the capture itself, validated offline below
  if (argc >= 2 && std::string(argv[1]) == "--full") {  // the capture of blkrr record
    lo.lean = false;
    argv++;
    argc--;
  }
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: validate_attach [--full] DEVICE [REPLAY_RESULT [SAVE.blkrr]]\n"
                 "Attach the live validator to DEVICE until SIGINT/SIGTERM, then validate\n"
                 "REPLAY_RESULT (a *.replay.gz written during that time) against the capture;\n"
                 "SAVE.blkrr keeps the capture as a native trace. --full: the full capture\n"
                 "(with the per-device disk-time state) instead of the validator's lean one.\n");
    return 2;
  }
  // Blocked: the threads started below inherit the mask.
  StopSignals signals({.mode = StopSignals::Mode::kBlock});

  auto v = LiveValidator::start(argv[1], lo);
  if (!v) {
    std::fprintf(stderr, "validate_attach: %s\n", v.error().message.c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  signals.wait(StopSignals::kForever);

  auto t0 = std::chrono::steady_clock::now();
  auto obs = (*v)->stop();
  if (!obs) {
    std::fprintf(stderr, "validate_attach: %s\n", obs.error().message.c_str());
    return 1;
  }
  auto t1 = std::chrono::steady_clock::now();
  std::printf("captured %zu block-layer requests, stop took %.1f ms\n", obs->requests.size(),
              std::chrono::duration<double, std::milli>(t1 - t0).count());
  if (obs->cost.records)
    std::printf(
        "consumer thread: %.1f ms CPU for %llu records (%.1f ns per record)\n",
        static_cast<double>(obs->cost.reader_cpu_ns) / 1e6,
        static_cast<unsigned long long>(obs->cost.records),
        static_cast<double>(obs->cost.reader_cpu_ns) / static_cast<double>(obs->cost.records));
  if (argc >= 4 && !save_capture(argv[3], *obs)) return 1;  // for `blkrr validate`
  if (argc < 3) return 0;

  return validate_against(argv[2], std::move(*obs));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "validate_attach: internal error: %s\n", e.what());
  }
  return 70;
}
