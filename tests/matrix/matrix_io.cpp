// matrix_io: a known O_DIRECT load for the kernel matrix (scripts/kernel-matrix.sh).
// Usage: matrix_io DEV COMM COUNT FIRST_SECTOR
// Names itself COMM, then issues COUNT writes and COUNT reads, one at a time, with
// O_DIRECT: request i is at FIRST_SECTOR + i*128 and is 4096 << (i % 4) bytes.
// Prints "pid PID" and then one line "OP SECTOR BYTES" per request it issued
// (OP is W or R) so the caller can compare a recorded trace with exactly this.
//
// Usage: matrix_io --paced DEV COMM SECONDS PERIOD_MS STREAM STREAMS SPAN_SECTORS START_CS
// One stream of a paced writer: an O_DIRECT write of 16 KiB every PERIOD_MS
// for SECONDS from START_CS (CLOCK_BOOTTIME in centiseconds, as /proc/uptime
// gives it; the streams' common start). Round i has STREAMS slots, one per
// stream, a 1 / STREAMS of a period apart in time and 32 KiB apart on the
// device: stream k takes slot (k + i) mod STREAMS, so it writes at
// START + (i + slot / STREAMS) periods, at sector ((i * STREAMS + slot) * 64)
// mod SPAN_SECTORS. Every stream thus takes every place in time (first or
// last of a round) and on the device (every member of a stripe) alike, and
// no two writes are adjacent, so none is merged into another stream's
// request. Such streams are alike, so a group of k of them must get
// k / STREAMS of the disk time. Prints "pid PID" and "writes N".
// Built statically (no libraries in the guest): plain libc only.
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
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

constexpr size_t kPacedBytes = 16384;

void sleep_until(long long t) {
  timespec ts{static_cast<time_t>(t / 1000000000LL), static_cast<long>(t % 1000000000LL)};
  while (clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// The values of --paced: seconds, period (ms), stream, streams, span (sectors),
// start (boot time, centiseconds).
struct Paced {
  unsigned long long seconds = 0, period_ms = 0, stream = 0, streams = 0, span = 0, start_cs = 0;
};

int run_paced(const char* dev, const Paced& p) {
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, kPacedBytes) != 0) return 1;
  std::unique_ptr<void, FreeDeleter> mem(raw);
  std::memset(raw, 0xa5, kPacedBytes);
  Fd f{open(dev, O_WRONLY | O_DIRECT)};
  if (f.fd < 0) {
    std::fprintf(stderr, "matrix_io: open %s: %s\n", dev, std::strerror(errno));
    return 1;
  }
  std::printf("pid %d\n", static_cast<int>(getpid()));
  const long long period = static_cast<long long>(p.period_ms) * 1000000LL;
  const long long start = static_cast<long long>(p.start_cs) * 10000000LL;
  const long long end = start + static_cast<long long>(p.seconds) * 1000000000LL;
  const long long streams = static_cast<long long>(p.streams);
  const unsigned long long step = 2 * kPacedBytes / 512;  // a gap after each write
  unsigned long long i = 0;
  for (;; ++i) {
    const unsigned long long slot = (p.stream + i) % p.streams;
    const long long round = start + static_cast<long long>(i) * period;
    if (round >= end) break;
    sleep_until(round + period * static_cast<long long>(slot) / streams);
    unsigned long long sector = ((i * p.streams + slot) * step) % p.span;
    ssize_t n = pwrite(f.fd, raw, kPacedBytes, static_cast<off_t>(sector * 512));
    if (n != static_cast<ssize_t>(kPacedBytes)) {
      std::fprintf(stderr, "matrix_io: write %s at sector %llu: %s\n", dev, sector,
                   n < 0 ? std::strerror(errno) : "short transfer");
      return 1;
    }
  }
  std::printf("writes %llu\n", i);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int main_paced(int argc, char** argv) {
  Paced p;
  if (argc != 10 || !parse_u64(argv[9], p.start_cs) || !parse_u64(argv[4], p.seconds) ||
      !parse_u64(argv[5], p.period_ms) || !parse_u64(argv[6], p.stream) ||
      !parse_u64(argv[7], p.streams) || !parse_u64(argv[8], p.span) || p.seconds == 0 ||
      p.period_ms == 0 || p.streams == 0 || p.stream >= p.streams ||
      p.span < p.streams * (2 * kPacedBytes / 512) ||
      p.span % (p.streams * (2 * kPacedBytes / 512)) != 0) {
    std::fprintf(stderr,
                 "usage: matrix_io --paced DEV COMM SECONDS PERIOD_MS STREAM STREAMS SPAN_SECTORS "
                 "START_CS (SPAN a multiple of STREAMS * 64 sectors; START_CS as /proc/uptime in "
                 "centiseconds; e.g. --paced /dev/md0 mt-a 5 4 0 4 8192 12345)\n");
    return 2;
  }
  if (prctl(PR_SET_NAME, argv[3], 0, 0, 0) != 0) {
    std::fprintf(stderr, "matrix_io: prctl(PR_SET_NAME, %s): %s\n", argv[3], std::strerror(errno));
    return 1;
  }
  return run_paced(argv[2], p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--paced") == 0) return main_paced(argc, argv);
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
