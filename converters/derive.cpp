#include "converters/derive.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/file_io.h"

namespace blkrr {

namespace {
constexpr size_t kChunk = 4096;

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
}  // namespace

std::string derived_path(const std::string& out, uint32_t index) {
  char num[16];
  std::snprintf(num, sizeof num, ".%03u", index);
  for (const char* suf : {".load.gz", ".load", ".blkrr", ".iolog.gz", ".iolog", ".csv.gz", ".csv",
                          ".jsonl.gz", ".jsonl", ".json.gz", ".json", ".gz"}) {
    if (ends_with(out, suf) && out.size() > std::strlen(suf))
      return out.substr(0, out.size() - std::strlen(suf)) + num + suf;
  }
  return out + num;
}

Result<Deriver> Deriver::create(uint32_t n, int64_t snippet_ns) {
  if (n == 0) return Error(ErrorKind::kUsage, "--derive needs at least one output");
  if (snippet_ns <= 0) return Error(ErrorKind::kUsage, "--snippet must be positive");
  Deriver d;
  d.n_ = n;
  d.snippet_ns_ = snippet_ns;
  auto fd = open_scratch_file("--derive");
  if (!fd) return fd.error();
  d.fd_ = std::move(*fd);
  d.buf_.reserve(kChunk);
  return d;
}

Status Deriver::flush() {
  if (buf_.empty()) return {};
  if (auto w = write_all(fd_.get(), buf_.data(), buf_.size() * sizeof(Rec),
                         "the --derive temporary file");
      !w)
    return Error::system("cannot write the --derive temporary file",
                         w.error().sys_errno ? w.error().sys_errno : EIO,
                         "set TMPDIR to a directory with room");
  written_ += buf_.size();
  buf_.clear();
  return {};
}

Status Deriver::add(const Request& r, int64_t t, int64_t shift) {
  int64_t k = t / snippet_ns_;
  uint64_t seq = written_ + buf_.size();
  if (snippets_.empty() || k > snippets_.back().index) {
    snippets_.push_back({k, seq, 0});
  } else if (k < snippets_.back().index) {
    ++late_;
  }
  ++snippets_.back().count;
  buf_.push_back({r, t, shift});
  if (buf_.size() >= kChunk) return flush();
  return {};
}

Result<std::vector<std::string>> Deriver::finish(const std::string& out, const SinkOptions& so,
                                                 const Counters& counters) {
  BLKRR_TRY(flush());
  // Heaviest first; equal counts keep their time order.
  std::vector<size_t> order(snippets_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return snippets_[a].count > snippets_[b].count; });
  std::vector<std::string> paths;
  std::vector<Rec> chunk(kChunk);
  for (uint32_t f = 0; f < n_; ++f) {
    std::string path = derived_path(out, f);
    auto sink = open_sink(path, so);
    if (!sink) return sink.error();
    int64_t slot = 0;
    for (size_t rank = f; rank < order.size(); rank += n_, ++slot) {
      const Snippet& s = snippets_[order[rank]];
      int64_t delta = (slot - s.index) * snippet_ns_;  // moves the snippet into its slot
      uint64_t done = 0;
      while (done < s.count) {
        size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, s.count - done));
        BLKRR_TRY(pread_all(fd_.get(), chunk.data(), want * sizeof(Rec),
                            (s.first + done) * sizeof(Rec), "the --derive temporary file"));
        for (size_t i = 0; i < want; ++i) {
          OutRecord rec{&chunk[i].r, chunk[i].t + delta, chunk[i].shift + delta};
          BLKRR_TRY((*sink)->write(rec));
        }
        done += want;
      }
    }
    BLKRR_TRY((*sink)->close(counters));
    paths.push_back(path);
  }
  return paths;
}

}  // namespace blkrr
