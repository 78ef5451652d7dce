#include "converters/source.h"

#include <gtest/gtest.h>

#include "converters/converter_fixtures.h"
#include "converters/test_bad_input.h"

namespace blkrr {
namespace {

using testing::data_path;
using testing::TempDir;

TraceHeader two_disk_header() {
  TraceHeader h;
  h.host = "h";
  DeviceInfo a;
  a.dev = make_dev(8, 0);
  a.name = "sda";
  a.partitions.push_back({make_dev(8, 2), "sda2", 2048, 1 << 20});
  DeviceInfo b;
  b.dev = make_dev(8, 16);
  b.name = "sdb";
  h.devices = {a, b};
  return h;
}

std::string write_native(const TempDir& t, const std::vector<Request>& reqs) {
  auto w = TraceWriter::create(t.file("t.blkrr"), two_disk_header());
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  for (const auto& r : reqs) EXPECT_TRUE(w->append(r).ok());
  EXPECT_TRUE(w->close(Counters{{"lost_completions", 3}}).ok());
  return t.file("t.blkrr");
}

std::vector<Request> sample_requests() {
  std::vector<Request> v;
  for (int i = 0; i < 5; ++i) {
    Request r;
    r.issue_ns = 1000000000ull + i * 1000;
    r.complete_ns = r.issue_ns + 500;
    r.sector = 100 + i;
    r.bytes = 4096;
    r.dev = i == 4 ? make_dev(8, 16) : make_dev(8, 0);
    r.part = i == 1 ? make_dev(8, 2) : r.dev;
    r.pid = 10 + i;
    r.op = i % 2 ? Op::kWrite : Op::kRead;
    r.set_comm("mysqld");
    v.push_back(r);
  }
  return v;
}

TEST(Source, DetectsLoadAndNative) {
  TempDir t;
  EXPECT_EQ(*detect_format(data_path("linux-mysql.load.gz")), InputFormat::kLoad);
  EXPECT_EQ(*detect_format(write_native(t, sample_requests())), InputFormat::kNative);
  auto bad = detect_format(t.write("x.txt", "hello\nworld\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().message.find("--from"), std::string::npos);
  auto missing = detect_format(t.file("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

// What the user must change (no input, inputs that do not belong together)
// is a usage error; a missing input is not found.
TEST(Source, InputsThatCannotBeReadTogether) {
  TempDir t;
  EXPECT_EQ(open_source({}, {}).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(open_source({t.file("nope")}, {}).error().kind, ErrorKind::kNotFound);
  auto bt = t.write("a.blktrace.0",
                    testing::blktrace_event(1, 8, 4096, blktrace::kIssue, blktrace::kCatRead));
  auto mixed = open_source({bt, data_path("linux-mysql.load.gz")}, {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().kind, ErrorKind::kUsage) << mixed.error().message;
}

TEST(Source, LoadAsRequests) {
  auto s = open_source({data_path("linux-mysql.load.gz")}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ((*s)->info().format, InputFormat::kLoad);
  EXPECT_FALSE((*s)->info().absolute_time);
  EXPECT_EQ((*s)->info().preamble.size(), 31u);
  Request r;
  ASSERT_TRUE(*(*s)->next(r));
  EXPECT_EQ(r.issue_ns, 0u);
  EXPECT_EQ(r.sector, 37766853u);
  EXPECT_EQ(r.bytes, 64u * 512);
  EXPECT_EQ(r.op, Op::kWrite);
  uint64_t n = 1;
  while (*(*s)->next(r)) ++n;
  EXPECT_EQ(n, 80794u);
  EXPECT_TRUE((*s)->counters().empty());
}

TEST(Source, SeveralLoadsAreConcatenated) {
  auto s = open_source({data_path("linux-mysql.load.gz"), data_path("windows-mssql.load.gz")}, {});
  ASSERT_TRUE(s.ok());
  Request r;
  uint64_t n = 0, last = 0;
  while (*(*s)->next(r)) {
    ++n;
    if (n == 80794u + 1) {
      EXPECT_EQ(r.issue_ns, 3599890074831u);  // follows the first load
    }
    EXPECT_GE(r.issue_ns, last);
    last = r.issue_ns;
  }
  EXPECT_EQ(n, 80794u + 42976u);
  EXPECT_EQ(last, 3599890074831u + 3062338015914u);
  EXPECT_EQ((*s)->info().paths.size(), 2u);
}

// --repeat 3: the load three times, each pass one mean gap after the
// previous one's last request, the file read again for each pass.
TEST(Source, RepeatedPassesFollowEachOther) {
  TempDir t;
  std::string path = t.write("r.load",
                             "0.000000100 ; 800 ; 8 ; R\n0.000000300 ; 900 ; 8 ; W\n"
                             "0.000000500 ; 1000 ; 16 ; R\n");
  SourceOptions o;
  o.repeat = 3;
  auto s = open_source({path}, o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::vector<uint64_t> times, sectors;
  Request r;
  while (*(*s)->next(r)) {
    times.push_back(r.issue_ns);
    sectors.push_back(r.sector);
  }
  // Span 400 ns, mean gap 200 ns: a period of 600 ns.
  EXPECT_EQ(times, (std::vector<uint64_t>{100, 300, 500, 700, 900, 1100, 1300, 1500, 1700}));
  EXPECT_EQ(sectors, (std::vector<uint64_t>{800, 900, 1000, 800, 900, 1000, 800, 900, 1000}));
  o.repeat = 0;
  EXPECT_FALSE(open_source({path}, o).ok());
  o.repeat = 2;
  auto pipe = open_source({"-"}, o);
  ASSERT_FALSE(pipe.ok());
  EXPECT_NE(pipe.error().message.find("regular file"), std::string::npos) << pipe.error().message;
}

TEST(Source, NativeTraceAllFieldsAndTrailer) {
  TempDir t;
  auto reqs = sample_requests();
  auto s = open_source({write_native(t, reqs)}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->info().absolute_time);
  EXPECT_FALSE((*s)->info().sorted_by_issue);
  ASSERT_TRUE((*s)->info().trace_header.has_value());
  Request r;
  for (const auto& want : reqs) {
    ASSERT_TRUE(*(*s)->next(r));
    EXPECT_EQ(r.issue_ns, want.issue_ns);
    EXPECT_EQ(r.complete_ns, want.complete_ns);
    EXPECT_EQ(r.sector, want.sector);
    EXPECT_EQ(r.pid, want.pid);
    EXPECT_EQ(r.comm_view(), "mysqld");
  }
  EXPECT_FALSE(*(*s)->next(r));
  EXPECT_EQ((*s)->counters().at("capture: lost_completions"), 3u);
}

TEST(Source, NativeDeviceSelection) {
  TempDir t;
  auto path = write_native(t, sample_requests());
  auto count = [&](const std::string& dev) -> int {
    SourceOptions o;
    o.device = dev;
    auto s = open_source({path}, o);
    if (!s.ok()) return -1;
    Request r;
    int n = 0;
    while (*(*s)->next(r)) ++n;
    return n;
  };
  EXPECT_EQ(count(""), 5);
  EXPECT_EQ(count("sda"), 4);
  EXPECT_EQ(count("/dev/sdb"), 1);
  EXPECT_EQ(count("8:16"), 1);
  EXPECT_EQ(count("sda2"), 1);
  EXPECT_EQ(count("sdz"), -1);
}

TEST(Source, FormatNames) {
  EXPECT_EQ(parse_input_format("msr"), InputFormat::kMsrCsv);
  EXPECT_EQ(parse_input_format("blkrr"), InputFormat::kNative);
  EXPECT_FALSE(parse_input_format("xml").has_value());
  EXPECT_EQ(input_format_name(InputFormat::kFioIolog), "fio");
}

// A piece of a rotated recording: requests issued at the given times (each
// completing 5 ms later, so some complete after the piece's end).
std::string write_piece(const TempDir& t, const std::string& id, uint64_t piece, uint64_t start,
                        uint64_t end, const std::vector<uint64_t>& issues) {
  TraceHeader h = two_disk_header();
  h.recording_id = id;
  h.piece = piece;
  h.piece_start_ns = start;
  std::string path = t.file("p." + std::to_string(piece) + ".blkrr");
  auto w = TraceWriter::create(path, h);
  EXPECT_TRUE(w.ok());
  for (uint64_t at : issues) {
    Request r = sample_requests()[0];
    r.issue_ns = at;
    r.complete_ns = at + 5'000'000;
    EXPECT_TRUE(w->append(r).ok());
  }
  EXPECT_TRUE(w->close(Counters{{"piece_end_ns", end}, {"issues", issues.size()}}).ok());
  return path;
}

std::vector<uint64_t> issue_times(RequestSource& s) {
  std::vector<uint64_t> out;
  Request r;
  while (*s.next(r)) out.push_back(r.issue_ns);
  return out;
}

// Pieces of one recording keep their times (concatenated loads would be
// moved to follow each other), whatever order they are given in.
TEST(Source, PiecesOfOneRecordingKeepTheirTimesInSequenceOrder) {
  TempDir t;
  const auto p0 = write_piece(t, "r1", 7, 100, 1'000'000'000, {900'000'000, 999'000'000});
  const auto p1 =
      write_piece(t, "r1", 8, 1'000'000'000, 2'000'000'000, {1'000'000'000, 1'500'000'000});
  auto s = open_source({p1, p0}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(issue_times(**s),
            (std::vector<uint64_t>{900'000'000, 999'000'000, 1'000'000'000, 1'500'000'000}));
  Counters c = (*s)->counters();
  EXPECT_EQ(c["capture: issues"], 4u);  // the pieces' counters add up
  EXPECT_EQ(c.count("capture: piece_end_ns"), 0u);
  for (const auto& [k, v] : c) EXPECT_EQ(k.find("gap"), std::string::npos) << k;
  // The same piece twice is refused.
  auto twice = open_source({p0, p0}, {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("give each once"), std::string::npos);
}

TEST(Source, GapsBetweenPiecesAreCountedNotHidden) {
  TempDir t;
  const auto p0 = write_piece(t, "r2", 1, 0, 1000, {10});
  const auto p2 = write_piece(t, "r2", 3, 2000, 3000, {2500});  // piece 2 missing
  const auto p3 = write_piece(t, "r2", 4, 3100, 4000, {3200});  // starts 100 ns late
  auto s = open_source({p0, p2, p3}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(issue_times(**s), (std::vector<uint64_t>{10, 2500, 3200}));
  const Counters c = (*s)->counters();
  EXPECT_EQ(c.at("gap between rotated pieces: " + p0 + " and " + p2 + " (pieces missing)"), 1u);
  EXPECT_EQ(c.at("gap between rotated pieces: " + p2 + " and " + p3 +
                 " (ns between the first's end and the second's start)"),
            100u);
}

// Another recording (or a trace without id) after a piece is a new input:
// moved to follow, as concatenated loads are.
TEST(Source, PiecesOfDifferentRecordingsAreConcatenated) {
  TempDir t;
  const auto a = write_piece(t, "ra", 0, 0, 1000, {500});
  TempDir t2;
  const auto b = write_piece(t2, "rb", 1, 0, 1000, {100});
  auto s = open_source({a, b}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(issue_times(**s), (std::vector<uint64_t>{500, 500}));
}

}  // namespace
}  // namespace blkrr
