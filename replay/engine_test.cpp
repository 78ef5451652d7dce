// The real engines on a scratch file (no O_DIRECT: /tmp may be tmpfs): data
// lands where asked, every operation completes once with its id, and the
// stamps are ordered.
#include "replay/engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "replay/buffers.h"

namespace blkrr::replay {
namespace {

class ScratchFile {
 public:
  ScratchFile() {
    char tmpl[] = "/tmp/blkrr-engine-test.XXXXXX";
    fd_ = mkstemp(tmpl);
    path_ = tmpl;
    if (fd_ >= 0 && ftruncate(fd_, 1 << 20) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~ScratchFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

std::vector<IoCompletion> drain(Engine& e, Clock& c, size_t want) {
  std::vector<IoCompletion> out;
  for (int i = 0; i < 1000 && out.size() < want; ++i) {
    auto s = e.wait(out, c.now_ns() + 10'000'000);
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  return out;
}

void write_then_read(Engine& e, Clock& c, int fd) {
  auto a = AlignedBuffer::make(8 * 4096);
  ASSERT_TRUE(a.ok());
  uint8_t* buf = a->data();
  std::vector<IoOp> writes;
  for (uint64_t i = 0; i < 8; ++i) {
    std::memset(buf + i * 4096, static_cast<int>('a' + i), 4096);
    writes.push_back(IoOp{i, IoKind::kWrite, i * 8192, 4096, buf + i * 4096, -1});
  }
  const uint64_t before = c.now_ns();
  ASSERT_TRUE(e.submit(writes).ok());
  auto done = drain(e, c, 8);
  ASSERT_EQ(done.size(), 8u);
  std::set<uint64_t> ids;
  for (const auto& d : done) {
    ids.insert(d.id);
    EXPECT_EQ(d.result, 4096);
    EXPECT_GE(d.submit_ns, before);
    EXPECT_GE(d.complete_ns, d.submit_ns);
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(e.in_flight(), 0u);
  for (uint64_t i = 0; i < 8; ++i) {
    char got = 0;
    ASSERT_EQ(pread(fd, &got, 1, static_cast<off_t>(i * 8192 + 100)), 1);
    EXPECT_EQ(got, static_cast<char>('a' + i));
  }
  std::memset(buf, 0, 4096);
  IoOp rd{42, IoKind::kRead, 3 * 8192, 4096, buf, -1};
  ASSERT_TRUE(e.submit({&rd, 1}).ok());
  auto r = drain(e, c, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, 42u);
  EXPECT_EQ(r[0].result, 4096);
  EXPECT_EQ(buf[0], 'd');
  EXPECT_EQ(buf[4095], 'd');
}

TEST(UringEngine, WritesAndReadsAFile) {
  ScratchFile f;
  ASSERT_GE(f.fd(), 0);
  MonotonicClock c;
  EngineOptions o;
  o.fd = f.fd();
  o.queue_depth = 16;
  auto e = make_uring_engine(c, o);
  if (!e.ok()) GTEST_SKIP() << e.error().message;
  write_then_read(**e, c, f.fd());
}

TEST(ThreadsEngine, WritesAndReadsAFile) {
  ScratchFile f;
  ASSERT_GE(f.fd(), 0);
  MonotonicClock c;
  EngineOptions o;
  o.fd = f.fd();
  o.threads = 3;
  auto e = make_threads_engine(c, o);
  ASSERT_TRUE(e.ok());
  write_then_read(**e, c, f.fd());
}

TEST(UringEngine, FakeIoDoesNotTouchTheFile) {
  ScratchFile f;
  ASSERT_GE(f.fd(), 0);
  MonotonicClock c;
  EngineOptions o;
  o.fd = f.fd();
  o.fake_io = true;
  auto e = make_uring_engine(c, o);
  if (!e.ok()) GTEST_SKIP() << e.error().message;
  auto a = AlignedBuffer::make(4096);
  std::memset(a->data(), 'z', 4096);
  IoOp w{7, IoKind::kWrite, 0, 4096, a->data(), -1};
  ASSERT_TRUE((*e)->submit({&w, 1}).ok());
  auto d = drain(**e, c, 1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].result, 4096);
  char got = 1;
  ASSERT_EQ(pread(f.fd(), &got, 1, 0), 1);
  EXPECT_EQ(got, 0);
}

TEST(DryEngine, CompletesAtSubmission) {
  MonotonicClock c;
  auto e = make_dry_engine(c);
  IoOp op{5, IoKind::kRead, 0, 4096, nullptr, -1};
  ASSERT_TRUE(e->submit({&op, 1}).ok());
  std::vector<IoCompletion> out;
  ASSERT_TRUE(e->poll(out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].submit_ns, out[0].complete_ns);
  EXPECT_EQ(out[0].result, 4096);
}

TEST(BufferPool, SharedBuffersAreRegisteredAndGrow) {
  auto p = BufferPool::create(false, 8192);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->fixed_buffers().size(), 2u);
  auto r = p->get(0, IoKind::kRead, 4096);
  EXPECT_EQ(r->fixed_index, 0);
  auto w = p->get(1, IoKind::kWrite, 8192);
  EXPECT_EQ(w->fixed_index, 1);
  auto big = p->get(2, IoKind::kRead, 65536);
  EXPECT_EQ(big->fixed_index, -1);  // replaced by a larger, unregistered one
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big->data) % 4096, 0u);
}

TEST(BufferPool, PerOperationBuffersWithVerification) {
  auto p = BufferPool::create(true);
  auto a = p->get(0, IoKind::kWrite, 4096);
  auto b = p->get(1, IoKind::kWrite, 4096);
  EXPECT_NE(a->data, b->data);
  EXPECT_TRUE(p->fixed_buffers().empty());
}

}  // namespace
}  // namespace blkrr::replay
