// matrix_io: a known O_DIRECT load for the kernel matrix (scripts/kernel-matrix.sh).
// Usage: matrix_io DEV COMM COUNT FIRST_SECTOR
// Names itself COMM, then issues COUNT writes and COUNT reads, one at a time, with
// O_DIRECT: request i is at FIRST_SECTOR + i*128 and is 4096 << (i % 4) bytes.
// Prints "pid PID" and then one line "OP SECTOR BYTES" per request it issued
// (OP is W or R) so the caller can compare a recorded trace with exactly this.
// Built statically (no libraries in the guest): plain libc only.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

constexpr unsigned long long kStride = 128;  // sectors between requests (64 KiB)
constexpr size_t kMaxBytes = 4096 << 3;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

bool parse_u64(const char* s, unsigned long long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s, &end, 10);
  return errno == 0 && end != s && *end == '\0';
}

int run(const char* dev, unsigned long long count, unsigned long long first) {
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, kMaxBytes) != 0) return 1;
  std::unique_ptr<void, FreeDeleter> mem(raw);
  char* buf = static_cast<char*>(raw);
  std::memset(buf, 0x5a, kMaxBytes);
  Fd f{open(dev, O_RDWR | O_DIRECT)};
  int fd = f.fd;
  if (fd < 0) {
    std::fprintf(stderr, "matrix_io: open %s: %s\n", dev, std::strerror(errno));
    return 1;
  }
  std::printf("pid %d\n", static_cast<int>(getpid()));
  for (int pass = 0; pass < 2; ++pass) {
    for (unsigned long long i = 0; i < count; ++i) {
      unsigned long long sector = first + i * kStride;
      size_t bytes = size_t{4096} << (i % 4);
      off_t off = static_cast<off_t>(sector * 512);
      ssize_t n = pass == 0 ? pwrite(fd, buf, bytes, off) : pread(fd, buf, bytes, off);
      if (n != static_cast<ssize_t>(bytes)) {
        std::fprintf(stderr, "matrix_io: %s %s at sector %llu, %zu bytes: %s\n",
                     pass == 0 ? "write" : "read", dev, sector, bytes,
                     n < 0 ? std::strerror(errno) : "short transfer");
        return 1;
      }
      std::printf("%c %llu %zu\n", pass == 0 ? 'W' : 'R', sector, bytes);
    }
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long long count = 0, first = 0;
  if (argc != 5 || !parse_u64(argv[3], count) || !parse_u64(argv[4], first) || count == 0) {
    std::fprintf(stderr,
                 "usage: matrix_io DEV COMM COUNT FIRST_SECTOR (e.g. /dev/vda mtx-io 64 2048)\n");
    return 2;
  }
  if (prctl(PR_SET_NAME, argv[2], 0, 0, 0) != 0) {
    std::fprintf(stderr, "matrix_io: prctl(PR_SET_NAME, %s): %s\n", argv[2], std::strerror(errno));
    return 1;
  }
  return run(argv[1], count, first);
}
