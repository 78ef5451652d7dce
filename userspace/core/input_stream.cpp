#include "core/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace blkrr {

// One non-seekable input, shared by every reader of it in this process.
struct StreamInput {
  std::mutex mu;
  Fd fd;
  std::string name;
  std::string prefix;        // the first bytes read, kept for the next reader
  bool eof = false;          // the input has ended
  bool past_prefix = false;  // a reader went on past the prefix: no rewinding now
  uint64_t source_pos = 0;   // bytes taken from fd so far

  Result<size_t> read_source(char* dst, size_t cap) {
    for (;;) {
      ssize_t n = ::read(fd.get(), dst, cap);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error::system("cannot read " + name, errno);
      if (n == 0) eof = true;
      source_pos += static_cast<uint64_t>(n);
      return static_cast<size_t>(n);
    }
  }

  Error read_twice() const {
    return Error(ErrorKind::kUnsupported,
                 name +
                     " is a pipe or a device and can be read only once, but this needs a "
                     "second pass over it (--scale, --repeat, a report, several inputs "
                     "naming it): save it to a file and name the file");
  }

  // The bytes at `pos` for a reader that has read everything before it.
  Result<size_t> read_at(uint64_t pos, char* dst, size_t cap) {
    std::lock_guard<std::mutex> lk(mu);
    if (pos < prefix.size()) {
      size_t n = std::min<size_t>(cap, prefix.size() - pos);
      std::memcpy(dst, prefix.data() + pos, n);
      return n;
    }
    if (!past_prefix && prefix.size() < kInputPeekLimit) {
      if (eof) return size_t{0};
      size_t want = std::min(cap, kInputPeekLimit - prefix.size());
      size_t old = prefix.size();
      prefix.resize(old + want);
      auto n = read_source(prefix.data() + old, want);
      prefix.resize(old + (n ? *n : 0));
      if (!n) return n;
      std::memcpy(dst, prefix.data() + old, *n);
      return *n;
    }
    if (!past_prefix) past_prefix = true;
    if (pos != source_pos) return read_twice();
    if (eof) return size_t{0};
    return read_source(dst, cap);
  }
};

namespace {

std::mutex registry_mu;
std::map<std::string, std::shared_ptr<StreamInput>>& registry() {
  static std::map<std::string, std::shared_ptr<StreamInput>> m;
  return m;
}

// The stream state of `given`, opened on first use.
Result<std::shared_ptr<StreamInput>> stream_of(const std::string& given) {
  std::lock_guard<std::mutex> lk(registry_mu);
  auto& m = registry();
  if (auto it = m.find(given); it != m.end()) return it->second;
  auto s = std::make_shared<StreamInput>();
  s->name = input_name(given);
  if (given == "-") {
    s->fd.reset(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!s->fd) return Error::system("cannot read standard input", errno);
  } else {
    s->fd.reset(::open(given.c_str(), O_RDONLY | O_CLOEXEC));
    if (!s->fd) return Error::system("cannot open " + given, errno);
  }
  m[given] = s;
  return s;
}

// True for a regular file, false for a stream ("-" is always one), or an
// error for what no reader takes.
Result<bool> is_regular(const std::string& given) {
  if (given == "-") return false;
  struct stat st {};
  if (::stat(given.c_str(), &st) != 0)
    return Error::system("cannot open " + given, errno, "check the path");
  if (S_ISDIR(st.st_mode))
    return Error(ErrorKind::kBadInput,
                 given + " is a directory, not a trace or load file; name a file in it");
  if (S_ISBLK(st.st_mode))
    return Error(ErrorKind::kBadInput, given + " is a block device, not a trace or load file");
  return S_ISREG(st.st_mode);
}

ssize_t cookie_read(void* c, char* buf, size_t size) {
  auto n = static_cast<InputFile*>(c)->read(buf, size);
  if (!n) {
    errno = n.error().sys_errno ? n.error().sys_errno : EIO;
    return -1;
  }
  return static_cast<ssize_t>(*n);
}

// ftell() asks for the current position; nothing else can be done.
int cookie_seek(void* c, off64_t* off, int whence) {
  auto* f = static_cast<InputFile*>(c);
  if (whence == SEEK_CUR && *off == 0) {
    *off = static_cast<off64_t>(f->position());
    return 0;
  }
  errno = ESPIPE;
  return -1;
}

int cookie_close(void* c) {
  delete static_cast<InputFile*>(c);
  return 0;
}

}  // namespace

std::string input_name(const std::string& given) {
  return given == "-" ? "standard input" : given;
}

bool input_is_stream(const std::string& given) {
  auto r = is_regular(given);
  return r.ok() && !*r;
}

Result<InputFile> InputFile::open(const std::string& given) {
  InputFile f;
  f.name_ = input_name(given);
  auto regular = is_regular(given);
  if (!regular) return regular.error();
  if (*regular) {
    f.fd_.reset(::open(given.c_str(), O_RDONLY | O_CLOEXEC));
    if (!f.fd_) return Error::system("cannot open " + given, errno, "check the permissions");
    struct stat st {};
    if (::fstat(f.fd_.get(), &st) == 0) f.size_ = static_cast<uint64_t>(st.st_size);
    return f;
  }
  auto s = stream_of(given);
  if (!s) return s.error();
  {
    std::lock_guard<std::mutex> lk((*s)->mu);
    if ((*s)->past_prefix) return (*s)->read_twice();
  }
  f.stream_ = std::move(*s);
  return f;
}

InputFile::InputFile(InputFile&&) noexcept = default;
InputFile& InputFile::operator=(InputFile&&) noexcept = default;
InputFile::~InputFile() = default;

Result<size_t> InputFile::read(char* dst, size_t cap) {
  if (cap == 0) return size_t{0};
  if (stream_) {
    auto n = stream_->read_at(pos_, dst, cap);
    if (n) pos_ += *n;
    return n;
  }
  for (;;) {
    ssize_t n = ::read(fd_.get(), dst, cap);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::system("cannot read " + name_, errno);
    pos_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
}

Result<std::string> peek_input(const std::string& given, size_t n) {
  auto f = InputFile::open(given);
  if (!f) return f.error();
  std::string out(std::min(n, kInputPeekLimit), '\0');
  size_t got = 0;
  while (got < out.size()) {
    auto r = f->read(out.data() + got, out.size() - got);
    if (!r) return r.error();
    if (*r == 0) break;
    got += *r;
  }
  out.resize(got);
  return out;
}

Result<FilePtr> open_input_stdio(const std::string& given) {
  auto regular = is_regular(given);
  if (!regular) return regular.error();
  if (*regular) {
    FilePtr p(std::fopen(given.c_str(), "rb"));
    if (!p) return Error::system("cannot open " + given, errno, "check the permissions");
    return p;
  }
  auto f = InputFile::open(given);
  if (!f) return f.error();
  auto* cookie = new InputFile(std::move(*f));
  cookie_io_functions_t io{cookie_read, nullptr, cookie_seek, cookie_close};
  FILE* p = ::fopencookie(cookie, "rb", io);
  if (!p) {
    delete cookie;
    return Error::system("cannot read " + input_name(given), errno);
  }
  return FilePtr(p);
}

}  // namespace blkrr
