#include "core/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace blkrr {
namespace {

// The errno of a transfer that returned r (0 bytes counts as EIO for a
// write: the kernel made no progress and set nothing).
int transfer_errno(ssize_t r) {
  return r < 0 ? errno : EIO;
}

}  // namespace

Status write_all(int fd, const void* p, size_t n, const char* what) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Error::system(std::string("writing ") + what, transfer_errno(w));
    c += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

Status pwrite_all(int fd, const void* p, size_t n, uint64_t off, const char* what) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, c, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Error::system(std::string("writing ") + what, transfer_errno(w));
    c += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return {};
}

Status pread_all(int fd, void* p, size_t n, uint64_t off, const char* what) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::pread(fd, c, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Error::system(std::string("reading ") + what, errno);
    if (r == 0)
      return Error(ErrorKind::kIo, std::string("reading ") + what + ": end of file " +
                                       std::to_string(n) + " bytes early (at byte " +
                                       std::to_string(off) + ")");
    c += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return {};
}

Result<size_t> read_all(int fd, void* p, size_t n, const char* what) {
  char* c = static_cast<char*>(p);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, c + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Error::system(std::string("reading ") + what, errno);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

Result<std::string> read_file(const std::string& path, size_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::system("cannot open " + path, errno);
  std::string out;
  char buf[16384];
  for (;;) {
    auto r = read_all(fd.get(), buf, sizeof buf, path.c_str());
    if (!r) return r.error();
    if (out.size() + *r > max_bytes)
      return Error(ErrorKind::kBadInput,
                   path + ": longer than " + std::to_string(max_bytes) + " bytes");
    out.append(buf, *r);
    if (*r < sizeof buf) return out;
  }
}

Result<Fd> open_scratch_file(const std::string& purpose) {
  const char* env = std::getenv("TMPDIR");
  std::string dir = env && *env ? env : "/var/tmp";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string tmpl = dir + "/blkrr-scratch.XXXXXX";
    fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0)
      return Error::system("cannot create a temporary file for " + purpose + " in " + dir, errno,
                           "set TMPDIR to a directory with room");
    ::unlink(tmpl.c_str());
  }
  return Fd(fd);
}

}  // namespace blkrr
