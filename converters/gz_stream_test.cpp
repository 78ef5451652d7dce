#include "converters/gz_stream.h"
#include "converters/text_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace blkrr {
namespace {

std::string tmp_path(const std::string& tag) {
  return "/tmp/blkrr-gz-" + tag + "-" + std::to_string(getpid()) + ".gz";
}

// Text that compresses like a load file: numbers and separators.
std::string sample_text(size_t lines) {
  std::mt19937 rng(7);
  std::ostringstream s;
  for (size_t i = 0; i < lines; i++)
    s << i * 1000 + rng() % 1000 << " ; " << rng() % 100000000 << " ; " << (rng() % 64 + 1) * 8
      << " ; " << rng() % 2 << " ; 0.000" << rng() % 1000 << "\n";
  return s.str();
}

void write_with_sink(const std::string& path, const std::string& text, int level) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  auto sink = GzSink::create(fd, level, path);
  ASSERT_TRUE(sink) << sink.error().message;
  for (size_t off = 0; off < text.size(); off += 100000)
    ASSERT_TRUE(sink->write(text.data() + off, std::min<size_t>(100000, text.size() - off)));
  ASSERT_TRUE(sink->finish());
  ::close(fd);
}

std::string read_with_zlib(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int err = 0;
  gzerror(gz, &err);
  EXPECT_TRUE(err == Z_OK || err == Z_STREAM_END);
  gzclose(gz);
  return out;
}

Result<std::string> read_with_source(const std::string& path) {
  auto src = GzSource::open(path, path);
  if (!src) return src.error();
  std::string out;
  std::vector<char> buf(70000);
  for (;;) {
    auto n = src->read(buf.data(), buf.size());
    if (!n) return n.error();
    if (*n == 0) return out;
    out.append(buf.data(), *n);
  }
}

TEST(GzStream, EveryLevelWritesStandardGzip) {
  const std::string text = sample_text(200000);
  for (int level : {1, 2, 3, 6, 9}) {
    const std::string p = tmp_path("lvl" + std::to_string(level));
    write_with_sink(p, text, level);
    EXPECT_EQ(read_with_zlib(p), text) << "level " << level;
    auto back = read_with_source(p);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, text) << "level " << level;
    std::remove(p.c_str());
  }
}

TEST(GzStream, ReadsConcatenatedMembersAndPlainFiles) {
  const std::string a = sample_text(1000), b = sample_text(3000);
  const std::string p1 = tmp_path("m1"), p2 = tmp_path("m2"), both = tmp_path("both");
  write_with_sink(p1, a, 1);
  write_with_sink(p2, b, 6);
  ASSERT_EQ(std::system(("cat " + p1 + " " + p2 + " > " + both).c_str()), 0);
  auto back = read_with_source(both);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, a + b);
  const std::string plain = tmp_path("plain");
  std::ofstream(plain) << a;
  auto src = GzSource::open(plain, plain);
  ASSERT_TRUE(src);
  EXPECT_FALSE(src->compressed());
  auto pb = read_with_source(plain);
  ASSERT_TRUE(pb);
  EXPECT_EQ(*pb, a);
  for (const auto& p : {p1, p2, both, plain}) std::remove(p.c_str());
}

TEST(GzStream, CutOffOrDamagedStreamIsAnError) {
  const std::string text = sample_text(50000);
  const std::string p = tmp_path("cut");
  write_with_sink(p, text, 1);
  ASSERT_EQ(truncate(p.c_str(), 20000), 0);
  auto back = read_with_source(p);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().kind, ErrorKind::kBadInput) << back.error().message;
  write_with_sink(p, text, 1);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  auto bad = read_with_source(p);
  ASSERT_FALSE(bad) << "a damaged stream must not read as valid";
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput) << bad.error().message;
  std::remove(p.c_str());
}

TEST(GzStream, DataAfterTheLastMemberIsAnErrorButZeroPaddingIsNot) {
  const std::string text = sample_text(2000);
  const std::string p = tmp_path("trail");
  write_with_sink(p, text, 1);
  auto size = [&] {
    std::ifstream f(p, std::ios::binary | std::ios::ate);
    return static_cast<uint64_t>(f.tellg());
  };
  uint64_t gz_size = size();
  std::ofstream(p, std::ios::app | std::ios::binary) << std::string(600, '\0');
  auto padded = read_with_source(p);
  ASSERT_TRUE(padded) << padded.error().message;
  EXPECT_EQ(*padded, text);
  std::ofstream(p, std::ios::app | std::ios::binary) << "tail";
  auto bad = read_with_source(p);
  ASSERT_FALSE(bad) << "bytes after the last member must not vanish silently";
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().message.find("at byte " + std::to_string(gz_size + 600)), std::string::npos)
      << bad.error().message;
  std::remove(p.c_str());
}

// Files of 1 MiB and more are inflated on a second thread (LineReader):
// the same lines in the same order, and damage still ends the reading with
// the file and line.
TEST(GzStream, LargeFilesReadOnTheInflatingThreadGiveTheSameLines) {
  const std::string text = sample_text(200000);
  const std::string p = tmp_path("big");
  write_with_sink(p, text, 1);
  std::ifstream probe(p, std::ios::binary | std::ios::ate);
  ASSERT_GE(static_cast<uint64_t>(probe.tellg()), 1u << 20) << "too small for the thread";
  auto r = LineReader::open(p);
  ASSERT_TRUE(r) << r.error().message;
  std::string back;
  std::string_view line;
  uint64_t lines = 0;
  for (;;) {
    auto n = r->next(line);
    ASSERT_TRUE(n) << n.error().message;
    if (!*n) break;
    back.append(line).push_back('\n');
    ++lines;
  }
  EXPECT_EQ(lines, 200000u);
  EXPECT_TRUE(back == text);
  std::remove(p.c_str());
}

TEST(GzStream, DamageInALargeFileIsAnErrorWithTheLine) {
  const std::string text = sample_text(200000);
  const std::string p = tmp_path("bigbad");
  write_with_sink(p, text, 1);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(900000);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12);
  }
  auto r = LineReader::open(p);
  ASSERT_TRUE(r) << r.error().message;
  std::string_view line;
  Result<bool> n = true;
  uint64_t lines = 0;
  while ((n = r->next(line)) && *n) ++lines;
  ASSERT_FALSE(n) << "read " << lines << " lines of a damaged file as valid";
  EXPECT_EQ(n.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(n.error().message.find(p + ":"), std::string::npos) << n.error().message;
  EXPECT_GT(lines, 1000u);  // what came before the damage was read
  EXPECT_LT(lines, 200000u);
  std::remove(p.c_str());
}

TEST(GzStream, MissingFileNamesIt) {
  auto src = GzSource::open("/nonexistent/x.gz", "x.gz");
  ASSERT_FALSE(src);
  EXPECT_EQ(src.error().sys_errno, ENOENT);
  EXPECT_NE(src.error().message.find("cannot open x.gz"), std::string::npos);
}

}  // namespace
}  // namespace blkrr
