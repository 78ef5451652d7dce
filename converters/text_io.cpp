#include "converters/text_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "core/bounded_queue.h"
#include "core/io_guard.h"

namespace blkrr {

namespace {
constexpr size_t kReadChunk = 1 << 18;
// The first read is small and each one after doubles up to kReadChunk: a
// small input gets a small buffer (the fuzz harnesses open one per input).
constexpr size_t kFirstChunk = 1 << 13;
constexpr size_t kMaxLine = 1 << 20;
// Compressed inputs at least this large are inflated on a second thread.
constexpr uint64_t kInflateThreadFrom = 1 << 20;
constexpr size_t kInflateAhead = 4;

}  // namespace

// Inflates the source on its own thread into chunks of kReadChunk; at most
// kInflateAhead wait, so memory stays bounded and the thread keeps the
// parser's pace. An error ends the stream and is handed over in order.
struct LineReader::Inflater {
  struct Chunk {
    std::vector<char> data;
    std::optional<Error> error;
  };
  explicit Inflater(GzSource s) : src(std::move(s)) {
    th = std::thread([this] { run(); });
  }
  ~Inflater() {
    ready.stop();
    th.join();
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  void run() {
    for (bool last = false; !last;) {
      Chunk c;
      if (auto v = spare.try_pop()) c.data = std::move(*v);
      c.data.resize(kReadChunk);
      auto n = src.read(c.data.data(), c.data.size());
      if (!n) {
        c.error = n.error();
        c.data.clear();
      } else {
        c.data.resize(*n);
      }
      last = !n || *n == 0;
      if (!ready.push(std::move(c))) return;  // stopped
    }
  }
  // Copies the next chunk to dst (room for cap >= kReadChunk bytes).
  Result<size_t> take(char* dst, size_t cap) {
    auto c = ready.pop();
    if (!c) return Error(ErrorKind::kInternal, "the inflating thread was stopped");
    if (c->error) return *c->error;
    const size_t n = std::min(cap, c->data.size());
    std::memcpy(dst, c->data.data(), n);
    spare.try_push(std::move(c->data));
    return n;
  }

  GzSource src;
  BoundedQueue<Chunk> ready{kInflateAhead};
  BoundedQueue<std::vector<char>> spare{kInflateAhead + 2};  // buffers to reuse
  std::thread th;
};

LineReader::LineReader() = default;
LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

Result<LineReader> LineReader::open(const std::string& given) {
  LineReader r;
  r.path_ = given;  // "-" for standard input, streamed like a pipe (core/input_stream.h)
  auto src = GzSource::open(given, r.path_);
  if (!src) return src.error();
  r.compressed_ = src->compressed();
  struct stat st {};
  if (r.compressed_ && given != "-" && ::stat(given.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) >= kInflateThreadFrom) {
    r.inflater_ = std::make_unique<Inflater>(std::move(*src));
  } else {
    r.src_.emplace(std::move(*src));
  }
  r.buf_.resize(kFirstChunk);
  return r;
}

LineReader LineReader::over(std::string display, std::unique_ptr<ByteStream> stream) {
  LineReader r;
  r.path_ = std::move(display);
  r.stream_ = std::move(stream);
  r.buf_.resize(kFirstChunk);
  return r;
}

Status LineReader::fill() {
  // Move the unread tail to the front, then read more behind it.
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  // Nothing kept: the buffer as it is (the first read fills its 8 KiB); the
  // inflating thread hands over whole chunks.
  const size_t chunk = inflater_   ? kReadChunk
                       : end_ == 0 ? buf_.size()
                                   : std::clamp(2 * buf_.size(), kFirstChunk, kReadChunk);
  if (buf_.size() - end_ < chunk) buf_.resize(end_ + chunk);
  auto n = read_more(buf_.data() + end_, buf_.size() - end_);
  if (!n) return n.error().context(path_ + ":" + std::to_string(line_ + 1) + ": cannot read");
  if (*n == 0) eof_ = true;
  end_ += *n;
  return {};
}

Result<size_t> LineReader::read_more(char* dst, size_t cap) {
  if (inflater_) return inflater_->take(dst, cap);
  if (stream_) return stream_->read(dst, cap);
  return src_->read(dst, cap);
}

Result<bool> LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + pos_;
    const void* nl = std::memchr(start, '\n', end_ - pos_);
    if (nl) {
      size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
      pos_ += len + 1;
      if (len > 0 && start[len - 1] == '\r') --len;
      line = std::string_view(start, len);
      ++line_;
      return true;
    }
    if (eof_) {
      if (pos_ == end_) return false;
      // Last line without a newline: fine in a text file written by hand,
      // but a compressed file was written by a program and was cut off.
      if (compressed_)
        return Error(ErrorKind::kBadInput,
                     path_ + ":" + std::to_string(line_ + 1) +
                         ": the last line has no end (compressed file cut off?)");
      size_t len = end_ - pos_;
      line = std::string_view(start, len);
      if (len > 0 && start[len - 1] == '\r') line.remove_suffix(1);
      pos_ = end_;
      ++line_;
      unterminated_ = true;
      return true;
    }
    if (end_ - pos_ > kMaxLine) {
      return Error(ErrorKind::kBadInput,
                   path_ + ":" + std::to_string(line_ + 1) +
                       ": line longer than 1 MiB (is this a text file of the expected format?)");
    }
    BLKRR_TRY(fill());
  }
}

bool is_gz_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

// Compresses full buffers on its own thread; at most two wait, so memory stays
// bounded and the producer slows down to the compressor's pace.
struct OutFile::Deflater {
  struct Chunk {
    std::vector<char> buf;
    size_t len = 0;
  };
  std::optional<GzSink> gz;
  int fd = -1;
  std::string path;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Chunk> todo;
  std::vector<std::vector<char>> spare;
  bool stop = false;
  std::optional<Error> error;  // the first failure of the compressing thread
  std::thread th;

  void run() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return stop || !todo.empty(); });
      if (todo.empty()) return;
      Chunk c = std::move(todo.front());
      bool failed = error.has_value();
      lk.unlock();
      Status st;
      if (!failed) st = gz->write(c.buf.data(), c.len);
      lk.lock();
      todo.pop_front();
      if (!st && !error) error = st.error();
      spare.push_back(std::move(c.buf));
      cv.notify_all();
    }
  }
};

OutFile::OutFile() = default;
OutFile::OutFile(OutFile&& o) noexcept {
  *this = std::move(o);
}

Result<OutFile> OutFile::create(const std::string& path, int gz_level) {
  OutFile f;
  f.path_ = path;
  f.buf_.resize(kFlushAt * 2);
  auto af = AtomicFile::create(path);
  if (!af) return af.error();
  f.file_.emplace(std::move(*af));
  if (path == "-" || !is_gz_path(path)) {
    f.fd_ = f.file_->fd();
    return f;
  }
  auto sink = GzSink::create(f.file_->fd(), gz_level, path);
  if (!sink) return sink.error();
  f.gz_ = std::make_unique<Deflater>();
  f.gz_->gz.emplace(std::move(*sink));
  f.gz_->path = path;
  Deflater* d = f.gz_.get();
  f.gz_->th = std::thread([d] { d->run(); });
  return f;
}

OutFile& OutFile::operator=(OutFile&& o) noexcept {
  if (this != &o) {
    if (!closed_ && (gz_ || fd_ >= 0)) discard();
    path_ = std::move(o.path_);
    file_ = std::move(o.file_);
    o.file_.reset();
    gz_ = std::move(o.gz_);
    fd_ = std::exchange(o.fd_, -1);
    closed_ = std::exchange(o.closed_, true);
    buf_ = std::move(o.buf_);
    len_ = std::exchange(o.len_, 0);
    written_ = o.written_;
  }
  return *this;
}

OutFile::~OutFile() {
  if (!closed_) discard();
}

void OutFile::discard() {
  closed_ = true;
  if (gz_) {
    {
      std::lock_guard<std::mutex> lk(gz_->mu);
      gz_->stop = true;
    }
    gz_->cv.notify_all();
    if (gz_->th.joinable()) gz_->th.join();
    gz_.reset();
  }
  fd_ = -1;
  if (file_) file_->abort();
}

void OutFile::grow(size_t n) {
  buf_.resize(std::max(buf_.size() * 2, len_ + n));
}

void OutFile::append(std::string_view s) {
  char* p = reserve(s.size());
  std::memcpy(p, s.data(), s.size());
  len_ += s.size();
}

Status OutFile::flush() {
  if (len_ == 0) return {};
  if (gz_) {
    std::unique_lock<std::mutex> lk(gz_->mu);
    gz_->cv.wait(lk, [&] { return gz_->todo.size() < 2; });
    if (gz_->error) return *gz_->error;
    size_t cap = buf_.size();
    gz_->todo.push_back({std::move(buf_), len_});
    if (!gz_->spare.empty()) {
      buf_ = std::move(gz_->spare.back());
      gz_->spare.pop_back();
    }
    lk.unlock();
    gz_->cv.notify_all();
    if (buf_.size() < cap) buf_.resize(cap);
  } else if (fd_ >= 0) {
    size_t off = 0;
    while (off < len_) {
      ssize_t n = ::write(fd_, buf_.data() + off, len_ - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Error::system("cannot write " + path_, errno, "disk full?");
      }
      off += static_cast<size_t>(n);
    }
  } else {
    return Error(ErrorKind::kInternal, "write to closed output " + path_);
  }
  written_ += len_;
  len_ = 0;
  return {};
}

Status OutFile::close() {
  if (closed_) return {};
  Status st = flush();
  closed_ = true;
  if (gz_) {
    {
      std::lock_guard<std::mutex> lk(gz_->mu);
      gz_->stop = true;
    }
    gz_->cv.notify_all();
    if (gz_->th.joinable()) gz_->th.join();
    if (st.ok() && gz_->error) st = *gz_->error;
    if (st.ok()) st = gz_->gz->finish();
    gz_.reset();
  }
  fd_ = -1;
  if (!file_) return st;
  if (!st.ok()) {
    file_->abort();
    return st.error().append("; nothing was written to " + path_);
  }
  return file_->commit();
}

Status reject_line(const LineReader& in, const char* why, bool skip_bad, std::string_view expected,
                   Counters& counters) {
  if (!skip_bad)
    return Error(ErrorKind::kBadInput, in.where() + ": " + why + " (expected " +
                                           std::string(expected) +
                                           "); --skip-bad skips such lines");
  ++counters["lines_skipped"];
  ++counters[std::string("skipped: ") + why];
  return {};
}

Error fatal_line(const LineReader& in, const std::string& message) {
  return Error(ErrorKind::kBadInput, in.where() + ": " + message);
}

}  // namespace blkrr
