#include "converters/dataset_lines.h"

namespace blkrr {

namespace {
class EmptyStream : public ByteStream {
 public:
  Result<size_t> read(char*, size_t) override { return size_t{0}; }
};

bool ends_with(const std::string& s, const char* suffix) {
  const std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}
}  // namespace

bool is_trace_member(const std::string& name) {
  size_t slash = name.rfind('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  if (base.empty() || base.rfind("._", 0) == 0) return false;
  std::string lower;
  for (char c : base) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  if (lower.rfind("readme", 0) == 0) return false;
  for (const char* doc : {".txt", ".md", ".md5", ".pdf"})
    if (ends_with(lower, doc)) return false;
  return true;
}

Result<DatasetLines> DatasetLines::open(const std::string& path) {
  DatasetLines d;
  d.display_ = path;
  if (!looks_like_tar_gz(path)) {
    auto r = LineReader::open(path);
    if (!r) return r.error();
    d.cur_.emplace(std::move(*r));
    return d;
  }
  auto tar = TarGzReader::open(path, path);
  if (!tar) return tar.error();
  d.tar_ = std::move(*tar);
  d.cur_.emplace(LineReader::over(path, std::make_unique<EmptyStream>()));
  return d;
}

Result<bool> DatasetLines::next_member() {
  for (;;) {
    auto got = tar_->next_member();
    if (!got || !*got) return got;
    if (!is_trace_member(tar_->member_name())) {
      ++skipped_;
      continue;
    }
    ++members_;
    cur_.emplace(
        LineReader::over(display_ + "[" + tar_->member_name() + "]", tar_->member_stream()));
    return true;
  }
}

Result<bool> DatasetLines::next(std::string_view& line) {
  for (;;) {
    if (done_) return false;
    auto got = cur_->next(line);
    if (!got || *got || !tar_) return got;
    if (cur_->unterminated()) ++unterminated_;
    auto more = next_member();
    if (!more) return more;
    if (!*more) {
      done_ = true;
      return false;
    }
  }
}

void DatasetLines::count(Counters& c) const {
  if (!tar_) {
    count_unterminated(*cur_, c);
    return;
  }
  c["archive members read"] = members_;
  if (skipped_) c["archive members skipped (not trace files)"] = skipped_;
  if (tar_->other_members())
    c["archive entries without data (directories, links)"] = tar_->other_members();
  if (unterminated_) c["archive members whose last line has no newline"] = unterminated_;
}

}  // namespace blkrr
