#include "report/csv.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <unistd.h>

namespace blkrr::report {

Result<CsvFile> CsvFile::create(const std::string& path, const std::vector<std::string>& columns) {
  CsvFile c;
  c.path_ = path;
  auto af = AtomicFile::create(path);
  if (!af) return af.error();
  c.file_.emplace(std::move(*af));
  int fd = c.file_->dup_fd();
  c.f_.reset(fd < 0 ? nullptr : ::fdopen(fd, "w"));
  if (!c.f_) return Error::system("cannot create " + path, errno);
  for (size_t i = 0; i < columns.size(); ++i)
    std::fprintf(c.f_.get(), "%s%s", i ? "," : "", columns[i].c_str());
  std::fputc('\n', c.f_.get());
  return c;
}

std::string fmt_num(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void CsvFile::row(std::initializer_list<double> values) {
  bool first = true;
  for (double v : values) {
    if (!first) std::fputc(',', f_.get());
    std::fputs(fmt_num(v).c_str(), f_.get());
    first = false;
  }
  std::fputc('\n', f_.get());
  ++rows_;
}

void CsvFile::row(const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) std::fputc(',', f_.get());
    std::fputs(fmt_num(values[i]).c_str(), f_.get());
  }
  std::fputc('\n', f_.get());
  ++rows_;
}

void CsvFile::text_row(const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i)
    std::fprintf(f_.get(), "%s%s", i ? "," : "", cells[i].c_str());
  std::fputc('\n', f_.get());
  ++rows_;
}

Status CsvFile::close() {
  if (!f_) return {};
  bool bad = std::ferror(f_.get()) != 0;
  bool close_failed = std::fclose(f_.release()) != 0;
  if (bad || close_failed) {
    if (file_) file_->abort();
    return Error(ErrorKind::kIo, "writing " + path_ + " failed (disk full?)");
  }
  return file_ ? file_->commit() : Status{};
}

}  // namespace blkrr::report
