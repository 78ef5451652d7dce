// Visual tests of `blkrr report`: every plot kind rendered by gnuplot on a
// small fixture and on synthetic 1-hour and 30-hour loads generated here.
// Checks that each PNG exists, is not blank (a tiny PNG decoder counts its
// colours), that reads and writes both show, that each plot's script names
// the input and its context, and that time plots stay within ~1000 bins.
// BLKRR_REPORT_KEEP=DIR keeps the reports in DIR/<test> for looking at them.
#include <zlib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "report/plot.h"
#include "core/version.h"
#include "report/provenance.h"
#include "report/report.h"
#include "report/report_fixtures.h"

namespace blkrr::report {
namespace {

using testing::slurp;
using testing::TempDir;

struct Png {
  uint32_t width = 0, height = 0;
  std::set<uint32_t> colours;  // distinct RGB values
};

uint32_t be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) |
         static_cast<uint8_t>(s[at + 3]);
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Decodes 8-bit palette, RGB and RGBA PNGs (what gnuplot writes) far enough
// to count their colours. Returns false on anything else.
bool decode_png(const std::string& f, Png& png) {
  if (f.size() < 8 || f.compare(1, 3, "PNG") != 0) return false;
  std::string idat, plte;
  int depth = 0, type = 0;
  for (size_t at = 8; at + 8 <= f.size();) {
    uint32_t len = be32(f, at);
    std::string kind = f.substr(at + 4, 4), data = f.substr(at + 8, len);
    if (kind == "IHDR") {
      png.width = be32(data, 0);
      png.height = be32(data, 4);
      depth = static_cast<uint8_t>(data[8]);
      type = static_cast<uint8_t>(data[9]);
    } else if (kind == "PLTE") {
      plte = data;
    } else if (kind == "IDAT") {
      idat += data;
    }
    at += 12 + len;
  }
  int bpp = type == 3 ? 1 : type == 2 ? 3 : type == 6 ? 4 : 0;
  if (depth != 8 || bpp == 0) return false;
  size_t stride = png.width * static_cast<size_t>(bpp);
  std::string raw((stride + 1) * png.height, '\0');
  uLongf n = raw.size();
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &n,
                 reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK)
    return false;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  for (uint32_t y = 0; y < png.height; ++y) {
    const auto* line = reinterpret_cast<const uint8_t*>(raw.data()) + y * (stride + 1);
    int filter = line[0];
    for (size_t x = 0; x < stride; ++x) {
      int a = x >= static_cast<size_t>(bpp) ? cur[x - bpp] : 0, b = prev[x],
          c = x >= static_cast<size_t>(bpp) ? prev[x - bpp] : 0;
      int pred = filter == 1   ? a
                 : filter == 2 ? b
                 : filter == 3 ? (a + b) / 2
                 : filter == 4 ? paeth(a, b, c)
                               : 0;
      cur[x] = static_cast<uint8_t>(line[1 + x] + pred);
    }
    for (size_t x = 0; x < stride; x += static_cast<size_t>(bpp)) {
      uint32_t rgb;
      if (bpp == 1) {
        size_t i = cur[x] * 3u;
        if (i + 2 >= plte.size()) return false;
        rgb = (static_cast<uint8_t>(plte[i]) << 16) | (static_cast<uint8_t>(plte[i + 1]) << 8) |
              static_cast<uint8_t>(plte[i + 2]);
      } else {
        rgb = (cur[x] << 16) | (cur[x + 1] << 8) | cur[x + 2];
      }
      png.colours.insert(rgb);
    }
    std::swap(prev, cur);
  }
  return true;
}

bool has_colour_near(const Png& p, uint32_t rgb) {
  for (uint32_t c : p.colours) {
    int dr = static_cast<int>((c >> 16) & 255) - static_cast<int>((rgb >> 16) & 255);
    int dg = static_cast<int>((c >> 8) & 255) - static_cast<int>((rgb >> 8) & 255);
    int db = static_cast<int>(c & 255) - static_cast<int>(rgb & 255);
    if (dr * dr + dg * dg + db * db < 40 * 40) return true;
  }
  return false;
}

// A synthetic native-trace-like load of `hours` hours: a daily-ish wave of
// requests, 30 % reads, power-of-two sizes, latencies around 0.3/2 ms, and
// one 3 s stall in the second minute.
Dataset synthetic(const std::string& label, double hours, double mean_iops) {
  Dataset d;
  d.label = label;
  d.path = label + ".blkrr";
  d.kind = DataKind::kTrace;
  d.info.push_back(trace_info_line("synth-host", "6.18.0-test", version(), "sdz (SYNTH disk)",
                                   1024.0 * 1024 * 1024 * 1024, 1.7e9));
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> lat(0, 0.6);
  double t = 0, end = hours * 3600;
  uint64_t pos = 0;
  while (t < end) {
    double wave = 1 + 0.8 * std::sin(t / end * 6.28318 * 3);
    t += -std::log(1 - u(rng)) / (mean_iops * wave);
    Sample s;
    s.t_ns = static_cast<uint64_t>(t * 1e9);
    s.op = u(rng) < 0.3 ? kSampleRead : kSampleWrite;
    s.sectors = 8u << static_cast<unsigned>(u(rng) * 5);
    pos = u(rng) < 0.6 ? pos + s.sectors : static_cast<uint64_t>(u(rng) * 2e9);
    s.sector = pos;
    s.flags = kSampleHasLatency;
    double ms = (s.write() ? 0.3 : 2.0) * lat(rng);
    if (t > 100 && t < 100.05) ms = 3000;  // the stall
    s.latency_ns = static_cast<uint64_t>(ms * 1e6);
    d.samples.push_back(s);
  }
  return d;
}

struct Rendered {
  nlohmann::json js;
  std::string dir;
};

void check_report(const std::string& name, const std::vector<Dataset>& data,
                  const std::string& context, size_t min_plots) {
  if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed: no PNGs";
  TempDir tmp;
  std::string dir = tmp.path();
  if (const char* keep = std::getenv("BLKRR_REPORT_KEEP")) dir = std::string(keep) + "/" + name;
  ReportOptions o;
  o.out_dir = dir;
  if (const char* keep = std::getenv("BLKRR_REPORT_KEEP")) {
    ASSERT_EQ(std::system(("mkdir -p '" + std::string(keep) + "'").c_str()), 0);
  }
  auto r = make_report(data, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->render.ran);
  EXPECT_EQ(r->render.produced, r->plots) << r->render.message;
  EXPECT_GE(r->plots, min_plots);
  auto js = nlohmann::json::parse(slurp(dir + "/report.json"));
  for (const auto& p : js["plots"]) {
    std::string rel = p.get<std::string>();
    std::string stem = rel.substr(6, rel.size() - 10);  // plots/NAME.png
    Png png;
    ASSERT_TRUE(decode_png(slurp(std::string(dir).append("/").append(rel)), png)) << rel;
    EXPECT_EQ(png.width, 1200u) << rel;
    EXPECT_EQ(png.height, 800u) << rel;
    EXPECT_GE(png.colours.size(), 5u) << rel << ": nearly blank";
    std::string gp = slurp(std::string(dir).append("/plots/").append(stem).append(".gp"));
    EXPECT_NE(gp.find(context), std::string::npos) << stem << " lacks the context " << context;
    EXPECT_NE(gp.find(std::string("blkrr ") + version()), std::string::npos) << stem;
    if (stem == "iops" || stem == "sonar" || stem == "size-histogram") {
      EXPECT_TRUE(has_colour_near(png, 0x0000ff)) << rel << ": no reads drawn";
      EXPECT_TRUE(has_colour_near(png, 0xff0000)) << rel << ": no writes drawn";
    }
  }
  // Time plots hold at most ~1000 bins (two rows per bin).
  for (const auto& f : js["data_files"]) {
    std::string path = f.get<std::string>();
    if (path.find("-plot.csv") == std::string::npos) continue;
    std::string text = slurp(std::string(dir).append("/").append(path));
    EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 2 * 1000 + 1) << path;
  }
  std::string html = slurp(dir + "/index.html");
  size_t summary = html.find("<h2>Summary</h2>"), first = html.find("<h2 id=");
  EXPECT_LT(summary, first) << "the summary is not at the top";
}

TEST(ReportVisual, SmallReplay) {
  Dataset d;
  d.label = "small";
  d.path = "small.replay.gz";
  d.kind = DataKind::kReplay;
  d.info = {
      R"(SUMMARY: {"device":{"path":"/dev/loop7","size_bytes":1073741824},"start_unix":1700000000})"};
  for (int i = 0; i < 40; ++i) {
    Sample s;
    s.t_ns = static_cast<uint64_t>(i) * 50'000'000;
    s.sector = 1000 + 64 * static_cast<uint64_t>(i % 7);
    s.sectors = 8u << (i % 3);
    s.op = i % 13 == 0 ? kSampleRead : kSampleWrite;  // three reads among writes
    s.flags = kSampleHasLatency | kSampleHasDelay;
    s.delay_ns = (i % 5) * 20'000;
    s.latency_ns = static_cast<uint64_t>(300'000 + (i % 9) * 150'000);
    d.samples.push_back(s);
  }
  std::vector<Dataset> v;
  v.push_back(std::move(d));
  check_report("small", v, "/dev/loop7 (1.00 GiB)", 13);
}

TEST(ReportVisual, OneHourLoad) {
  std::vector<Dataset> v;
  v.push_back(synthetic("hour", 1, 30));
  check_report("hour", v, "host synth-host, kernel 6.18.0-test", 30);
}

TEST(ReportVisual, ThirtyHourLoad) {
  std::vector<Dataset> v;
  v.push_back(synthetic("day", 30, 2));
  check_report("day", v, "sdz (SYNTH disk) (1.00 TiB)", 30);
}

TEST(ReportVisual, CompareOriginalAndReplay) {
  Dataset orig = synthetic("orig", 0.1, 50);
  Dataset rep;
  rep.label = "rep";
  rep.path = "rep.replay.gz";
  rep.kind = DataKind::kReplay;
  rep.info = {
      R"(INFO: settings {"speedup":1,"mapping":"wrap","order":"global","engine":"uring","queue_depth":32})",
      R"(SUMMARY: {"mapping":{"wraparound_factor":4.5},"load":{"path":"orig.blkrr"}})"};
  orig.samples.for_each([&rep](Sample s) {
    s.flags |= kSampleHasDelay;
    s.delay_ns = 30'000;
    s.latency_ns = s.latency_ns * 12 / 10;
    rep.samples.push_back(s);
  });
  std::vector<Dataset> v;
  v.push_back(std::move(orig));
  v.push_back(std::move(rep));
  if (find_program("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed: no PNGs";
  TempDir tmp;
  ReportOptions o;
  o.out_dir = tmp.path();
  o.compare = true;
  auto r = make_report(v, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->render.produced, r->plots) << r->render.message;
  std::string gp = slurp(tmp.path() + "/plots/cmp-iops.gp");
  EXPECT_NE(gp.find("wraparound factor 4.50: the load spans 4.50 times the device size"),
            std::string::npos);
  std::string html = slurp(tmp.path() + "/index.html");
  EXPECT_NE(html.find("<b>Replay fidelity</b>"), std::string::npos);
  EXPECT_NE(html.find("rep vs orig: replay fidelity (was the load reproduced)"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::report

namespace blkrr::report {
namespace {

// Timing of a whole report (read, analyses, data, PNGs, HTML) of the file in
// BLKRR_REPORT_BENCH_INPUT, into BLKRR_REPORT_BENCH_OUT (default a temporary
// directory); skipped without it. docs/performance.md has the numbers.
TEST(ReportVisual, BenchmarkOnAFile) {
  const char* in = std::getenv("BLKRR_REPORT_BENCH_INPUT");
  if (!in) GTEST_SKIP() << "set BLKRR_REPORT_BENCH_INPUT=FILE to time a report of FILE";
  TempDir tmp;
  const char* out = std::getenv("BLKRR_REPORT_BENCH_OUT");
  auto t0 = std::chrono::steady_clock::now();
  auto d = load_dataset(in, "");
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto t1 = std::chrono::steady_clock::now();
  size_t n = d->samples.size();
  std::vector<Dataset> v;
  v.push_back(std::move(*d));
  ReportOptions o;
  o.out_dir = out ? out : tmp.path();
  auto r = make_report(v, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto t2 = std::chrono::steady_clock::now();
  double read_s = std::chrono::duration<double>(t1 - t0).count(),
         report_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf(
      "%s: %zu requests, read %.2f s, report %.2f s (%zu plots), total %.2f s = %.2f s per "
      "million requests\n",
      in, n, read_s, report_s, r->plots, read_s + report_s,
      (read_s + report_s) / (static_cast<double>(n) / 1e6));
}

}  // namespace
}  // namespace blkrr::report
