// blkrr record's outputs beyond one file, as root on loop devices: -o - piped
// into `blkrr dump -`, rotation by time and by size over more than ten
// boundaries (every request driven is in exactly one piece, the piece of its
// issue), and retention (--keep deletes only this recording's oldest pieces).
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rotation.h"
#include "core/trace_format.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"
#include "tests/integration/test_top.h"

namespace blkrr::testing {
namespace {

constexpr const char* kReady = "Ctrl-C stops";
using Key = std::tuple<uint64_t, uint32_t, std::string>;  // sector, bytes, op

// A scratch directory, removed with what is left in it.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/blkrr-rotation-XXXXXX";
    path = mkdtemp(t) ? t : "";
  }
  ~TempDir() {
    for (const auto& f : list()) unlink((path + "/" + f).c_str());
    rmdir(path.c_str());
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    DIR* d = opendir(path.c_str());
    if (!d) return out;
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }
};

// Batches of distinct requests, one IoChild after the other every gap_ms, so
// that the recording spans many boundaries with an exactly known load.
std::multiset<Key> drive_batches(const std::string& dev, int batches, int gap_ms,
                                 int per_thread = 8) {
  std::multiset<Key> want;
  // 160 sectors a request (64 KiB at most is 128), then a gap to the next batch.
  const uint64_t stride = static_cast<uint64_t>(per_thread) * 4 * 160 + 1000;
  for (int b = 0; b < batches; ++b) {
    const auto load =
        make_known_load(4, per_thread, static_cast<uint64_t>(b) * stride, stride - 1000);
    auto child = IoChild::spawn("blkrr-io-rot", dev, load);
    EXPECT_TRUE(child);
    if (!child) return want;
    child->go();
    EXPECT_EQ(child->wait(), 0);
    for (const auto& t : load)
      for (const auto& op : t)
        want.insert({op.sector, op.bytes, op.op == Op::kRead ? "read" : "write"});
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  return want;
}

// `blkrr ARGS` through the shell; its standard output.
std::string run_blkrr(const std::string& args) {
  std::string out;
  FILE* p = popen((std::string(BLKRR_BINARY) + " " + args).c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// The request objects of `blkrr dump --json` output, as keys.
std::multiset<Key> keys_of_dump(const std::string& text, uint64_t* counted) {
  std::multiset<Key> got;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    auto j = nlohmann::json::parse(text.substr(pos, nl - pos), nullptr, false);
    pos = nl + 1;
    if (j.is_discarded()) continue;
    if (j.value("type", "") == "request")
      got.insert({j["sector"].get<uint64_t>(), j["bytes"].get<uint32_t>(), j["op"]});
    if (j.value("type", "") == "counters") *counted = j["requests"].get<uint64_t>();
  }
  return got;
}

TEST(RecordRotation, StandardOutputPipesIntoDump) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  TempDir dir;
  const std::string fifo = dir.path + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string dumped;
  std::thread reader([&] { dumped = run_blkrr("dump --json - < " + fifo); });
  auto rec =
      BlkrrProcess::start({"record", "-d", a->path(), "-o", "-"}, kReady, 15000, fifo.c_str());
  ASSERT_TRUE(rec) << rec.error().message;
  const auto want = drive_batches(a->path(), 3, 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  reader.join();
  uint64_t counted = 0;
  EXPECT_EQ(keys_of_dump(dumped, &counted), want);
  EXPECT_EQ(counted, 96u);
  // The summary went to standard error, the trace alone to the pipe.
  EXPECT_NE(rec->output().find("recorded 96 requests"), std::string::npos) << rec->output();
  EXPECT_NE(rec->output().find("to standard output"), std::string::npos) << rec->output();
}

struct Piece {
  std::string path;
  TraceHeader header;
  std::vector<Request> reqs;
  Counters trailer;
};

// Every piece of the stem, in name order; checks each on its own.
std::vector<Piece> read_pieces(const TempDir& dir, const std::string& base) {
  std::vector<Piece> out;
  for (const auto& name : dir.list()) {
    EXPECT_EQ(name.find(".open"), std::string::npos) << "left open: " << name;
    if (!parse_piece_file_name(base, name)) continue;
    Piece p;
    p.path = dir.path + "/" + name;
    auto rd = TraceReader::open(p.path);
    EXPECT_TRUE(rd) << rd.error().message;
    if (!rd) continue;
    p.header = rd->header();
    Request r;
    while (true) {
      auto n = rd->next(r);
      EXPECT_TRUE(n) << n.error().message;
      if (!n || !*n) break;
      p.reqs.push_back(r);
    }
    EXPECT_TRUE(rd->trailer()) << p.path << " has no trailer";
    if (rd->trailer()) p.trailer = *rd->trailer();
    out.push_back(std::move(p));
  }
  return out;
}

// The union of the pieces is the load, each request in the piece of its
// issue; the pieces follow each other without a gap.
void check_pieces(const std::vector<Piece>& pieces, const std::multiset<Key>& want,
                  size_t min_pieces) {
  ASSERT_GE(pieces.size(), min_pieces);
  std::multiset<Key> got;
  size_t across = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    EXPECT_EQ(p.header.recording_id, pieces[0].header.recording_id);
    EXPECT_EQ(p.header.piece, pieces[0].header.piece + i);
    EXPECT_FALSE(p.header.devices.empty());
    EXPECT_GT(p.header.real_anchor_ns, 0u);
    const uint64_t end = p.trailer.at("piece_end_ns");
    if (i + 1 < pieces.size()) {
      EXPECT_EQ(end, pieces[i + 1].header.piece_start_ns) << p.path;
    }
    EXPECT_EQ(p.trailer.at("records_written"), p.reqs.size());
    for (const auto& r : p.reqs) {
      if (i > 0) {
        EXPECT_GE(r.issue_ns, p.header.piece_start_ns) << p.path;
      }
      EXPECT_LT(r.issue_ns, end) << p.path;
      if (r.completed() && r.complete_ns >= end) ++across;
      got.insert({r.sector, r.bytes, std::string(op_name(r.op))});
    }
  }
  EXPECT_EQ(got, want);
  std::printf("[measured] %zu pieces, %zu requests, %zu of them in flight at a boundary\n",
              pieces.size(), got.size(), across);
}

// Rotation by time: a boundary every second over 12 s of known I/O.
TEST(RecordRotation, ByTimeOverTenBoundariesEveryRequestOnceInThePieceOfItsIssue) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(512 << 20);
  ASSERT_TRUE(a) << a.error().message;
  TempDir dir;
  const std::string stem = dir.path + "/prod";
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", stem, "--rotate", "1s"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  // The kernel's own account of the requests, independent of blkrr.
  BlkTracer tracer(a->name());
  const auto want = drive_batches(a->path(), 24, 450);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const TraceBusy kernel = busy_from_trace(tracer.stop(), a->dev());
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  const auto pieces = read_pieces(dir, "prod");
  check_pieces(pieces, want, 11);
  if (tracer.ok() && !kernel.overrun) {
    EXPECT_EQ(kernel.issues, want.size()) << "blk tracer D events";
    EXPECT_EQ(kernel.completes, want.size()) << "blk tracer C events";
  } else {
    std::printf("[note] blk tracer %s: compared with the driven load only\n",
                tracer.ok() ? "overrun" : "unavailable");
  }
  // Every reader takes the pieces as one trace: dump of all of them.
  std::string args = "dump --json";
  for (const auto& p : pieces) args += " " + p.path;
  uint64_t counted = 0;
  EXPECT_EQ(keys_of_dump(run_blkrr(args + " 2>&1"), &counted), want);
  EXPECT_EQ(counted, want.size());
  // convert reads them as one recording, times kept (no gap reported).
  const std::string load = dir.path + "/all.load";
  std::string conv = "convert";
  for (const auto& p : pieces) conv += " " + p.path;
  std::string said = run_blkrr(conv + " -o " + load + " 2>&1");
  EXPECT_EQ(said.find("gap"), std::string::npos) << said;
  std::ifstream lf(load);
  size_t lines = 0;
  for (std::string l; std::getline(lf, l);) lines += l.find(';') != std::string::npos;
  EXPECT_GE(lines, want.size());  // the load's header line has ';' too
  EXPECT_LE(lines, want.size() + 1);
  unlink(load.c_str());
}

// `blkrr ARGS` with its standard output parsed as JSON, standard error kept.
nlohmann::json run_json(const std::string& args, const std::string& err_path, std::string* err) {
  auto j = nlohmann::json::parse(run_blkrr(args + " 2>" + err_path), nullptr, false);
  std::ifstream in(err_path);
  err->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  unlink(err_path.c_str());
  return j;
}

std::string paths_of(const std::vector<Piece>& pieces, size_t skip = SIZE_MAX) {
  std::string s;
  for (size_t i = 0; i < pieces.size(); ++i)
    if (i != skip) s += " " + pieces[i].path;
  return s;
}

// A rotated recording end to end: its pieces replayed (--fake-io, then onto
// a second loop device recorded with rotation too) and the replay validated
// against the second recording's pieces; every count is the pieces' dump's.
// A piece taken away is a gap that replay and validate report.
TEST(RecordRotation, PiecesReplayAndValidateAsOneTraceAndAGapIsReported) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  auto b = LoopDevice::create(256 << 20);
  ASSERT_TRUE(b) << b.error().message;
  TempDir dir;
  const std::string err = dir.path + "/stderr.txt";
  auto rec = BlkrrProcess::start(
      {"record", "-d", a->path(), "-o", dir.path + "/src", "--rotate", "1s"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  const auto want = drive_batches(a->path(), 10, 450);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  const auto src = read_pieces(dir, "src");
  check_pieces(src, want, 4);
  const uint64_t n = want.size();
  uint64_t dumped = 0;
  EXPECT_EQ(keys_of_dump(run_blkrr("dump --json" + paths_of(src) + " 2>/dev/null"), &dumped), want);
  EXPECT_EQ(dumped, n);

  std::string said;
  auto fake =
      run_json("replay" + paths_of(src) + " " + b->path() + " --fake-io --quiet -j", err, &said);
  ASSERT_FALSE(fake.is_discarded()) << said;
  EXPECT_EQ(fake["requests"]["planned"], n);
  EXPECT_EQ(fake["requests"]["done"], n);
  EXPECT_EQ(said.find("gap"), std::string::npos) << said;

  auto rec_b = BlkrrProcess::start(
      {"record", "-d", b->path(), "-o", dir.path + "/dst", "--rotate", "1s"}, kReady);
  ASSERT_TRUE(rec_b) << rec_b.error().message;
  const std::string run = dir.path + "/run.replay.gz";
  auto real = run_json("replay" + paths_of(src) + " " + b->path() + " --quiet -o " + run + " -j",
                       err, &said);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec_b->signal(SIGINT);
  ASSERT_EQ(rec_b->wait(), 0) << rec_b->output();
  ASSERT_FALSE(real.is_discarded()) << said;
  EXPECT_EQ(real["requests"]["done"], n);
  const auto dst = read_pieces(dir, "dst");
  ASSERT_GE(dst.size(), 4u);
  auto v = run_json("validate " + run + paths_of(dst) + " -j", err, &said);
  ASSERT_FALSE(v.is_discarded()) << said;
  EXPECT_EQ(v["verdict"], "complete") << said;
  EXPECT_EQ(v["requests"]["submitted"], n);
  EXPECT_EQ(v["requests"]["covered"], n);
  EXPECT_EQ(v["losses"]["gaps_between_pieces"], 0);

  // The middle piece of each recording taken away.
  const size_t ms = src.size() / 2, md = dst.size() / 2;
  auto gap = run_json("replay" + paths_of(src, ms) + " " + b->path() + " --fake-io --quiet -j", err,
                      &said);
  ASSERT_FALSE(gap.is_discarded()) << said;
  EXPECT_NE(said.find("gap between rotated pieces: " + src[ms - 1].path + " and " +
                      src[ms + 1].path + " (pieces missing)"),
            std::string::npos)
      << said;
  EXPECT_EQ(gap["requests"]["planned"], n - src[ms].reqs.size());
  ASSERT_FALSE(dst[md].reqs.empty());
  v = run_json("validate " + run + paths_of(dst, md) + " -j", err, &said);
  ASSERT_FALSE(v.is_discarded()) << said;
  EXPECT_NE(said.find("gap between rotated pieces: " + dst[md - 1].path + " and " +
                      dst[md + 1].path + " (pieces missing)"),
            std::string::npos)
      << said;
  // The requests of the missing piece are not seen, not missing: the verdict
  // cannot be "incomplete" for a trace with a hole.
  EXPECT_EQ(v["verdict"], "unknown") << said;
  EXPECT_EQ(v["losses"]["gaps_between_pieces"], 1);
  EXPECT_TRUE(v["losses"]["hides_requests"].get<bool>());
  EXPECT_LT(v["requests"]["covered"].get<uint64_t>(), n);
  std::printf("[measured] %zu + %zu pieces, %llu requests replayed and validated\n", src.size(),
              dst.size(), static_cast<unsigned long long>(n));
}

// Rotation by size: a new piece whenever the current one reaches 4 KiB.
TEST(RecordRotation, BySizeOverTenBoundariesEveryRequestOnce) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(1024ull << 20);
  ASSERT_TRUE(a) << a.error().message;
  TempDir dir;
  const std::string stem = dir.path + "/sz";
  auto rec =
      BlkrrProcess::start({"record", "-d", a->path(), "-o", stem, "--rotate-size", "4k"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  const auto want = drive_batches(a->path(), 60, 150, 40);  // 160 requests a batch
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  check_pieces(read_pieces(dir, "sz"), want, 11);
}

// A blkrr trace that is a piece of another recording, written by hand.
void write_foreign_piece(const std::string& path, uint64_t seq) {
  TraceHeader h;
  h.recording_id = "0123456789abcdef0123456789abcdef";
  h.piece = seq;
  auto w = TraceWriter::create(path, h);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(w->close({}).ok());
}

// --keep: only this recording's pieces are deleted, the oldest first; the
// other files of the folder stay, also another recording's pieces of the
// same stem, until --retain-earlier is asked for.
TEST(RecordRotation, KeepDeletesOnlyThisRecordingsOldestPieces) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  TempDir dir;
  const std::string stem = dir.path + "/k";
  write_foreign_piece(dir.path + "/k.000004.20200101T000000Z.blkrr", 4);
  std::ofstream(dir.path + "/k.000005.20200101T000001Z.blkrr") << "not a trace\n";
  std::ofstream(dir.path + "/k.blkrr") << "a person's file\n";
  std::ofstream(dir.path + "/other.000001.20200101T000000Z.blkrr") << "x\n";
  const std::set<std::string> others = {"k.000004.20200101T000000Z.blkrr",
                                        "k.000005.20200101T000001Z.blkrr", "k.blkrr",
                                        "other.000001.20200101T000000Z.blkrr"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"record", "-d", a->path(), "-o", stem, "--rotate", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto rec = BlkrrProcess::start(args, kReady);
    ASSERT_TRUE(rec) << rec.error().message;
    drive_batches(a->path(), 12, 400);
    rec->signal(SIGINT);
    ASSERT_EQ(rec->wait(), 0) << rec->output();
  };
  run({"--keep", "3"});
  std::vector<std::string> ours;
  for (const auto& f : dir.list())
    if (!others.count(f)) ours.push_back(f);
  ASSERT_EQ(ours.size(), 3u);
  for (const auto& f : others) EXPECT_EQ(access((dir.path + "/" + f).c_str(), F_OK), 0) << f;
  // Sequence numbers go on after the highest of the stem; the newest kept.
  auto first = TraceReader::open(dir.path + "/" + ours[0]);
  ASSERT_TRUE(first);
  EXPECT_GE(first->header().piece, 8u);  // 6, 7 deleted at least (5 s, a piece a second)
  auto last = TraceReader::open(dir.path + "/" + ours[2]);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->header().piece, first->header().piece + 2);
  const std::string first_id = first->header().recording_id;

  // A new recorder of the same stem keeps the earlier recording's pieces...
  run({"--keep", "2"});
  size_t earlier = 0;
  for (const auto& f : ours) earlier += access((dir.path + "/" + f).c_str(), F_OK) == 0;
  EXPECT_EQ(earlier, 3u);
  // ...unless asked: then the oldest pieces of every recording of the stem
  // go, the files that are no pieces stay.
  run({"--keep", "2", "--retain-earlier"});
  std::vector<std::string> left;
  for (const auto& f : dir.list())
    if (!others.count(f)) left.push_back(f);
  EXPECT_EQ(left.size(), 2u);
  for (const auto& f : left) {
    auto rd = TraceReader::open(dir.path + "/" + f);
    ASSERT_TRUE(rd);
    EXPECT_NE(rd->header().recording_id, first_id);
  }
  EXPECT_NE(access((dir.path + "/k.000004.20200101T000000Z.blkrr").c_str(), F_OK), 0);
  for (const char* f :
       {"k.000005.20200101T000001Z.blkrr", "k.blkrr", "other.000001.20200101T000000Z.blkrr"})
    EXPECT_EQ(access((dir.path + "/" + f).c_str(), F_OK), 0) << f;
}

}  // namespace
}  // namespace blkrr::testing
