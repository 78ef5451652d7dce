// Helpers shared by the converters' unit tests: a temporary directory and
// small file utilities.
#pragma once

#include <stdlib.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace blkrr::testing {

inline std::string data_path(const std::string& name) {
  return std::string(BLKRR_TEST_DATA) + "/" + name;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/blkrr-conv-test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
  std::string write_gz(const std::string& name, const std::string& text) const {
    gzFile gz = gzopen(file(name).c_str(), "wb");
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    return file(name);
  }

 private:
  std::string path_;
};

// Whole content of a gzip or plain file.
inline std::string slurp(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  if (!gz) return out;
  char buf[65536];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}

// Bytes of a file as they are on disk.
inline std::string slurp_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

}  // namespace blkrr::testing
