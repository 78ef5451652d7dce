// Helpers shared by the report tests: temporary directories and small files.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/dataset.h"

namespace blkrr::report::testing {

// A fresh directory under /tmp, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/blkrr-report-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Datasets are move-only (their samples may live in a temporary file).
template <class... D>
std::vector<Dataset> datasets(D&&... d) {
  std::vector<Dataset> v;
  (v.push_back(std::forward<D>(d)), ...);
  return v;
}

inline bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

}  // namespace blkrr::report::testing
