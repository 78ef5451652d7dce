// Writes the seed corpora of the fuzz harnesses into DIR/<harness>/ from the
// samples in tests/data (small cuts, so that libFuzzer mutates quickly) and a
// few hand-made lines. Run by scripts/fuzz.sh; never reads ../shared.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "converters/source.h"
#include "core/trace_format.h"

namespace {

std::string gunzip(const std::string& path, size_t max) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  if (!gz) return out;
  std::vector<char> buf(65536);
  int n;
  while (out.size() < max && (n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()))) > 0)
    out.append(buf.data(), static_cast<size_t>(n));
  gzclose(gz);
  return out.substr(0, max);
}

// The first `lines` lines of a text.
std::string head(const std::string& text, int lines) {
  size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

void put(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

// A native trace of the requests of `load` (a blkreplay load file).
std::string native_of(const std::string& load, const std::string& tmp) {
  auto src = blkrr::open_source({load}, {});
  if (!src) return "";
  blkrr::TraceHeader h;
  h.host = "seed";
  h.settings["converted_from"] = "load";
  blkrr::TraceWriter::Options o;
  o.records_per_block = 16;
  auto w = blkrr::TraceWriter::create(tmp, h, o);
  if (!w) return "";
  blkrr::Request r;
  for (int i = 0; i < 40 && *(*src)->next(r); ++i) {
    r.complete_ns = r.issue_ns + 1000 * static_cast<uint64_t>(i + 1);
    r.set_comm("seed");
    (void)w->append(r);
  }
  (void)w->close({{"lost_events", 0}});
  std::ifstream in(tmp, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds TESTS_DATA_DIR OUT_DIR\n");
    return 2;
  }
  std::string data = argv[1], out = argv[2];
  for (const char* l : {"linux-mysql", "windows-mssql"}) {
    std::string text = head(gunzip(data + "/" + l + ".load.gz", 1 << 20), 60);
    put(out + "/load", l, text);
    std::string replay = text;
    size_t h = replay.find("start ;");
    if (h != std::string::npos) replay.replace(h, 5, "orig_start");
    replay += "INFO: settings {\"timing\":\"timestamp\",\"speedup\":1}\n";
    replay += "SUMMARY: {\"requests\":40,\"errors\":0,\"fake\":false}\n";
    put(out + "/replay", l, replay);
    std::string tmp = out + "/seed-tmp.load";
    put(out, "seed-tmp.load", text);
    std::string native = native_of(tmp, out + "/seed-tmp.blkrr");
    std::filesystem::remove(tmp);
    std::filesystem::remove(out + "/seed-tmp.blkrr");
    if (!native.empty()) {
      put(out + "/native", l, native);
      uint32_t hlen = static_cast<uint32_t>(static_cast<unsigned char>(native[12])) |
                      static_cast<uint32_t>(static_cast<unsigned char>(native[13])) << 8;
      put(out + "/header", l, native.substr(16, hlen));
    }
  }
  for (const char* b : {"ext4-natural", "fio-randrw"}) {
    put(out + "/blkparse", b,
        head(gunzip(data + "/blkparse/" + b + ".blkparse.txt.gz", 1 << 20), 80));
    std::ifstream in(data + "/blktrace/" + b + ".blktrace.0", std::ios::binary);
    std::string bytes(6000, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<size_t>(in.gcount()));
    put(out + "/blktrace", b, bytes);
  }
  std::ifstream io(data + "/fio/randrw-v3.iolog");
  std::string v3(std::istreambuf_iterator<char>(io), {});
  put(out + "/fio", "v3", v3);
  put(out + "/fio", "v2",
      "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 4096 8192\n"
      "/dev/sdb wait 1500 0\n/dev/sdb trim 1024 512\n/dev/sdb sync 0 0\n/dev/sdb close\n");
  put(out + "/msr", "hm",
      "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
      "128166372003061629,hm,1,Read,3221225472,4096,2043\n"
      "128166372016382155,hm,1,Write,2147483648,512,1106\n"
      "128166372026382245,hm,1,Write,0,4096,500\n");
  // datasets: the samples as they are (fuzz_datasets.cpp reads the first
  // byte as the choice of format; mutations of it reach every reader).
  const char* const kSamples[] = {"alibaba.csv", "tencent.csv", "systor17.csv", "k5cloud.csv",
                                  "tencent-2018-10-01-01.tgz"};
  for (const char* name : kSamples) {
    std::ifstream ds(data + "/datasets/" + name, std::ios::binary);
    put(out + "/datasets", name, std::string(std::istreambuf_iterator<char>(ds), {}));
  }
  return 0;
}
