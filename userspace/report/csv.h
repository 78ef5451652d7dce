// Small CSV writer for the report's data files (header row, then numbers).
#pragma once

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fd.h"
#include "core/io_guard.h"
#include "core/result.h"

namespace blkrr::report {

class CsvFile {
 public:
  static Result<CsvFile> create(const std::string& path, const std::vector<std::string>& columns);
  CsvFile(CsvFile&&) noexcept = default;
  CsvFile& operator=(CsvFile&&) noexcept = default;

  void row(std::initializer_list<double> values);
  void row(const std::vector<double>& values);
  // Text cells are written as they are (no commas or quotes expected).
  void text_row(const std::vector<std::string>& cells);
  uint64_t rows() const { return rows_; }
  Status close();

 private:
  CsvFile() = default;
  std::optional<AtomicFile> file_;  // renamed into place by close()
  FilePtr f_;
  std::string path_;
  uint64_t rows_ = 0;
};

// Formats a number for CSV and tables: integers exactly, others with %.10g.
std::string fmt_num(double v);

}  // namespace blkrr::report
