#include "converters/load_format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::data_path;
using testing::TempDir;

// Data lines of a load (lines after the first header that start with a number).
std::vector<std::string> data_lines(const std::string& path) {
  std::vector<std::string> out;
  bool header = false;
  for (const auto& l : testing::lines_of(testing::slurp(path))) {
    if (!header) {
      header = l.find(';') != std::string::npos;
      if (header && l.find("start") != std::string::npos) continue;
    }
    if (!header) continue;
    size_t i = l.find_first_not_of(' ');
    if (i != std::string::npos && l[i] >= '0' && l[i] <= '9') out.push_back(l);
  }
  return out;
}

struct Counts {
  uint64_t n = 0, reads = 0, writes = 0;
  int64_t last_ns = 0;
  uint64_t max_sector = 0;
};

Counts read_all(LoadReader& r) {
  Counts c;
  LoadRecord rec;
  for (;;) {
    auto got = r.next(rec);
    EXPECT_TRUE(got.ok()) << (got.ok() ? "" : got.error().message);
    if (!got.ok() || !*got) break;
    ++c.n;
    (rec.op == Op::kRead ? c.reads : c.writes)++;
    c.last_ns = rec.start_ns;
    c.max_sector = std::max(c.max_sector, rec.sector + rec.sectors);
  }
  return c;
}

TEST(LoadReader, ReadsLinuxMysql) {
  auto r = LoadReader::open(data_path("linux-mysql.load.gz"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind(), LoadKind::kLoad);
  EXPECT_TRUE(r->has_header());
  ASSERT_EQ(r->preamble().size(), 31u);
  EXPECT_EQ(r->preamble()[0], "Copyright Thomas Schoebel-Theuer /  1&1 Internet AG");
  LoadRecord first;
  ASSERT_TRUE(*r->next(first));
  EXPECT_EQ(first.start_ns, 0);
  EXPECT_EQ(first.sector, 37766853u);
  EXPECT_EQ(first.sectors, 64u);
  EXPECT_EQ(first.op, Op::kWrite);
  LoadRecord second;
  ASSERT_TRUE(*r->next(second));
  EXPECT_EQ(second.start_ns, 449518165);
  Counts c = read_all(*r);
  EXPECT_EQ(c.n + 2, 80794u);
  EXPECT_EQ(c.reads, 7187u);  // 7186 "R" + one "RA"
  EXPECT_EQ(c.writes + 2, 73607u);
  EXPECT_EQ(c.last_ns, 3599890074831);
  EXPECT_EQ(r->skipped(), 0u);
  EXPECT_EQ(r->odd_fraction_lines(), 0u);
  EXPECT_TRUE(r->info_lines().empty());
}

TEST(LoadReader, WindowsMssqlPreambleRepeatedMidFile) {
  auto r = LoadReader::open(data_path("windows-mssql.load.gz"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  Counts c = read_all(*r);
  EXPECT_EQ(c.n, 42976u);
  EXPECT_EQ(c.reads, 2528u);
  EXPECT_EQ(c.writes, 40448u);
  EXPECT_EQ(r->repeated_headers(), 1u);
  // The repeated notice after the first header is kept as text, not data.
  ASSERT_EQ(r->info_lines().size(), 25u);
  EXPECT_EQ(r->info_lines()[0], "allowed by the following GNU all-permissive license:");
}

TEST(LoadReader, ReadAheadSuffixKept) {
  TempDir t;
  auto p = t.write("ra.load",
                   "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n"
                   "   1646.446100205 ;     37836712 ;    8 ;RA ; 0.0 ; 0.0\n");
  auto r = LoadReader::open(p);
  ASSERT_TRUE(r.ok());
  LoadRecord rec;
  ASSERT_TRUE(*r->next(rec));
  EXPECT_EQ(rec.op, Op::kRead);
  EXPECT_EQ(rec.op_suffix, 'A');
  EXPECT_EQ(load_to_request(rec).flags, kFlagReadahead);
}

void round_trip(const std::string& name) {
  TempDir t;
  auto r = LoadReader::open(data_path(name));
  ASSERT_TRUE(r.ok());
  auto w = LoadWriter::create(t.file("out.load.gz"), LoadKind::kLoad, r->preamble());
  ASSERT_TRUE(w.ok()) << w.error().message;
  LoadRecord rec;
  for (;;) {
    auto got = r->next(rec);
    ASSERT_TRUE(got.ok());
    if (!*got) break;
    ASSERT_TRUE(w->write(rec).ok());
  }
  ASSERT_TRUE(w->close().ok());
  auto want = data_lines(data_path(name));
  auto have = data_lines(t.file("out.load.gz"));
  ASSERT_EQ(have.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(have[i], want[i]) << "data line " << i;
  // The preamble is kept in front of the header.
  auto out = testing::lines_of(testing::slurp(t.file("out.load.gz")));
  EXPECT_EQ(out[0], r->preamble()[0]);
  EXPECT_EQ(out[r->preamble().size()], load_header(LoadKind::kLoad));
}

TEST(LoadWriter, RoundTripLinuxMysqlByteIdentical) {
  round_trip("linux-mysql.load.gz");
}
TEST(LoadWriter, RoundTripWindowsMssqlByteIdentical) {
  round_trip("windows-mssql.load.gz");
}

TEST(LoadWriter, ReplayResultFormat) {
  TempDir t;
  auto w = LoadWriter::create(t.file("r.replay"), LoadKind::kReplay, {"notice; with semicolon"});
  ASSERT_TRUE(w.ok());
  LoadRecord a;
  a.start_ns = 1500000000;
  a.sector = 123456789012ull;
  a.sectors = 8;
  a.op = Op::kWrite;
  a.pushed_back = true;
  a.delay_ns = -2500;
  a.duration_ns = 12000000345;
  ASSERT_TRUE(w->write(a).ok());
  ASSERT_TRUE(w->write_line("SUMMARY: 1 request").ok());
  ASSERT_TRUE(w->close().ok());
  EXPECT_EQ(testing::slurp(t.file("r.replay")),
            "notice, with semicolon\n"
            "orig_start ; sector; length ; op ;  replay_delay; replay_duration\n"
            "      1.500000000 ; 123456789012 ;    8 ; w ;  -0.000002500 ;  12.000000345\n"
            "SUMMARY: 1 request\n");
  // And it reads back.
  auto r = LoadReader::open(t.file("r.replay"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind(), LoadKind::kReplay);
  LoadRecord b;
  ASSERT_TRUE(*r->next(b));
  EXPECT_EQ(b.start_ns, a.start_ns);
  EXPECT_EQ(b.sector, a.sector);
  EXPECT_TRUE(b.pushed_back);
  EXPECT_EQ(b.delay_ns, a.delay_ns);
  EXPECT_EQ(b.duration_ns, a.duration_ns);
  ASSERT_FALSE(*r->next(b));
  ASSERT_EQ(r->info_lines().size(), 1u);
  EXPECT_EQ(r->info_lines()[0], "SUMMARY: 1 request");
}

TEST(LoadReader, ReplayResultWithInfoAndStatisticsTail) {
  TempDir t;
  auto p = t.write_gz("x.replay.gz",
                      "blkreplay on /dev/sdx started\n"
                      "orig_start ; sector; length ; op ;  replay_delay; replay_duration\n"
                      "tag_start = 1700000000\n"
                      "INFO: device /dev/sdx has 2048 blocks (1024 kB).\n"
                      "   0.000100000 ;        100 ;   8 ; R ;   0.000010000 ;   0.000200000\n"
                      "WARN: sector 5000+8 exceeds 2048, turning on wraparound.\n"
                      "   0.000050000 ;        200 ;   8 ; w ;   0.001000000 ;   0.000300000\n"
                      "VERIFY ERROR (read): bad start tag at sector 100+0\n"
                      "# total     requests          :      2\n"
                      "size of device:              2048 blocks (1024 kB)\n");
  auto r = LoadReader::open(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind(), LoadKind::kReplay);
  ASSERT_EQ(r->preamble().size(), 1u);
  Counts c = read_all(*r);
  EXPECT_EQ(c.n, 2u);
  EXPECT_EQ(c.reads, 1u);
  EXPECT_EQ(c.writes, 1u);
  ASSERT_EQ(r->info_lines().size(), 6u);
  EXPECT_EQ(r->info_lines()[1], "INFO: device /dev/sdx has 2048 blocks (1024 kB).");
  EXPECT_EQ(r->info_lines()[5], "size of device:              2048 blocks (1024 kB)");
}

TEST(LoadReader, OtherFractionWidthsAndNoHeader) {
  TempDir t;
  auto p = t.write("odd.load",
                   "1.5 ; 10 ; 8 ; W ; 0.0 ; 0.0\n"
                   "2 ; 20 ; 8 ; R\n"
                   "  2.0000000015 ; 30 ; 8 ; R ; 0.0 ; 0.0\n");
  auto r = LoadReader::open(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->has_header());
  LoadRecord rec;
  ASSERT_TRUE(*r->next(rec));
  EXPECT_EQ(rec.start_ns, 1500000000);
  ASSERT_TRUE(*r->next(rec));
  EXPECT_EQ(rec.start_ns, 2000000000);
  EXPECT_EQ(rec.sector, 20u);
  ASSERT_TRUE(*r->next(rec));
  EXPECT_EQ(rec.start_ns, 2000000001);  // digits beyond ns are truncated
  EXPECT_FALSE(*r->next(rec));
  EXPECT_EQ(r->odd_fraction_lines(), 3u);
}

struct BadCase {
  const char* line;
  const char* reason;
};

TEST(LoadReader, MalformedLinesNameFileAndLine) {
  const BadCase cases[] = {
      {"   0.1 ; 10 ; 8 ; X ; 0.0 ; 0.0", "bad op"},
      {"   0.1 ; 10 ; 8 ; WW ; 0.0 ; 0.0", "bad op"},
      {"   0.1 ; 10 ; 8 ; ; 0.0 ; 0.0", "bad op"},
      {"   0.1 ; 1x0 ; 8 ; W ; 0.0 ; 0.0", "bad sector"},
      {"   0.1 ; 10 ; -8 ; W ; 0.0 ; 0.0", "bad length"},
      {"   0.1 ; 10 ; 99999999999 ; W ; 0.0 ; 0.0", "length too large"},
      {"   0.1x ; 10 ; 8 ; W ; 0.0 ; 0.0", "bad start time"},
      {"   0.1 ; 10 ; 8 ; W ; abc ; 0.0", "bad replay_delay"},
      {"   0.1 ; 10 ; 8 ; W ; 0.0 ; -1.0", "bad replay_duration"},
      {"   0.1 ; 10 ; 8 ; W ; 0.0 ; 0.0 ; 7", "too many"},
      {"   0.1 ; 10", "too few"},
      {"   0.1 ; 10 ; 8 ; W ; 0.0 ; 0.0 ; 7 ; 8", "too many"},
      {"garbage ; with ; semicolons", "too few"},
      {"garbage ; with ; semi ; colons", "bad start time"},
  };
  for (const auto& bc : cases) {
    TempDir t;
    auto p = t.write("bad.load", std::string("note\nstart ; sector; length ; op ;  x ; y\n") +
                                     "   0.0 ; 1 ; 8 ; R ; 0.0 ; 0.0\n" + bc.line + "\n");
    auto r = LoadReader::open(p);
    ASSERT_TRUE(r.ok());
    LoadRecord rec;
    ASSERT_TRUE(*r->next(rec));
    auto bad = r->next(rec);
    ASSERT_FALSE(bad.ok()) << bc.line;
    EXPECT_NE(bad.error().message.find(p + ":4: "), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find(bc.reason), std::string::npos) << bad.error().message;
  }
}

TEST(LoadReader, SkipBadCountsReasons) {
  TempDir t;
  auto p = t.write("bad.load",
                   "start ; sector; length ; op ;  x ; y\n"
                   "   0.0 ; 1 ; 8 ; R ; 0.0 ; 0.0\n"
                   "   0.1 ; 1 ; 8 ; X ; 0.0 ; 0.0\n"
                   "   0.2 ; 1 ; 8 ; Q ; 0.0 ; 0.0\n"
                   "   0.3 ; zz ; 8 ; W ; 0.0 ; 0.0\n"
                   "   0.4 ; 2 ; 8 ; W ; 0.0 ; 0.0\n");
  auto r = LoadReader::open(p, LoadReadOptions{.skip_bad = true});
  ASSERT_TRUE(r.ok());
  Counts c = read_all(*r);
  EXPECT_EQ(c.n, 2u);
  EXPECT_EQ(r->skipped(), 3u);
  ASSERT_EQ(r->skip_reasons().size(), 2u);
  EXPECT_EQ(r->skip_reasons().begin()->second, 2u);  // "bad op ..."
}

TEST(LoadReader, BadLineBeforeHeader) {
  TempDir t;
  auto p = t.write("bad.load", "notice\n1;2\n");
  auto r = LoadReader::open(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(p + ":2: too few"), std::string::npos) << r.error().message;
}

TEST(LoadReader, TruncatedGzipIsAnErrorWithPosition) {
  TempDir t;
  std::string text = "start ; sector; length ; op ;  x ; y\n";
  for (int i = 0; i < 20000; ++i)
    text += "   0.000000001 ; " + std::to_string(i * 7919) + " ; 8 ; W ; 0.0 ; 0.0\n";
  auto full = t.write_gz("full.load.gz", text);
  std::ifstream in(full, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  auto cut = t.write("cut.load.gz", bytes.substr(0, bytes.size() / 2));
  auto r = LoadReader::open(cut);
  ASSERT_TRUE(r.ok());
  LoadRecord rec;
  Result<bool> got = true;
  uint64_t n = 0;
  while ((got = r->next(rec)).ok() && *got) ++n;
  ASSERT_FALSE(got.ok());
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, 20000u);
  EXPECT_NE(got.error().message.find(cut + ":"), std::string::npos) << got.error().message;
  EXPECT_EQ(got.error().kind, ErrorKind::kBadInput) << got.error().message;
}

TEST(LoadReader, MissingFileAndNotALoad) {
  auto r = LoadReader::open("/nonexistent/x.load.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(r.error().message.find("/nonexistent/x.load.gz"), std::string::npos);
  TempDir t;
  std::string text;
  for (int i = 0; i < 100001; ++i) text += "just text\n";
  auto p = t.write("text.txt", text);
  auto r2 = LoadReader::open(p);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().kind, ErrorKind::kBadInput);
  auto p2 = t.write("long.txt", std::string(2 << 20, 'x'));
  auto r3 = LoadReader::open(p2);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r3.error().message.find(p2 + ":1: line longer"), std::string::npos);
}

TEST(LoadWriter, DiskFullIsAnError) {
  TempDir t;
  std::string gz = t.file("full.load.gz");
  ASSERT_EQ(symlink("/dev/full", gz.c_str()), 0);
  for (const std::string& path : {std::string("/dev/full"), gz}) {
    auto w = LoadWriter::create(path, LoadKind::kLoad, {"x"});
    ASSERT_TRUE(w.ok()) << w.error().message;
    LoadRecord r;
    r.sectors = 8;
    Status st;
    for (int i = 0; i < 200000 && st.ok(); ++i) st = w->write(r);
    if (st.ok()) st = w->close();
    ASSERT_FALSE(st.ok()) << path;
    // The compressing thread's failure keeps its errno too.
    EXPECT_EQ(st.error().sys_errno, ENOSPC) << st.error().message;
    EXPECT_EQ(st.error().kind, ErrorKind::kIo) << st.error().message;
  }
}

TEST(TextIo, NumberFormatting) {
  char buf[64];
  auto s = [&](char* e) { return std::string(buf, e); };
  EXPECT_EQ(s(fmt_sec9(buf, 0, 17)), "      0.000000000");
  EXPECT_EQ(s(fmt_sec9(buf, 3599890074831, 17)), "   3599.890074831");
  EXPECT_EQ(s(fmt_sec9(buf, -1, 0)), "-0.000000001");
  EXPECT_EQ(s(fmt_sec9(buf, 12345678901234567890ull / 2, 0)), "6172839450.617283945");
  EXPECT_EQ(s(fmt_u64_w(buf, 0, 12)), "           0");
  EXPECT_EQ(s(fmt_u64_w(buf, 18446744073709551615ull, 4)), "18446744073709551615");
  EXPECT_EQ(s(fmt_u64(buf, 100)), "100");
  EXPECT_EQ(s(fmt_i64(buf, -42)), "-42");
  EXPECT_EQ(s(fmt_usec3(buf, 1234567)), "1234.567");
  EXPECT_EQ(s(fmt_usec3(buf, 5)), "0.005");
  int64_t ns;
  EXPECT_TRUE(parse_seconds_ns(" .5 ", ns));
  EXPECT_EQ(ns, 500000000);
  EXPECT_FALSE(parse_seconds_ns(".", ns));
  EXPECT_FALSE(parse_seconds_ns("", ns));
  EXPECT_FALSE(parse_seconds_ns("1.2.3", ns));
  uint64_t u;
  EXPECT_FALSE(parse_u64_field("18446744073709551616", u));
  EXPECT_TRUE(parse_u64_field("18446744073709551615", u));
}

}  // namespace
}  // namespace blkrr
