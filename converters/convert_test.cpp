// The conversion pipeline: round trips, every output format, each selection
// filter and transformation on hand-checked cases, --derive on a crafted load.
#include "converters/convert.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "converters/derive.h"
#include "converters/load_format.h"
#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::data_path;
using testing::TempDir;

struct Rec {
  int64_t ns;
  uint64_t sector;
  uint32_t sectors;
  char op;
};

std::string load_text(const std::vector<Rec>& recs) {
  std::string s = "crafted\nstart ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n";
  char b[32];
  for (const auto& r : recs) {
    s += std::string(b, fmt_sec9(b, r.ns, 0)) + " ; " + std::to_string(r.sector) + " ; " +
         std::to_string(r.sectors) + " ; " + r.op + " ; 0.0 ; 0.0\n";
  }
  return s;
}

std::vector<LoadRecord> read_load(const std::string& path) {
  std::vector<LoadRecord> v;
  auto r = LoadReader::open(path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return v;
  LoadRecord x;
  while (*r->next(x)) v.push_back(x);
  return v;
}

Result<ConvertSummary> convert(ConvertOptions o) {
  o.command_line = "blkrr convert (test)";
  return run_convert(o);
}

ConvertOptions opts(const std::string& in, const std::string& out) {
  ConvertOptions o;
  o.inputs = {in};
  o.output = out;
  o.existing = Existing::kReplace;  // the tests write one name again (--overwrite)
  return o;
}

// An fio iolog read back through the converter (positions as sectors).
std::vector<LoadRecord> read_load_of_iolog(TempDir& t, const std::string& iolog) {
  auto back = run_convert(opts(iolog, t.file("back.load")));
  EXPECT_TRUE(back.ok()) << (back.ok() ? "" : back.error().message);
  return read_load(t.file("back.load"));
}

std::vector<std::string> data_lines_of(const std::string& path) {
  std::vector<std::string> out;
  bool header = false;
  for (const auto& l : testing::lines_of(testing::slurp(path))) {
    if (!header) {
      header = l.rfind("start ;", 0) == 0;
      continue;
    }
    out.push_back(l);
  }
  return out;
}

TEST(Convert, LoadToLoadKeepsDataLinesAndNotice) {
  TempDir t;
  for (const char* name : {"linux-mysql.load.gz", "windows-mssql.load.gz"}) {
    auto s = convert(opts(data_path(name), t.file("out.load.gz")));
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto want = data_lines_of(data_path(name));
    // windows-mssql repeats its notice after the first header: only data lines count.
    want.erase(std::remove_if(want.begin(), want.end(),
                              [](const std::string& l) {
                                return l.find(" ; ") == std::string::npos ||
                                       l.rfind("start ;", 0) == 0;
                              }),
               want.end());
    EXPECT_EQ(data_lines_of(t.file("out.load.gz")), want) << name;
    EXPECT_EQ(s->out, want.size());
    auto in = LoadReader::open(data_path(name));
    auto out = LoadReader::open(t.file("out.load.gz"));
    EXPECT_EQ(in->preamble(), out->preamble());
  }
}

// `convert -o existing.load.gz` replaced the file without a word.
TEST(Convert, AnExistingOutputIsReplacedOnlyWithOverwrite) {
  TempDir t;
  const std::string out = t.file("out.load.gz");
  ConvertOptions o = opts(data_path("windows-mssql.load.gz"), out);
  o.existing = Existing::kRefuse;
  ASSERT_TRUE(convert(o).ok());
  const std::string first = testing::slurp_raw(out);
  o.inputs = {data_path("linux-mysql.load.gz")};
  auto again = convert(o);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kUsage);
  EXPECT_NE(again.error().message.find("-o " + out + " exists"), std::string::npos)
      << again.error().message;
  EXPECT_EQ(testing::slurp_raw(out), first);  // untouched
  o.existing = Existing::kReplace;
  ASSERT_TRUE(convert(o).ok());
  EXPECT_EQ(data_lines_of(out).size(), 80794u);
}

// `convert -o x.parquet` wrote a blkreplay load under that name without a word.
TEST(Convert, UnknownOutputExtensionsAreNamed) {
  EXPECT_EQ(unknown_output_extension("x.parquet"), ".parquet");
  EXPECT_EQ(unknown_output_extension("/d.ir/x.parquet.gz"), ".parquet");
  for (const char* known : {"a.load.gz", "a.load", "b.blkrr", "c.iolog.gz", "d.csv", "e.jsonl",
                            "f.json", "g.replay.gz", "h.txt", "noext", "dir.d/noext", "-"})
    EXPECT_EQ(unknown_output_extension(known), "") << known;
}

TEST(Convert, SummaryNumbers) {
  TempDir t;
  auto s = convert(opts(data_path("linux-mysql.load.gz"), t.file("o.load")));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->in, 80794u);
  EXPECT_EQ(s->in_by_op.at(Op::kRead), 7187u);
  EXPECT_EQ(s->in_by_op.at(Op::kWrite), 73607u);
  EXPECT_EQ(s->max_sector, 63587888u);
  EXPECT_EQ(s->last_ns, 3599890074831);
  std::string text = s->text();
  EXPECT_NE(text.find("requests in:    80794 (read 7187, write 73607)"), std::string::npos) << text;
  EXPECT_NE(text.find("max sector:     63587888 (the replay device needs 30.3 GiB)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0.000000000 .. 3599.890074831 s"), std::string::npos) << text;
}

// A load is read as sorted; one that is not is written in input order, counted
// and named as such, and its time span still covers every request.
TEST(Convert, UnsortedLoadIsCountedAndItsSpanIsWhole) {
  TempDir t;
  auto in = t.write("u.load", load_text({{2'000'000'000, 8, 8, 'R'},
                                         {1'000'000'000, 16, 8, 'R'},
                                         {3'000'000'000, 24, 8, 'W'}}));
  auto s = convert(opts(in, t.file("o.load")));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->out, 3u);
  EXPECT_EQ(s->out_of_order, 1u);
  EXPECT_EQ(s->first_ns, 1'000'000'000);
  EXPECT_EQ(s->last_ns, 3'000'000'000);
  std::string text = s->text();
  EXPECT_NE(text.find("the input is not sorted by time"), std::string::npos) << text;
  EXPECT_EQ(text.find("--reorder-window"), std::string::npos) << text;
  EXPECT_NE(text.find("1.000000000 .. 3.000000000 s"), std::string::npos) << text;
  auto v = read_load(t.file("o.load"));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].sector, 8u);
  EXPECT_EQ(v[1].sector, 16u);
}

// --window and --until on a load out of order: a request inside them that
// comes after one past their end is still written (within --reorder-window);
// one out of order by more than that is where reading stops.
TEST(Convert, WindowAndUntilOnAnUnsortedLoadKeepTheLateRequest) {
  TempDir t;
  auto in = t.write("u.load", load_text({{500'000'000, 8, 8, 'R'},
                                         {3'000'000'000, 16, 8, 'R'},
                                         {1'500'000'000, 24, 8, 'W'},
                                         {30'000'000'000, 32, 8, 'W'},
                                         {1'600'000'000, 40, 8, 'W'}}));
  ConvertOptions w = opts(in, t.file("w.load"));
  w.select.window = true;
  w.select.window_start_ns = 0;
  w.select.window_len_ns = 2'000'000'000;
  auto s = convert(w);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto v = read_load(t.file("w.load"));
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].sector, 24u);
  EXPECT_TRUE(s->input_cut);  // stopped at 30 s: more than 10 s past the window
  ConvertOptions u = opts(in, t.file("u2.load"));
  u.until_ns = 2'000'000'000;
  auto su = convert(u);
  ASSERT_TRUE(su.ok()) << su.error().message;
  auto vu = read_load(t.file("u2.load"));
  ASSERT_EQ(vu.size(), 2u);
  EXPECT_EQ(vu[1].sector, 24u);
}

// ---- native traces ----

TraceHeader header() {
  TraceHeader h;
  h.host = "db1";
  DeviceInfo d;
  d.dev = make_dev(8, 0);
  d.name = "sda";
  h.devices = {d};
  return h;
}

Request req(uint64_t issue, uint64_t lat, uint64_t sector, uint32_t bytes, Op op, uint32_t pid,
            const char* comm, uint64_t cg = 0) {
  Request r;
  r.issue_ns = issue;
  r.complete_ns = lat ? issue + lat : kNoTime;
  r.sector = sector;
  r.bytes = bytes;
  r.op = op;
  r.pid = pid;
  r.tgid = pid;
  r.dev = r.part = make_dev(8, 0);
  r.cgroup_id = cg;
  r.disk_time_ns = lat / 2;
  r.set_comm(comm);
  if (!lat) r.rec_flags = kRecCompletionNotSeen;
  return r;
}

// Written in completion order, like the recorder does.
std::string native(const TempDir& t, const std::string& name) {
  const uint64_t s = 5'000'000'000;  // monotonic clock at the start
  std::vector<Request> v = {
      req(s + 0, 900'000, 100, 4096, Op::kWrite, 10, "mysqld", 7),
      req(s + 100'000, 300'000, 200, 8192, Op::kRead, 11, "backup", 8),  // completes first
      req(s + 2'000'000, 50'000, 0, 0, Op::kFlush, 10, "mysqld", 7),
      req(s + 3'000'000, 100'000, 300, 512, Op::kRead, 12, "mysqld", 7),
      req(s + 4'000'000, 0, 400, 4096, Op::kWrite, 12, "mysqld", 7),  // completion not seen
  };
  std::stable_sort(v.begin(), v.end(), [](const Request& a, const Request& b) {
    return (a.completed() ? a.complete_ns : ~0ull) < (b.completed() ? b.complete_ns : ~0ull);
  });
  auto w = TraceWriter::create(t.file(name), header());
  for (const auto& r : v) EXPECT_TRUE(w->append(r).ok());
  EXPECT_TRUE(w->close(Counters{{"lost_events", 2}}).ok());
  return t.file(name);
}

TEST(Convert, NativeToLoadSortsByIssueAndCountsFlush) {
  TempDir t;
  auto s = convert(opts(native(t, "a.blkrr"), t.file("a.load")));
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto v = read_load(t.file("a.load"));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].start_ns, 0);
  EXPECT_EQ(v[0].sector, 100u);
  EXPECT_EQ(v[0].sectors, 8u);
  EXPECT_EQ(v[0].op, Op::kWrite);
  EXPECT_EQ(v[1].start_ns, 100'000);
  EXPECT_EQ(v[1].sectors, 16u);
  EXPECT_EQ(v[2].start_ns, 3'000'000);
  EXPECT_EQ(v[2].sectors, 1u);
  EXPECT_EQ(v[3].start_ns, 4'000'000);
  EXPECT_EQ(s->not_expressible.at(Op::kFlush), 1u);
  EXPECT_EQ(s->out_of_order, 0u);
  EXPECT_EQ(s->source_counters.at("capture: lost_events"), 2u);
  EXPECT_NE(s->text().find("NOT CONVERTED:  1 (flush 1)"), std::string::npos) << s->text();
  EXPECT_NE(s->text().find("capture: lost_events: 2"), std::string::npos) << s->text();
  // Zero counters are counted, not listed, unless asked (-v).
  s->source_counters["capture: ringbuf_reserve_failed"] = 0;
  EXPECT_EQ(s->text().find("ringbuf_reserve_failed"), std::string::npos) << s->text();
  EXPECT_NE(s->text().find("more counter of the input is 0; -v lists them"), std::string::npos);
  EXPECT_NE(s->text(true).find("capture: ringbuf_reserve_failed: 0"), std::string::npos);
  EXPECT_EQ(s->text().find("skipped lines"), std::string::npos) << "0 lines skipped: not a line";
  EXPECT_NE(s->text(true).find("  skipped lines:  0\n"), std::string::npos);
  // Without a reorder window the request that completed first comes too late.
  ConvertOptions o = opts(t.file("a.blkrr"), t.file("b.load"));
  o.reorder_window_ns = 0;
  auto late = convert(o);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->out_of_order, 1u);
  EXPECT_EQ(late->out, 4u);
}

TEST(Convert, NativeLoadNativeRoundTrip) {
  TempDir t;
  auto in = native(t, "a.blkrr");
  ASSERT_TRUE(convert(opts(in, t.file("a.load.gz"))).ok());
  auto s = convert(opts(t.file("a.load.gz"), t.file("b.blkrr")));
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = TraceReader::open(t.file("b.blkrr"));
  ASSERT_TRUE(r.ok());
  std::vector<Request> back;
  Request x;
  while (*r->next(x)) back.push_back(x);
  ASSERT_EQ(back.size(), 4u);
  // What a load keeps: start (relative), sector, size, read/write.
  const uint64_t starts[] = {0, 100'000, 3'000'000, 4'000'000};
  const uint64_t sectors[] = {100, 200, 300, 400};
  const uint32_t bytes[] = {4096, 8192, 512, 4096};
  const Op ops[] = {Op::kWrite, Op::kRead, Op::kRead, Op::kWrite};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(back[i].issue_ns, starts[i]);
    EXPECT_EQ(back[i].sector, sectors[i]);
    EXPECT_EQ(back[i].bytes, bytes[i]);
    EXPECT_EQ(back[i].op, ops[i]);
  }
}

TEST(Convert, NativeToNativeKeepsEverything) {
  TempDir t;
  auto in = native(t, "a.blkrr");
  ASSERT_TRUE(convert(opts(in, t.file("b.blkrr"))).ok());
  auto a = TraceReader::open(in);
  auto b = TraceReader::open(t.file("b.blkrr"));
  std::vector<Request> va, vb;
  Request x;
  while (*a->next(x)) va.push_back(x);
  while (*b->next(x)) vb.push_back(x);
  std::sort(va.begin(), va.end(), [](auto& l, auto& r) { return l.issue_ns < r.issue_ns; });
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i) {
    EXPECT_EQ(va[i].issue_ns, vb[i].issue_ns);
    EXPECT_EQ(va[i].complete_ns, vb[i].complete_ns);
    EXPECT_EQ(va[i].comm_view(), vb[i].comm_view());
    EXPECT_EQ(va[i].cgroup_id, vb[i].cgroup_id);
    EXPECT_EQ(va[i].disk_time_ns, vb[i].disk_time_ns);
    EXPECT_EQ(va[i].rec_flags, vb[i].rec_flags);
  }
  EXPECT_EQ(b->header().host, "db1");
  ASSERT_TRUE(b->trailer().has_value());
  EXPECT_EQ(b->trailer()->at("capture: lost_events"), 2u);
}

TEST(Convert, CsvAndJsonCarryEveryNativeField) {
  TempDir t;
  auto in = native(t, "a.blkrr");
  ASSERT_TRUE(convert(opts(in, t.file("a.csv"))).ok());
  auto csv = testing::lines_of(testing::slurp(t.file("a.csv")));
  ASSERT_EQ(csv.size(), 6u);
  EXPECT_EQ(csv[0],
            "start,sector,sectors,bytes,op,latency_us,disk_time_us,pid,tgid,comm,dev,part,flags,"
            "cgroup,error,issue_ns,complete_ns,record_flags");
  EXPECT_EQ(csv[1],
            "0.000000000,100,8,4096,write,900.000,450.000,10,10,mysqld,8:0,8:0,,7,0,"
            "5000000000,5000900000,");
  EXPECT_EQ(csv[5],
            "0.004000000,400,8,4096,write,,0.000,12,12,mysqld,8:0,8:0,,7,0,5004000000,,"
            "completion-not-seen");
  ConvertOptions o = opts(in, t.file("a.jsonl"));
  ASSERT_TRUE(convert(o).ok());
  auto js = testing::lines_of(testing::slurp(t.file("a.jsonl")));
  ASSERT_EQ(js.size(), 6u);  // a blkrr.requests header, then one line per request
  EXPECT_EQ(js[0].rfind("{\"blkrr_version\":", 0), 0u) << js[0];
  EXPECT_NE(js[0].find("\"schema\":{\"name\":\"blkrr.requests\",\"version\":1}"), std::string::npos)
      << js[0];
  EXPECT_EQ(js[3],
            "{\"type\":\"request\",\"start_ns\":2000000,\"issue_ns\":5002000000,"
            "\"complete_ns\":5002050000,\"latency_ns\":50000,\"disk_time_ns\":25000,"
            "\"dev\":\"8:0\",\"part\":\"8:0\",\"sector\":0,\"bytes\":0,\"op\":\"flush\","
            "\"flags\":\"\",\"pid\":10,\"tid\":10,\"comm\":\"mysqld\",\"cgroup_id\":\"7\","
            "\"error\":0}");
  EXPECT_NE(js[5].find("\"latency_ns\":null"), std::string::npos);
  EXPECT_NE(js[5].find("\"record_flags\":\"completion-not-seen\""), std::string::npos);
}

// The recorded device (sda) is never the iolog's target unless named: fio on
// a lab host would write to its own disk of that name.
TEST(Convert, FioIologV3ThatTheReaderReadsBack) {
  TempDir t;
  auto in = native(t, "a.blkrr");
  auto s = convert(opts(in, t.file("a.iolog")));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(testing::slurp(t.file("a.iolog")),
            "fio version 3 iolog\n"
            "0 /dev/sdX add\n"
            "0 /dev/sdX open\n"
            "0 /dev/sdX write 51200 4096\n"
            "100 /dev/sdX read 102400 8192\n"
            "2000 /dev/sdX sync 0 0\n"
            "3000 /dev/sdX read 153600 512\n"
            "4000 /dev/sdX write 204800 4096\n"
            "4000 /dev/sdX close\n");
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("--fio-file"), std::string::npos) << s->warnings[0];
  EXPECT_TRUE(s->not_expressible.empty());
  auto back = convert(opts(t.file("a.iolog"), t.file("b.load")));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->in, 5u);
  EXPECT_EQ(read_load(t.file("b.load"))[1].start_ns, 100'000);
  EXPECT_TRUE(back->warnings.empty());  // a load is no iolog: nothing to warn of
}

TEST(Convert, FioFileNamesTheTargetWhenAsked) {
  TempDir t;
  ConvertOptions o = opts(native(t, "a.blkrr"), t.file("a.iolog"));
  o.fio_file = "/dev/lab0";
  auto s = convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::string log = testing::slurp(t.file("a.iolog"));
  EXPECT_NE(log.find("0 /dev/lab0 write 51200 4096\n"), std::string::npos) << log;
  EXPECT_EQ(log.find("/dev/sda"), std::string::npos) << log;
  EXPECT_TRUE(s->warnings.empty());
}

TEST(Convert, WrapFitsPositionsOntoATargetSize) {
  TempDir t;
  // Target: 1 MiB = 2048 sectors. 4000 wraps to 1952; 2044+8 would cross the
  // end after wrapping (4092 % 2048 = 2044) and is moved back to 2040.
  auto in = t.write(
      "a.load",
      load_text(
          {{0, 8, 8, 'R'}, {1000, 4000, 8, 'W'}, {2000, 4092, 8, 'W'}, {3000, 100000, 4096, 'W'}}));
  auto o = opts(in, t.file("a.iolog"));
  auto f = parse_fit(MapMode::kWrap, "1M");
  ASSERT_TRUE(f.ok()) << f.error().message;
  o.fit = *f;
  auto s = convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto back = read_load_of_iolog(t, t.file("a.iolog"));
  ASSERT_EQ(back.size(), 3u) << "the 2 MiB request does not fit a 1 MiB target";
  EXPECT_EQ(back[0].sector, 8u);
  EXPECT_EQ(back[1].sector, 1952u);
  EXPECT_EQ(back[2].sector, 2040u);
  EXPECT_LE(s->max_sector, 2048u);
  ASSERT_TRUE(s->fit.has_value());
  EXPECT_EQ(s->fit->wrapped, 2u);
  EXPECT_EQ(s->fit->clamped, 1u);
  EXPECT_EQ(s->fit->too_large, 1u);
  EXPECT_EQ(s->fit->load_end_sector, 104096u);
  EXPECT_NE(s->text().find("wrapped onto 1M"), std::string::npos) << s->text();
  EXPECT_NE(s->text().find("1 requests longer than the target"), std::string::npos) << s->text();
}

TEST(Convert, ScaleMapsTheLoadExtentOntoTheTarget) {
  TempDir t;
  auto in =
      t.write("a.load", load_text({{0, 0, 8, 'R'}, {1000, 2048, 8, 'W'}, {2000, 4088, 8, 'W'}}));
  // The target is a file of 1 MiB (2048 sectors): the load's 4096 sectors halve.
  auto dev = t.write("dev.img", std::string(1 << 20, '\0'));
  auto o = opts(in, t.file("b.load"));
  auto f = parse_fit(MapMode::kScale, dev);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->target_bytes, 1u << 20);
  o.fit = *f;
  auto s = convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto out = read_load(t.file("b.load"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].sector, 0u);
  EXPECT_EQ(out[1].sector, 1024u);
  EXPECT_EQ(out[2].sector, 2040u) << "the last request ends at the target's end";
  EXPECT_EQ(s->fit->load_end_sector, 4096u);
  EXPECT_EQ(s->max_sector, 2048u);
  EXPECT_NE(s->text().find("scaled onto"), std::string::npos) << s->text();
}

TEST(Convert, FitTargetsThatAreNotUsable) {
  EXPECT_EQ(parse_fit(MapMode::kWrap, "12Q").error().kind, ErrorKind::kUsage);
  EXPECT_FALSE(parse_fit(MapMode::kWrap, "/nonexistent/dev").ok());
  EXPECT_FALSE(parse_fit(MapMode::kScale, "/dev/null").ok()) << "a character device has no size";
  EXPECT_FALSE(parse_fit(MapMode::kWrap, "100").ok()) << "smaller than a sector";
  auto g = parse_fit(MapMode::kWrap, "30G");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->target_bytes, uint64_t{30} << 30);
}

TEST(Convert, SelectionFilters) {
  TempDir t;
  auto in = native(t, "a.blkrr");
  auto count = [&](auto set) {
    ConvertOptions o = opts(in, t.file("s.csv"));
    set(o);
    auto s = convert(o);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? s->out : ~0ull;
  };
  EXPECT_EQ(count([](ConvertOptions& o) { o.select.pids = {12}; }), 2u);
  EXPECT_EQ(count([](ConvertOptions& o) { o.select.comms = {"backup"}; }), 1u);
  EXPECT_EQ(count([](ConvertOptions& o) { o.select.cgroups = {7}; }), 4u);
  EXPECT_EQ(
      count([](ConvertOptions& o) { ASSERT_TRUE(parse_op_list("R,F", o.select.op_mask).ok()); }),
      3u);
  EXPECT_EQ(
      count([](ConvertOptions& o) { ASSERT_TRUE(parse_window("0.001:0.0025", o.select).ok()); }),
      2u);
  EXPECT_EQ(count([](ConvertOptions& o) { o.source.device = "sda"; }), 5u);
  // --point complete: the request without a completion is left out, times are completions.
  ConvertOptions o = opts(in, t.file("p.load"));
  o.point = StartPoint::kComplete;
  auto s = convert(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->no_completion, 1u);
  auto v = read_load(t.file("p.load"));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].sector, 200u);  // completed at +400 us
  EXPECT_EQ(v[0].start_ns, 0);
  EXPECT_EQ(v[1].sector, 100u);  // completed at +900 us
  EXPECT_EQ(v[1].start_ns, 500'000);
  // Window on a load is rebased to its start.
  ConvertOptions w = opts(data_path("linux-mysql.load.gz"), t.file("w.load"));
  ASSERT_TRUE(parse_window("600:300", w.select).ok());
  auto ws = convert(w);
  ASSERT_TRUE(ws.ok());
  auto wv = read_load(t.file("w.load"));
  ASSERT_FALSE(wv.empty());
  EXPECT_GE(wv.front().start_ns, 0);
  EXPECT_LT(wv.back().start_ns, 300'000'000'000);
  EXPECT_EQ(ws->out, 5754u);  // awk -F';' '$1 >= 600 && $1 < 900'
  EXPECT_LT(ws->in, 80794u);  // reading stops after the window
}

TEST(Convert, TransformationsOnACraftedLoad) {
  TempDir t;
  auto in = t.write("c.load", load_text({{0, 1000, 8, 'R'},
                                         {1'000'000'000, 2003, 8, 'W'},
                                         {2'000'000'000, 3000, 3, 'R'},
                                         {3'000'000'000, 4000, 100, 'W'}}));
  auto run = [&](auto set) {
    ConvertOptions o = opts(in, t.file("o.load"));
    set(o);
    auto s = convert(o);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return read_load(t.file("o.load"));
  };
  // slip 2:16: the 2nd request and every later one +16, the 4th +32.
  auto v = run([](ConvertOptions& o) { ASSERT_TRUE(parse_slip("2:16", o.transform).ok()); });
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].sector, 1000u);
  EXPECT_EQ(v[1].sector, 2019u);
  EXPECT_EQ(v[2].sector, 3016u);
  EXPECT_EQ(v[3].sector, 4032u);
  v = run([](ConvertOptions& o) { ASSERT_TRUE(parse_subst("R=W", o.transform).ok()); });
  EXPECT_EQ(v[0].op, Op::kWrite);
  EXPECT_EQ(v[2].op, Op::kWrite);
  // spread 2:8:5: floor(2003*2/8)*8 + 2003%8 + 5 = 4000 + 3 + 5
  v = run([](ConvertOptions& o) { ASSERT_TRUE(parse_spread("2:8:5", o.transform).ok()); });
  EXPECT_EQ(v[0].sector, 2005u);
  EXPECT_EQ(v[1].sector, 4008u);
  // resize 1.5:4:64: 8->12, 3->4 (min), 100->64 (max)
  v = run([](ConvertOptions& o) { ASSERT_TRUE(parse_resize("1.5:4:64", o.transform).ok()); });
  EXPECT_EQ(v[0].sectors, 12u);
  EXPECT_EQ(v[2].sectors, 4u);
  EXPECT_EQ(v[3].sectors, 64u);
  v = run([](ConvertOptions& o) { o.timescale = 0.5; });
  EXPECT_EQ(v[3].start_ns, 1'500'000'000);
  // repeat 3: period = span 3 s + mean gap 1 s.
  v = run([](ConvertOptions& o) { o.repeat = 3; });
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v[4].start_ns, 4'000'000'000);
  EXPECT_EQ(v[11].start_ns, 11'000'000'000);
  EXPECT_EQ(v[11].sector, 4000u);
  // until 6 s: the passes continue until a start reaches 6 s.
  v = run([](ConvertOptions& o) { o.until_ns = 6'000'000'000; });
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[5].start_ns, 5'000'000'000);
}

TEST(Convert, DeriveDealsSnippetsHeaviestFirst) {
  TempDir t;
  // Snippets of 10 s: #0 has 1 request, #1 has 3, #2 has 2, #3 has 4.
  std::vector<Rec> recs = {{1'000'000'000, 1, 8, 'R'},  {11'000'000'000, 2, 8, 'R'},
                           {12'000'000'000, 3, 8, 'R'}, {13'000'000'000, 4, 8, 'R'},
                           {25'000'000'000, 5, 8, 'W'}, {26'000'000'000, 6, 8, 'W'},
                           {30'000'000'000, 7, 8, 'W'}, {31'000'000'000, 8, 8, 'W'},
                           {32'000'000'000, 9, 8, 'W'}, {39'500'000'000, 10, 8, 'W'}};
  auto in = t.write("d.load", load_text(recs));
  ConvertOptions o = opts(in, t.file("d.load.gz"));
  o.derive = 2;
  o.snippet_ns = 10'000'000'000;
  auto s = convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->outputs.size(), 2u);
  EXPECT_EQ(s->outputs[0], t.file("d.000.load.gz"));
  // Ranking: #3 (4), #1 (3), #2 (2), #0 (1) -> file 0: #3 then #2; file 1: #1 then #0.
  auto a = read_load(t.file("d.000.load.gz"));
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].sector, 7u);
  EXPECT_EQ(a[0].start_ns, 0);
  EXPECT_EQ(a[3].sector, 10u);
  EXPECT_EQ(a[3].start_ns, 9'500'000'000);
  EXPECT_EQ(a[4].sector, 5u);
  EXPECT_EQ(a[4].start_ns, 15'000'000'000);  // slot 1, 5 s into its snippet
  auto b = read_load(t.file("d.001.load.gz"));
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].sector, 2u);
  EXPECT_EQ(b[0].start_ns, 1'000'000'000);
  EXPECT_EQ(b[3].sector, 1u);
  EXPECT_EQ(b[3].start_ns, 11'000'000'000);
  EXPECT_EQ(derived_path("x.blkrr", 7), "x.007.blkrr");
  EXPECT_EQ(derived_path("noext", 0), "noext.000");
  EXPECT_EQ(Deriver::create(0, 10).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(Deriver::create(2, 0).error().kind, ErrorKind::kUsage);
}

// Options whose values the output cannot take are usage errors, found before
// anything is written.
TEST(Convert, OutputOptionsTheOutputCannotTakeAreUsageErrors) {
  TempDir t;
  auto in = t.write("u.load", load_text({{0, 1, 8, 'R'}, {1'000'000'000, 2, 8, 'W'}}));
  ConvertOptions far = opts(in, t.file("far.load"));
  far.timescale = 5e9;  // 1 s becomes 5e18 ns, past 2^62
  auto f = convert(far);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind, ErrorKind::kUsage) << f.error().message;
  EXPECT_FALSE(std::filesystem::exists(t.file("far.load")));
  ConvertOptions fio = opts(in, t.file("u.iolog"));
  fio.fio_file = "/dev/lab disk";
  EXPECT_EQ(convert(fio).error().kind, ErrorKind::kUsage);
  ConvertOptions native = opts(in, "-");
  native.to = OutputFormat::kNative;
  EXPECT_EQ(convert(native).error().kind, ErrorKind::kUsage);
}

TEST(Convert, BlktraceToLoadAndUsageErrors) {
  TempDir t;
  auto s = convert(opts(data_path("blktrace/fio-randrw"), t.file("f.load")));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->out_by_op.at(Op::kRead), 3000u);
  EXPECT_EQ(s->out_by_op.at(Op::kWrite), 3000u);
  EXPECT_FALSE(convert(opts(data_path("blktrace/fio-randrw"), "")).ok());
  ConvertOptions o = opts(data_path("linux-mysql.load.gz"), t.file("x"));
  o.timescale = 0;
  EXPECT_FALSE(convert(o).ok());
  auto bad = convert(opts(t.file("missing.load"), t.file("y.load")));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(bad.error().message.find("missing.load"), std::string::npos);
  // Selections on fields a load does not have are refused, not silently empty.
  const std::vector<std::function<void(ConvertOptions&)>> refused = {
      [](ConvertOptions& c) { c.select.pids = {1}; },
      [](ConvertOptions& c) { c.select.comms = {"x"}; },
      [](ConvertOptions& c) { c.select.cgroups = {1}; },
      [](ConvertOptions& c) { c.point = StartPoint::kComplete; },
      [](ConvertOptions& c) { c.source.device = "sda"; },
  };
  for (const auto& set : refused) {
    ConvertOptions c = opts(data_path("linux-mysql.load.gz"), t.file("z.load"));
    set(c);
    auto r = convert(c);
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << r.error().message;
    }
  }
  auto in = t.write("same.load", load_text({{0, 1, 8, 'R'}}));
  auto same = convert(opts(in, in));
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message.find("is the input"), std::string::npos);
  EXPECT_EQ(read_load(in).size(), 1u);  // untouched
  auto nodir = convert(opts(data_path("linux-mysql.load.gz"), "/nonexistent/dir/x.load"));
  ASSERT_FALSE(nodir.ok());
  EXPECT_NE(nodir.error().message.find("/nonexistent/dir/x.load"), std::string::npos);
}

// fio itself replays the iolog we write (skipped where fio is not installed).
TEST(Convert, FioReplaysOurIolog) {
  if (std::system("fio --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  TempDir t;
  auto target = t.file("target.img");
  ASSERT_EQ(std::system(("truncate -s 16M " + target).c_str()), 0);
  auto in =
      t.write("f.load",
              load_text({{0, 0, 8, 'W'}, {1'000'000, 4096, 16, 'R'}, {2'000'000, 10000, 8, 'W'}}));
  ConvertOptions o = opts(in, t.file("f.iolog"));
  o.fio_file = target;
  ASSERT_TRUE(convert(o).ok());
  std::string cmd = "fio --name=r --read_iolog=" + t.file("f.iolog") +
                    " --ioengine=psync --output-format=terse --terse-version=3 > " +
                    t.file("fio.out") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::slurp(t.file("fio.out"));
  // Terse v3: field 6 = read KiB, 47 = write KiB (1-based, ';'-separated).
  std::string out = testing::slurp(t.file("fio.out"));
  std::vector<std::string> f;
  size_t b = 0;
  for (size_t e; (e = out.find(';', b)) != std::string::npos; b = e + 1)
    f.push_back(out.substr(b, e - b));
  ASSERT_GT(f.size(), 47u) << out;
  EXPECT_EQ(f[5], "8");   // one 8 KiB read
  EXPECT_EQ(f[46], "8");  // two 4 KiB writes
}

}  // namespace
}  // namespace blkrr
