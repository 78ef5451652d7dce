#include "core/io_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/temp_files.h"

namespace blkrr {

namespace {

std::string dir_of(const std::string& path) {
  size_t s = path.rfind('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : path.substr(0, s);
}

std::string base_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

}  // namespace

namespace {
bool same_file(const struct stat& a, const std::string& path) {
  struct stat b;
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The file among `in`'s that is the output `o`, or "". An input that names
// no file stands for the per-CPU files of a blktrace capture, NAME.blktrace.N
// (converters/source.cpp reads them with gaps of up to 64 CPUs); "-" for the
// file standard input comes from.
std::string input_that_is(const struct stat& o, const std::string& in) {
  struct stat ist;
  if (in == "-")  // standard input redirected from the file: `convert - -o X < X`
    return ::fstat(STDIN_FILENO, &ist) == 0 && S_ISREG(ist.st_mode) && ist.st_dev == o.st_dev &&
                   ist.st_ino == o.st_ino
               ? "- (standard input)"
               : "";
  if (::stat(in.c_str(), &ist) == 0) return same_file(o, in) ? in : "";
  for (int cpu = 0, last = -1; cpu < 4096 && cpu <= last + 65; ++cpu) {
    std::string p = in + ".blktrace." + std::to_string(cpu);
    if (::stat(p.c_str(), &ist) != 0) continue;
    last = cpu;
    if (same_file(o, p)) return p;
  }
  return "";
}
}  // namespace

std::string input_file_at(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat st;
  if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0) return "";
  for (const auto& in : inputs)
    if (std::string file = input_that_is(st, in); !file.empty()) return file;
  return "";
}

Status refuse_existing(const std::string& path, const std::string& option, Existing existing) {
  struct stat st;
  if (existing == Existing::kReplace || path.empty() || path == "-" ||
      ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return {};
  return Error(ErrorKind::kUsage, option + " " + path +
                                      " exists; blkrr replaces no file unless asked: give "
                                      "--overwrite to replace it, or another name");
}

Status refuse_existing_in(const std::string& dir, const std::vector<std::string>& names,
                          const std::string& option, Existing existing) {
  if (existing == Existing::kReplace) return {};
  for (const auto& n : names) {
    struct stat st;
    std::string p = dir;
    p.append("/").append(n);
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::string msg = option;
    msg.append(" ").append(dir).append(" holds ").append(n).append(
        " of an earlier run; blkrr replaces no file unless asked: give --overwrite to replace "
        "them, or another directory");
    return Error(ErrorKind::kUsage, msg);
  }
  return {};
}

Status make_directories(const std::string& dir) {
  for (size_t s = dir.find('/', 1);; s = dir.find('/', s + 1)) {
    std::string p = dir.substr(0, s);
    if (!p.empty() && ::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST)
      return Error::system("cannot create the directory " + p, errno);
    if (s == std::string::npos) return {};
  }
}

Status check_can_make_directories(const std::string& dir, const std::string& option) {
  std::string a = dir;
  struct stat st;
  bool found = false;
  do {
    a = dir_of(a);
    found = ::stat(a.c_str(), &st) == 0;
  } while (!found && a != "/" && a != ".");
  if (!found) return Error::system(option + " " + dir + ": " + a, errno).as(ErrorKind::kUsage);
  if (!S_ISDIR(st.st_mode))
    return Error(ErrorKind::kUsage, option + " " + dir + ": " + a + " is not a directory");
  if (::access(a.c_str(), W_OK | X_OK) != 0)
    return Error::system(option + " " + dir + ": cannot create it in " + a, errno,
                         "you may not write in " + a + "; choose a directory you can write to")
        .as(ErrorKind::kUsage);
  return {};
}

Status check_outputs(const std::vector<OutputCheck>& outputs,
                     const std::vector<std::string>& inputs, Existing existing) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& o = outputs[i];
    if (o.path.empty() || o.path == "-") continue;
    struct stat ost;
    bool exists = ::stat(o.path.c_str(), &ost) == 0;
    for (size_t k = 0; k < i; ++k) {
      if (outputs[k].path == o.path)
        return Error(ErrorKind::kUsage, o.option + " " + o.path + " is also the output of " +
                                            outputs[k].option + "; give them different names");
    }
    if (std::string file = exists ? input_file_at(o.path, inputs) : ""; !file.empty())
      return Error(ErrorKind::kUsage,
                   o.option + " " + o.path + " is the input " + file +
                       " (the same file); choose another name, the input would be destroyed");
    if (exists && S_ISDIR(ost.st_mode))
      return Error(ErrorKind::kUsage, o.option + " " + o.path + " is a directory; name a file");
    // Written in place (not replaced), it would lose the disk's data.
    if (exists && S_ISBLK(ost.st_mode))
      return Error(ErrorKind::kUsage, o.option + " " + o.path + " is a block device; name a file");
    std::string dir = dir_of(o.path);
    struct stat dst;
    if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
      return Error(ErrorKind::kUsage, o.option + " " + o.path + ": the directory " + dir +
                                          " does not exist; create it first");
    if (::access(dir.c_str(), W_OK | X_OK) != 0 && !(exists && !S_ISREG(ost.st_mode)))
      return Error::system(o.option + " " + o.path + ": the directory " + dir + " is not writable",
                           errno)
          .as(ErrorKind::kUsage);
    BLKRR_TRY(refuse_existing(o.path, o.option, existing));
  }
  return {};
}

// ---------------------------------------------------------------- AtomicFile

Result<AtomicFile> AtomicFile::create(const std::string& path) {
  AtomicFile f;
  f.path_ = path;
  if (path == "-") {
    f.fd_ = 1;
    return f;
  }
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISBLK(st.st_mode))
    return Error(ErrorKind::kUsage, path + " is a block device; blkrr writes its outputs to files");
  if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    // /dev/null, a FIFO, a terminal: write in place, never replace it.
    f.fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (f.fd_ < 0) return Error::system("cannot open " + path + " for writing", errno);
    return f;
  }
  f.tmp_ = dir_of(path) + "/." + base_of(path) + ".XXXXXX";
  auto made = temp_files::make(f.tmp_);
  if (!made) {
    f.tmp_.clear();
    if (made.error().sys_errno == 0) return made.error();
    return Error::system("cannot create " + path, made.error().sys_errno)
        .append(" (check the directory exists and is writable)");
  }
  f.fd_ = made->fd;
  f.temp_slot_ = made->slot;
  ::fchmod(f.fd_, exists ? (st.st_mode & 07777) : 0644);
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept {
  *this = std::move(o);
}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    abort();
    path_ = std::move(o.path_);
    tmp_ = std::move(o.tmp_);
    fd_ = std::exchange(o.fd_, -1);
    temp_slot_ = std::exchange(o.temp_slot_, -1);
    done_ = std::exchange(o.done_, true);
    o.tmp_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  abort();
}

int AtomicFile::dup_fd() const {
  return fd_ < 0 ? -1 : ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);
}

Status AtomicFile::commit() {
  if (done_) return {};
  done_ = true;
  if (fd_ == 1) {
    fd_ = -1;
    return {};
  }
  Status st;
  auto write_failed = [&] {
    return Error::system("cannot write " + path_, errno).append(" (disk full?)");
  };
  if (fd_ >= 0 && ::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) st = write_failed();
  if (fd_ >= 0 && ::close(fd_) != 0 && st.ok()) st = write_failed();
  fd_ = -1;
  if (!tmp_.empty()) {
    if (st.ok() && ::rename(tmp_.c_str(), path_.c_str()) != 0)
      st = Error::system("cannot rename " + tmp_ + " to " + path_, errno);
    if (!st.ok()) ::unlink(tmp_.c_str());
    tmp_.clear();
  }
  temp_files::forget(std::exchange(temp_slot_, -1));
  return st;
}

void AtomicFile::abort() {
  if (fd_ >= 0 && fd_ != 1) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  temp_files::forget(std::exchange(temp_slot_, -1));
  done_ = true;
}

Status write_file_atomic(const std::string& path, std::string_view data) {
  auto f = AtomicFile::create(path);
  if (!f) return f.error();
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(f->fd(), data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::system("cannot write " + path, errno, "disk full?");
    off += static_cast<size_t>(n);
  }
  return f->commit();
}

size_t json_nesting_depth(std::string_view text) {
  size_t depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace blkrr
