// Readers of blktrace, blkparse, fio iolog and MSR inputs, on real samples
// (tests/data) and on crafted malformed files.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "converters/blktrace.h"
#include "converters/source.h"
#include "converters/test_bad_input.h"
#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::blktrace_event;
using testing::data_path;
using testing::TempDir;

struct Tally {
  std::map<Op, uint64_t> ops;
  uint64_t n = 0, completed = 0, preflush = 0, fua = 0, readahead = 0;
  std::vector<Request> all;
  Counters counters;
};

Result<Tally> tally(const std::vector<std::string>& in, const SourceOptions& o = {}) {
  auto s = open_source(in, o);
  if (!s) return s.error();
  Tally t;
  Request r;
  uint64_t last = 0;
  for (;;) {
    auto got = (*s)->next(r);
    if (!got) return got.error();
    if (!*got) break;
    EXPECT_GE(r.issue_ns, last) << "not sorted by issue time at request " << t.n;
    last = r.issue_ns;
    ++t.n;
    ++t.ops[r.op];
    t.completed += r.completed();
    t.preflush += (r.flags & kFlagPreflush) != 0;
    t.fua += (r.flags & kFlagFua) != 0;
    t.readahead += (r.flags & kFlagReadahead) != 0;
    t.all.push_back(r);
  }
  t.counters = (*s)->counters();
  return t;
}

std::string bt(const std::string& name) {
  return data_path("blktrace/" + name);
}

TEST(Blktrace, FioRandrwIssuedCountsMatchReadme) {
  auto t = tally({bt("fio-randrw.blktrace.0"), bt("fio-randrw.blktrace.1")});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->ops[Op::kRead], 3000u);
  EXPECT_EQ(t->ops[Op::kWrite], 3000u);
  EXPECT_EQ(t->n, 6000u);
  EXPECT_EQ(t->completed, 6000u);  // every D has its C
  EXPECT_EQ(t->all[0].bytes, 4096u);
  EXPECT_EQ(t->all[0].dev, make_dev(7, 0));
  EXPECT_EQ(t->all[0].pid, 22290u);
  EXPECT_EQ(t->all[0].sector, 1509624u);
  EXPECT_EQ(t->all[0].latency_ns(), 81470u - 20827u);  // blkparse: D at .000020827, C at .000081470
}

TEST(Blktrace, BaseNameFindsPerCpuFilesAndQueueAction) {
  SourceOptions o;
  o.blktrace_action = 'Q';
  auto t = tally({bt("fio-randrw")}, o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->ops[Op::kRead], 3000u);
  EXPECT_EQ(t->ops[Op::kWrite], 3000u);
  EXPECT_EQ(t->completed, 0u);
}

TEST(Blktrace, Ext4NaturalFlushesFuaReadahead) {
  auto d = tally({bt("ext4-natural")});
  ASSERT_TRUE(d.ok()) << d.error().message;
  // blkparse -i ext4-natural: D events 866 reads, 1707 writes, 1024 "FN" flushes.
  EXPECT_EQ(d->ops[Op::kRead], 866u);
  EXPECT_EQ(d->ops[Op::kWrite], 1707u);
  EXPECT_EQ(d->ops[Op::kFlush], 1024u);
  EXPECT_EQ(d->readahead, 824u);  // RA 821 + RAM 3
  SourceOptions o;
  o.blktrace_action = 'Q';
  auto q = tally({bt("ext4-natural")}, o);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->ops[Op::kRead], 911u);
  EXPECT_EQ(q->ops[Op::kWrite], 5391u);
  EXPECT_EQ(q->ops[Op::kFlush], 209u);  // "FWS" without data
  EXPECT_EQ(q->preflush, 404u);         // "FWFSM" with data
  EXPECT_EQ(q->fua, 411u);              // FWFSM 404 + WFS 1 + WFSM 6
}

TEST(Blkparse, SameRequestsAsTheBinaryCapture) {
  for (const char* name : {"fio-randrw", "ext4-natural"}) {
    auto bin = tally({bt(name)});
    auto txt = tally({data_path(std::string("blkparse/") + name + ".blkparse.txt.gz")});
    ASSERT_TRUE(bin.ok()) << bin.error().message;
    ASSERT_TRUE(txt.ok()) << txt.error().message;
    ASSERT_EQ(bin->n, txt->n) << name;
    // blkparse prints times relative to the first event of the capture.
    uint64_t base = bin->all[0].issue_ns - txt->all[0].issue_ns;
    for (size_t i = 0; i < bin->n; ++i) {
      const Request &a = bin->all[i], &b = txt->all[i];
      ASSERT_EQ(a.issue_ns - base, b.issue_ns) << name << " #" << i;
      ASSERT_EQ(a.sector, b.sector) << name << " #" << i;
      ASSERT_EQ(a.bytes, b.bytes) << name << " #" << i;
      ASSERT_EQ(a.op, b.op) << name << " #" << i;
      ASSERT_EQ(a.flags, b.flags) << name << " #" << i;
      ASSERT_EQ(a.pid, b.pid) << name << " #" << i;
      ASSERT_EQ(a.complete_ns - base, b.complete_ns) << name << " #" << i;
    }
  }
}

TEST(Blkparse, DetectedAndMalformedLines) {
  TempDir t;
  EXPECT_EQ(*detect_format(data_path("blkparse/fio-randrw.blkparse.txt.gz")),
            InputFormat::kBlkparse);
  auto p = t.write("x.txt",
                   "  8,0    0        1     0.000000000  100  D   W 10 + 8 [dd]\n"
                   "  8,0    0        2     0.000001000  100  D   X 10 + 8 [dd]\n");
  auto r = tally({p}, SourceOptions{.format = InputFormat::kBlkparse});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(p + ":2: bad rwbs"), std::string::npos) << r.error().message;
  auto p2 = t.write("y.txt",
                    "  8,0    0        1     0.000000000  100  D   W 10 + 8 [dd]\n"
                    "hello world\n"
                    "  8,16   0        2     0.000001000  100  D   W 10 + 8 [dd]\n");
  SourceOptions o{.format = InputFormat::kBlkparse, .skip_bad = true};
  auto mixed = tally({p2}, o);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find(p2 + ":3: the input mixes devices 8:0 and 8:16"),
            std::string::npos)
      << mixed.error().message;
  EXPECT_EQ(mixed.error().kind, ErrorKind::kBadInput) << "fatal even with --skip-bad";
  o.device = "8:16";
  auto sel = tally({p2}, o);
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  EXPECT_EQ(sel->n, 1u);
  EXPECT_EQ(sel->all[0].comm_view(), "dd");
  EXPECT_EQ(sel->all[0].rec_flags, kRecCompletionNotSeen);
}

// Kernels before 4.8 sent a flush as an empty write with a preflush: blkparse
// prints it as "FWS 0 + 0" or "FWS [proc]". It is a flush, not a size-0 write.
TEST(Blkparse, EmptyPreflushWriteIsAFlush) {
  TempDir t;
  auto p = t.write("f.txt",
                   "  8,0    0        1     0.000000000  100  D FWS 0 + 0 [jbd2/sda1-8]\n"
                   "  8,0    0        2     0.000001000  100  D FWS [jbd2/sda1-8]\n"
                   "  8,0    0        3     0.000002000  100  D FWFS 80 + 8 [jbd2/sda1-8]\n");
  auto r = tally({p}, SourceOptions{.format = InputFormat::kBlkparse});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->n, 3u);
  EXPECT_EQ(r->ops[Op::kFlush], 2u);
  EXPECT_EQ(r->ops[Op::kWrite], 1u);
  EXPECT_EQ(r->all[0].flags & kFlagPreflush, 0);
  EXPECT_NE(r->all[2].flags & kFlagPreflush, 0);
  EXPECT_NE(r->all[2].flags & kFlagFua, 0);
}

// A completion stamped before its issue (per-CPU clocks) keeps latency 0 and
// is counted; a failed completion keeps its error.
TEST(Blkparse, CompletionBeforeIssueIsCountedAndErrorsKept) {
  TempDir t;
  auto p = t.write("c.txt",
                   "  8,0    0        1     0.000020000  100  D   W 10 + 8 [dd]\n"
                   "  8,0    1        2     0.000010000    0  C   W 10 + 8 [0]\n"
                   "  8,0    0        3     0.000030000  100  D   R 80 + 8 [dd]\n"
                   "  8,0    0        4     0.000090000    0  C   R 80 + 8 [5]\n");
  auto r = tally({p}, SourceOptions{.format = InputFormat::kBlkparse});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->n, 2u);
  EXPECT_EQ(r->all[0].complete_ns, r->all[0].issue_ns);
  EXPECT_EQ(r->counters["completion before issue (CPU clocks apart; latency 0)"], 1u);
  EXPECT_EQ(r->all[1].error, -5);
  EXPECT_EQ(r->all[1].complete_ns - r->all[1].issue_ns, 60'000u);
}

TEST(Blkparse, EveryMalformedLineNamesFileAndLine) {
  TempDir t;
  const std::string good = "  8,0    0        1     0.000000000  100  D   W 10 + 8 [dd]\n";
  const std::pair<const char*, const char*> bad[] = {
      {"  8,0    0        2     0.00x  100  D   W 10 + 8 [dd]\n", ":2: bad time"},
      {"  8,0    0        2     0.1  1x0  D   W 10 + 8 [dd]\n", ":2: bad pid"},
      {"  8,0    0        2     0.1  100  D   W 1z + 8 [dd]\n", ":2: bad sector"},
      {"  8,0    0        2     0.1  100  D   W 10 + 99999999999 [dd]\n", ":2: length too large"},
      {"  8,0    0        2     0.1\n", ":2: too few fields"},
      {"some text\n", ":2: not an event line"},
  };
  for (const auto& [line, want] : bad) {
    auto p = t.write("b.txt", good + line);
    auto r = tally({p}, SourceOptions{.format = InputFormat::kBlkparse});
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_EQ(r.error().kind, ErrorKind::kBadInput) << line;
    EXPECT_NE(r.error().message.find(p + want), std::string::npos) << r.error().message;
  }
  // After blkparse's statistics begin, other text is expected.
  auto p = t.write("s.txt", good + "CPU0 (x):\n Reads Queued: 1, 4KiB\nThroughput (R/W): 0KiB/s\n");
  auto r = tally({p});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n, 1u);
}

TEST(Blkparse, CommentLinesAreSkippedAndCounted) {
  TempDir t;
  auto p = t.write("c.txt",
                   "# blkparse -i sda -f '%D %2c %8s %5T.%9t %5p %2a %3d '\n"
                   "  # device; cpu; sequence; time\n"
                   "  8,0    0        1     0.000000000  100  D   W 10 + 8 [dd]\n"
                   "#  8,0    0        2     0.000001000  100  D   W 99 + 8 [dd]\n"
                   "  8,0    0        3     0.000002000  100  D   R 20 + 8 [dd]\n");
  ASSERT_EQ(*detect_format(p), InputFormat::kBlkparse) << "the ';' in a comment is not a load";
  auto r = tally({p});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->n, 2u) << "the commented-out event is not read";
  EXPECT_EQ(r->all[0].sector, 10u);
  EXPECT_EQ(r->all[1].sector, 20u);
  auto src = open_source({p}, {});
  ASSERT_TRUE(src.ok());
  Request req;
  while (*(*src)->next(req)) {
  }
  EXPECT_EQ((*src)->counters()["comment lines skipped"], 3u);
}

TEST(Native, CorruptTraceIsAnError) {
  TempDir t;
  TraceHeader h;
  auto w = TraceWriter::create(t.file("n.blkrr"), h);
  ASSERT_TRUE(w.ok());
  Request r;
  r.bytes = 4096;
  for (int i = 0; i < 20000; ++i) {
    r.issue_ns = 1000 + i;
    r.sector = static_cast<uint64_t>(i) * 7919;
    ASSERT_TRUE(w->append(r).ok());
  }
  ASSERT_TRUE(w->close({}).ok());
  std::string bytes = testing::slurp_raw(t.file("n.blkrr"));
  // Flip bytes in the middle of the first compressed block.
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) bytes[i] ^= 0x5a;
  auto p = t.write("bad.blkrr", bytes);
  auto res = tally({p});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(res.error().message.find(p), std::string::npos) << res.error().message;
}

// ---- crafted blktrace files ----

TEST(Blktrace, CraftedCommSwapAndRequeue) {
  TempDir t;
  using namespace blktrace;
  uint32_t dev = make_dev(8, 0);
  std::string f0 =
      blktrace_event(5, 0, 0, kNotifyProcess, kCatNotify, 77, dev, std::string("mysqld\0\0", 8)) +
      blktrace_event(10, 100, 4096, kIssue, kCatWrite | kCatSync, 77, dev) +
      blktrace_event(11, 100, 4096, kRequeue, kCatWrite, 77, dev) +
      blktrace_event(12, 100, 4096, kIssue, kCatWrite, 77, dev) +
      blktrace_event(20, 100, 4096, kComplete, kCatWrite, 0, dev);
  std::string f1;
  for (const auto& e :
       {blktrace_event(15, 200, 8192, kIssue, kCatRead | kCatAhead, 78, dev, "", 7, true),
        blktrace_event(30, 200, 8192, kComplete, kCatRead, 0, dev, "", 7, true)})
    f1 += e;
  auto t0 = t.write("c.blktrace.0", f0);
  auto t1 = t.write("c.blktrace.1", f1);
  EXPECT_EQ(*detect_format(t1), InputFormat::kBlktrace);
  auto s = open_source({t.file("c")}, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  Request r;
  ASSERT_TRUE(*(*s)->next(r));
  EXPECT_EQ(r.issue_ns, 12u);  // the requeued first issue is void
  EXPECT_EQ(r.complete_ns, 20u);
  EXPECT_EQ(r.comm_view(), "mysqld");
  EXPECT_EQ(r.op, Op::kWrite);
  ASSERT_TRUE(*(*s)->next(r));
  EXPECT_EQ(r.issue_ns, 15u);
  EXPECT_EQ(r.complete_ns, 30u);
  EXPECT_EQ(r.op, Op::kRead);
  EXPECT_EQ(r.flags, kFlagReadahead);
  EXPECT_EQ(r.bytes, 8192u);
  ASSERT_FALSE(*(*s)->next(r));
  EXPECT_EQ((*s)->counters().at("requeued (issued again later)"), 1u);
}

TEST(Blktrace, MalformedCaptures) {
  TempDir t;
  using namespace blktrace;
  uint32_t a = make_dev(8, 0), b = make_dev(8, 16);
  std::string good = blktrace_event(10, 100, 4096, kIssue, kCatWrite, 1, a);
  // Truncated header.
  auto p1 = t.write("t1.blktrace.0", good + good.substr(0, 20));
  auto r1 = tally({p1});
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r1.error().message.find(p1 + ": truncated event at byte offset 48"), std::string::npos)
      << r1.error().message;
  // --skip-bad keeps what came before.
  auto r1s = tally({p1}, SourceOptions{.skip_bad = true});
  ASSERT_TRUE(r1s.ok());
  EXPECT_EQ(r1s->n, 1u);
  // Truncated payload.
  auto p2 = t.write("t2.blktrace.0",
                    good + blktrace_event(11, 1, 0, 0, kCatNotify, 1, a, "abcdef").substr(0, 50));
  auto r2 = tally({p2});
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r2.error().message.find("truncated event payload at byte offset 48"),
            std::string::npos);
  // Bad magic after a good event.
  std::string bad = good;
  bad[3] = 'x';
  auto p3 = t.write("t3.blktrace.0", good + bad);
  auto r3 = tally({p3}, SourceOptions{.format = InputFormat::kBlktrace});
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r3.error().message.find("bad magic 0x78617407 at byte offset 48"), std::string::npos)
      << r3.error().message;
  // Mixed devices are refused unless one is chosen.
  auto p4 = t.write("t4.blktrace.0", good + blktrace_event(12, 5, 512, kIssue, kCatRead, 1, b));
  auto r4 = tally({p4});
  ASSERT_FALSE(r4.ok());
  EXPECT_EQ(r4.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r4.error().message.find("mixes devices 8:0 and 8:16; choose one with --device"),
            std::string::npos)
      << r4.error().message;
  auto r5 = tally({p4}, SourceOptions{.device = "8:16"});
  ASSERT_TRUE(r5.ok()) << r5.error().message;
  EXPECT_EQ(r5->n, 1u);
  EXPECT_EQ(r5->all[0].sector, 5u);
  EXPECT_EQ(r5->all[0].rec_flags, kRecCompletionNotSeen);
}

// A --device or --action that a reader cannot use is the user's to change:
// a usage error (exit status 2) in every reader.
TEST(Readers, DeviceOptionsTheInputCannotUseAreUsageErrors) {
  TempDir t;
  using namespace blktrace;
  auto bt =
      t.write("u.blktrace.0", blktrace_event(10, 100, 4096, kIssue, kCatWrite, 1, make_dev(8, 0)));
  auto bp = t.write("u.txt", "  8,0    0        1     0.000000000  100  D   W 10 + 8 [dd]\n");
  auto msr = t.write("u.csv", "128166372003061629,hm,1,Read,3221225472,4096,2043\n");
  TraceHeader h;
  h.devices.push_back(DeviceInfo{.dev = make_dev(8, 0), .name = "sda"});
  auto w = TraceWriter::create(t.file("u.blkrr"), h);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->close({}).ok());
  const std::pair<std::string, SourceOptions> cases[] = {
      {bt, {.device = "no-such-device"}},
      {bt, {.blktrace_action = 'X'}},
      {bp, {.format = InputFormat::kBlkparse, .device = "sda"}},
      {bp, {.format = InputFormat::kBlkparse, .blktrace_action = 'X'}},
      {msr, {.device = "hm:x"}},
      {t.file("u.blkrr"), {.device = "sdq"}},
  };
  for (const auto& [path, opts] : cases) {
    auto r = tally({path}, opts);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << path << ": " << r.error().message;
  }
}

// ---- fio iologs ----

TEST(FioIolog, ReadsWhatFioWrites) {
  // Written by fio 3.33: --rw=randrw --bs=4k --io_size=64k --write_iolog.
  auto t = tally({data_path("fio/randrw-v3.iolog")});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->n, 16u);
  EXPECT_EQ(t->ops[Op::kRead], 5u);
  EXPECT_EQ(t->ops[Op::kWrite], 11u);
  EXPECT_EQ(t->all[0].issue_ns, 369000u);
  EXPECT_EQ(t->all[0].sector, 249856u / 512);
  EXPECT_EQ(t->all[0].bytes, 4096u);
}

TEST(FioIolog, Version2WaitTrimSyncAndErrors) {
  TempDir t;
  auto p = t.write("v2.log",
                   "fio version 2 iolog\n"
                   "/dev/sdb add\n/dev/sdb open\n"
                   "/dev/sdb write 4096 8192\n"
                   "/dev/sdb wait 1500 0\n"
                   "/dev/sdb trim 1024 512\n"
                   "/dev/sdb sync 0 0\n"
                   "/dev/sdb close\n");
  EXPECT_EQ(*detect_format(p), InputFormat::kFioIolog);
  auto r = tally({p});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->n, 3u);
  EXPECT_EQ(r->all[0].issue_ns, 0u);
  EXPECT_EQ(r->all[0].sector, 8u);
  EXPECT_EQ(r->all[1].op, Op::kDiscard);
  EXPECT_EQ(r->all[1].issue_ns, 1500000000u);
  EXPECT_EQ(r->all[2].op, Op::kFlush);
  const std::pair<const char*, const char*> bad[] = {
      {"fio version 3 iolog\nabc /dev/sdb read 0 512\n", ":2: bad timestamp"},
      {"fio version 3 iolog\n10 /dev/sdb read 0\n", ":2: wrong number of fields"},
      {"fio version 3 iolog\n10 /dev/sdb jump 0 512\n", ":2: unknown action"},
      {"fio version 3 iolog\n10 /dev/sdb wait 0 512\n", ":2: 'wait' is not allowed"},
      {"fio version 3 iolog\n10 /dev/sdb read x 512\n", ":2: bad offset"},
      {"fio version 3 iolog\n10 /dev/sdb read 0 99999999999\n", ":2: length too large"},
      {"fio version 3 iolog\n10 /dev/a read 0 512\n11 /dev/b read 0 512\n",
       ":3: the iolog uses several files"},
      {"fio version 9 iolog\n", ":1: not a fio iolog"},
  };
  for (const auto& [text, want] : bad) {
    auto q = t.write("bad.log", text);
    auto res = tally({q}, SourceOptions{.format = InputFormat::kFioIolog});
    ASSERT_FALSE(res.ok()) << text;
    EXPECT_EQ(res.error().kind, ErrorKind::kBadInput) << text;
    EXPECT_NE(res.error().message.find(q + want), std::string::npos) << res.error().message;
  }
}

// ---- MSR Cambridge ----

TEST(Msr, ParsesFiletimeAndRefusesMixedDisks) {
  TempDir t;
  auto p = t.write("m.csv",
                   "128166372003061629,hm,1,Read,3221225472,4096,2043\n"
                   "128166372016382155,hm,1,Write,2147483648,512,1106\n"
                   "128166372026382245,hm,0,Write,0,4096,500\n");
  EXPECT_EQ(*detect_format(p), InputFormat::kMsrCsv);
  auto r = tally({p});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(p + ":3: the trace mixes devices hm:1 and hm:0"),
            std::string::npos)
      << r.error().message;
  auto s = tally({p}, SourceOptions{.device = "1"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->n, 2u);
  EXPECT_EQ(s->all[0].issue_ns, 12816637200306162900u);
  EXPECT_EQ(s->all[0].latency_ns(), 204300u);
  EXPECT_EQ(s->all[0].sector, 3221225472u / 512);
  EXPECT_EQ(s->all[1].op, Op::kWrite);
  EXPECT_EQ(s->all[1].issue_ns - s->all[0].issue_ns, 1332052600u);
  auto h = tally({p}, SourceOptions{.device = "hm:0"});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->n, 1u);
  const std::pair<const char*, const char*> bad[] = {
      {"1,h,0,Read,0,512\n", ":1: wrong number of fields"},
      {"1,h,0,Read,0,512,1,9\n", ":1: too many fields"},
      {"x,h,0,Read,0,512,1\n", ":1: bad timestamp"},
      {"1,h,0,Erase,0,512,1\n", ":1: bad type"},
      {"1,h,0,Read,-5,512,1\n", ":1: bad offset"},
      {"1,h,z,Read,0,512,1\n", ":1: bad disk number"},
      {"1,h,0,Read,0,512,q\n", ":1: bad response time"},
  };
  for (const auto& [text, want] : bad) {
    auto q = t.write("bad.csv", text);
    auto res = tally({q}, SourceOptions{.format = InputFormat::kMsrCsv});
    ASSERT_FALSE(res.ok()) << text;
    EXPECT_EQ(res.error().kind, ErrorKind::kBadInput) << text;
    EXPECT_NE(res.error().message.find(q + want), std::string::npos) << res.error().message;
  }
  auto q = t.write("skip.csv",
                   "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
                   "1,h,0,Read,0,512,1\nbroken\n2,h,0,Write,0,512,1\n");
  auto sk = tally({q}, SourceOptions{.format = InputFormat::kMsrCsv, .skip_bad = true});
  ASSERT_TRUE(sk.ok());
  EXPECT_EQ(sk->n, 2u);
}

}  // namespace
}  // namespace blkrr
