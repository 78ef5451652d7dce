#include "converters/split_sink.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

#include "converters/gz_stream.h"
#include "converters/load_format.h"
#include "core/fd.h"
#include "core/io_guard.h"

namespace blkrr {

namespace {
struct Volume {
  int64_t first_ns = 0;
  int writer = -1;  // index in the open writers, or -1
  bool has_file = false;
  std::string pending;  // load lines not yet compressed
};

struct Writer {
  uint32_t volume = 0;
  Fd fd;
  std::optional<GzSink> gz;
  uint64_t used = 0;  // LRU clock
};

class VolumeSplitter : public SplitSink {
 public:
  VolumeSplitter(const SplitOptions& o, std::string tmp)
      : o_(o), tmp_(std::move(tmp)), budget_(std::max<size_t>(o.buffer_bytes, kMaxLoadLine)) {
    report_.max_open = std::max<size_t>(o.max_open, 1);
    writers_.reserve(report_.max_open);
    report_.dir = o.dir;
  }
  ~VolumeSplitter() override {
    if (!committed_) discard();
  }
  const SplitReport& report() const override { return report_; }
  bool expresses(Op op) const override { return format_expresses(OutputFormat::kLoad, op); }

  Status write(const OutRecord& rec) override {
    const uint32_t id = dev_minor(rec.r->dev);
    auto [it, fresh] = vols_.try_emplace(id);
    Volume& v = it->second;
    if (fresh) v.first_ns = rec.start_ns;
    request_to_load(*rec.r, 0, lr_);
    lr_.start_ns = std::max<int64_t>(0, rec.start_ns - v.first_ns);
    char line[kMaxLoadLine];
    const size_t n = static_cast<size_t>(format_load_line(line, lr_, LoadKind::kLoad) - line);
    v.pending.append(line, n);
    pending_ += n;
    return pending_ > budget_ ? spill() : Status{};
  }

  Status close(const Counters&) override {
    for (auto& [id, v] : vols_)
      if (!v.pending.empty()) BLKRR_TRY(flush_volume(id, v));
    for (size_t i = 0; i < writers_.size(); ++i) BLKRR_TRY(close_writer(writers_[i]));
    writers_.clear();
    BLKRR_TRY(publish());
    committed_ = true;
    report_.volumes = vols_.size();
    return {};
  }

 private:
  std::string tmp_path(uint32_t id) const { return volume_path(tmp_, id); }

  // The buffered lines over budget: the largest buffers are compressed into
  // their files until half the budget is left, so that each gzip member
  // carries many lines even when thousands of volumes take turns.
  Status spill() {
    std::vector<std::pair<size_t, uint32_t>> order;
    for (const auto& [id, v] : vols_)
      if (!v.pending.empty()) order.emplace_back(v.pending.size(), id);
    std::sort(order.begin(), order.end(), std::greater<>());
    for (const auto& [size, id] : order) {
      if (pending_ <= budget_ / 2) break;
      BLKRR_TRY(flush_volume(id, vols_[id]));
    }
    return {};
  }

  Status flush_volume(uint32_t id, Volume& v) {
    auto w = writer_for(id, v);
    if (!w) return w.error();
    BLKRR_TRY((*w)->gz->write(v.pending.data(), v.pending.size()));
    pending_ -= v.pending.size();
    std::string().swap(v.pending);  // its memory back
    return {};
  }

  // Ends the writer's gzip member and closes its file.
  Status close_writer(Writer& w) {
    if (!w.gz) return {};
    BLKRR_TRY(w.gz->finish());
    w.gz.reset();
    w.fd.reset();  // write errors of the page cache show in publish()'s syncfs
    vols_[w.volume].writer = -1;
    return {};
  }

  // The open writer of a volume; opens it (closing the least recently used
  // one when max_open are open), appending a gzip member to an existing file.
  Result<Writer*> writer_for(uint32_t id, Volume& v) {
    ++clock_;
    if (v.writer >= 0) {
      writers_[static_cast<size_t>(v.writer)].used = clock_;
      return &writers_[static_cast<size_t>(v.writer)];
    }
    size_t slot = writers_.size();
    if (writers_.size() < report_.max_open) {
      writers_.emplace_back();
    } else {
      slot = 0;
      for (size_t i = 1; i < writers_.size(); ++i)
        if (writers_[i].used < writers_[slot].used) slot = i;
      BLKRR_TRY(close_writer(writers_[slot]));
    }
    Writer& w = writers_[slot];
    const std::string path = tmp_path(id);
    const int flags = O_WRONLY | O_CLOEXEC | (v.has_file ? O_APPEND : O_CREAT | O_EXCL);
    w.fd = Fd(::open(path.c_str(), flags, 0644));
    if (!w.fd) return Error::system("cannot open " + path, errno, "check free space and inodes");
    auto gz = GzSink::create(w.fd.get(), o_.gz_level, path);
    if (!gz) return gz.error();
    w.gz.emplace(std::move(*gz));
    w.volume = id;
    w.used = clock_;
    if (v.has_file) {
      ++report_.reopened;
    } else {
      std::vector<std::string> pre = o_.preamble;
      pre.insert(pre.end() - (pre.empty() || !pre.back().empty() ? 0 : 1),
                 "volume " + std::to_string(id));
      const std::string head = load_head(pre, LoadKind::kLoad);
      BLKRR_TRY(w.gz->write(head.data(), head.size()));
      v.has_file = true;
    }
    v.writer = static_cast<int>(slot);
    return &w;
  }

  // Syncs the loads, then renames them into the directory.
  Status publish() {
    std::vector<uint32_t> ids;
    ids.reserve(vols_.size());
    for (const auto& [id, v] : vols_) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (uint32_t id : ids) {
      const std::string final_path = volume_path(o_.dir, id);
      if (std::string in = input_file_at(final_path, o_.inputs); !in.empty())
        return Error(ErrorKind::kUsage, final_path + " is the input " + in +
                                            "; nothing was written (choose another directory)");
    }
    Fd dir(::open(tmp_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir || ::syncfs(dir.get()) != 0)
      return Error::system("cannot sync " + tmp_, errno, "disk full or failing?");
    for (uint32_t id : ids) {
      if (::rename(tmp_path(id).c_str(), volume_path(o_.dir, id).c_str()) != 0)
        return Error::system("cannot rename " + tmp_path(id) + " into " + o_.dir, errno, "");
    }
    ::rmdir(tmp_.c_str());
    Fd out(::open(o_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (out) ::fsync(out.get());
    return {};
  }

  // Removes what was written: the directory is left as it was.
  void discard() {
    writers_.clear();
    for (const auto& [id, v] : vols_) ::unlink(tmp_path(id).c_str());
    ::rmdir(tmp_.c_str());
  }

  SplitOptions o_;
  std::string tmp_;
  std::unordered_map<uint32_t, Volume> vols_;
  std::vector<Writer> writers_;
  uint64_t clock_ = 0;
  size_t budget_, pending_ = 0;  // bytes of lines buffered, at most about budget_
  LoadRecord lr_;
  SplitReport report_;
  bool committed_ = false;
};
}  // namespace

std::string SplitSink::volume_path(const std::string& dir, uint32_t volume) {
  return dir + "/volume-" + std::to_string(volume) + ".load.gz";
}

std::string SplitReport::text() const {
  return "  split:          " + std::to_string(volumes) + " volumes -> " + dir +
         "/volume-ID.load.gz (at most " + std::to_string(max_open) + " open; " +
         std::to_string(reopened) + " re-openings appended a gzip member)\n";
}

namespace {
// The loads of an earlier split in `dir` (volume-ID.load.gz), at most one named.
std::vector<std::string> earlier_loads(const std::string& dir) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  while (dirent* e = ::readdir(d.get())) {
    std::string n = e->d_name;
    if (n.rfind("volume-", 0) == 0 && n.size() > 15 && n.compare(n.size() - 8, 8, ".load.gz") == 0)
      return {n};
  }
  return out;
}
}  // namespace

Result<std::unique_ptr<SplitSink>> SplitSink::create(const SplitOptions& o) {
  if (o.dir.empty()) return Error(ErrorKind::kUsage, "--split-by: no output directory (-o DIR/)");
  struct stat st {};
  if (::stat(o.dir.c_str(), &st) != 0) {
    if (errno != ENOENT || ::mkdir(o.dir.c_str(), 0755) != 0)
      return Error::system("cannot create the directory " + o.dir, errno,
                           "its parent must exist and be writable");
  } else if (!S_ISDIR(st.st_mode)) {
    return Error(ErrorKind::kUsage,
                 "--split-by writes one load per volume: -o " + o.dir + " must be a directory");
  } else {
    BLKRR_TRY(refuse_existing_in(o.dir, earlier_loads(o.dir), "-o", o.existing));
  }
  std::string tmpl = o.dir + "/.blkrr-split.XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return Error::system("cannot create a temporary directory in " + o.dir, errno,
                         "check that it is writable");
  std::unique_ptr<SplitSink> s = std::make_unique<VolumeSplitter>(o, tmpl);
  return s;
}

}  // namespace blkrr
