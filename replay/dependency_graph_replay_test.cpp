// --timing dependency from a stored graph (convert --dependencies, read back
// with --dependencies FILE) on a fake clock and engine: the replay issues
// exactly as the one that infers the same graph from the trace, an edited
// graph is followed, and a graph of another trace is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "replay/test_harness.h"

namespace blkrr::replay {
namespace {

using testing::Harness;

constexpr uint64_t kUs = 1000;

class GraphReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/blkrr-graph-replay-XXXXXX";
    ASSERT_NE(::mkdtemp(t), nullptr);
    dir_ = t;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The graph file `convert --dependencies` writes for `reqs` (issue order).
  static std::string graph_text(const std::vector<Request>& reqs) {
    GraphOptions o;
    std::string text = graph_header(o);
    DependencyInferrer inf(o.deps);
    for (uint64_t seq = 0; seq < reqs.size(); ++seq)
      text += graph_line(reqs[seq], inf.add(reqs[seq], seq));
    return text;
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

Request dep_req(uint32_t tid, uint64_t issue_us, uint64_t complete_us, uint64_t sector, Op op) {
  Request r = testing::make_req(issue_us * kUs, op, sector, 8, tid);
  r.complete_ns = complete_us * kUs;
  return r;
}

// Four synchronous threads with think times, an async thread with three
// requests in flight, and open-loop arrivals far apart: every kind of parent.
std::vector<Request> mixed_trace() {
  std::mt19937_64 rng(11);
  std::vector<Request> reqs;
  std::map<uint32_t, uint64_t> next_issue;  // per thread, µs
  for (uint32_t t = 1; t <= 4; ++t) next_issue[t] = t * 3;
  for (int i = 0; i < 400; ++i) {
    auto it = std::min_element(next_issue.begin(), next_issue.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
    const uint64_t issue = it->second, lat = 30 + rng() % 150;
    reqs.push_back(dep_req(it->first, issue, issue + lat, static_cast<uint64_t>(i) * 64,
                           rng() % 4 == 0 ? Op::kWrite : Op::kRead));
    it->second = issue + lat + rng() % 60;
  }
  uint64_t at = 7;  // the async thread: three in flight, the next 4 µs after a completion
  std::vector<uint64_t> done(60);
  for (uint64_t k = 0; k < done.size(); ++k) {
    const uint64_t issue = k < 3 ? at + k : done[k - 3] + 4;
    done[k] = issue + 40 + rng() % 100;
    reqs.push_back(dep_req(7, issue, done[k], 200'000 + k * 64, Op::kRead));
  }
  for (uint64_t k = 0; k < 20; ++k)  // an open-loop thread: one request every 5 ms
    reqs.push_back(dep_req(9, 2 + k * 5000, 2 + k * 5000 + 80, 100'000 + k * 64, Op::kRead));
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Request& a, const Request& b) { return a.issue_ns < b.issue_ns; });
  return reqs;
}

void dependency_mode(Harness& h, bool slower) {
  h.sched.mode = TimingMode::kDependency;
  h.cfg.dependency = true;
  h.cfg.spin_ns = 0;
  h.cfg.adaptive_spin = false;
  h.engine.latency = [slower](const IoOp& op) {
    return (slower ? 700 : 9) * kUs + (op.offset / 512 / 64) % 5 * kUs;
  };
}

TEST_F(GraphReplay, IssuesExactlyAsTheInferredGraph) {
  const auto reqs = mixed_trace();
  const std::string path = write("t.deps", graph_text(reqs));
  for (bool slower : {false, true}) {
    Harness inferred;
    dependency_mode(inferred, slower);
    inferred.run(reqs);
    auto g = DependencyGraphReader::open(path);
    ASSERT_TRUE(g.ok()) << g.error().message;
    Harness stored;
    dependency_mode(stored, slower);
    stored.graph = &*g;
    stored.run(reqs);
    ASSERT_EQ(stored.engine.log.size(), reqs.size());
    ASSERT_EQ(inferred.engine.log.size(), reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(stored.engine.log[i].at_ns, inferred.engine.log[i].at_ns) << "submission " << i;
      EXPECT_EQ(stored.engine.log[i].op.offset, inferred.engine.log[i].op.offset) << i;
    }
    EXPECT_EQ(stored.res.gate.dependent, inferred.res.gate.dependent);
    EXPECT_GT(stored.res.gate.dependent, 350u);  // the schedule is the parents', not timestamps
    EXPECT_EQ(stored.res.last_complete_ns, inferred.res.last_complete_ns);
    EXPECT_EQ(g->counters().requests, reqs.size());
    EXPECT_EQ(g->counters().independent + g->counters().thread + g->counters().cross +
                  g->counters().sibling + g->counters().slot,
              reqs.size());
    EXPECT_GT(g->counters().slot, 50u);
  }
}

// One thread: the second read was issued 50 µs after the first completed.
std::vector<Request> pair() {
  return {dep_req(1, 0, 100, 0, Op::kRead), dep_req(1, 150, 250, 800, Op::kRead)};
}
constexpr const char* kPairLines =
    "0\t0\t100000\t1\tR\t0\t8\tindependent\t0\t0\t-\t0\n"
    "1\t150000\t250000\t1\tR\t800\t8\tthread\t50000\t1\t0\t0\n";

TEST_F(GraphReplay, FollowsAnEditedGraph) {
  GraphOptions o;
  const std::string header = graph_header(o);
  ASSERT_EQ(graph_text(pair()), header + kPairLines);
  const std::string as_written = write("pair.deps", header + kPairLines);
  // The second read made independent by hand: it keeps its recorded time
  // (150 µs) instead of following its parent on a 1 ms device.
  const std::string edited =
      write("edited.deps", header +
                               "0\t0\t100000\t1\tR\t0\t8\tindependent\t0\t0\t-\t0\n"
                               "1\t150000\t250000\t1\tR\t800\t8\tindependent\t0\t0\t-\t0\n");
  for (const auto& [path, second_at] :
       {std::pair{as_written, 1'050 * kUs}, std::pair{edited, 150 * kUs}}) {
    auto g = DependencyGraphReader::open(path);
    ASSERT_TRUE(g.ok()) << g.error().message;
    Harness h;
    dependency_mode(h, true);
    h.engine.latency = [](const IoOp&) { return 1'000 * kUs; };
    h.graph = &*g;
    h.run(pair());
    ASSERT_EQ(h.engine.log.size(), 2u);
    EXPECT_EQ(h.engine.log[1].at_ns - h.engine.log[0].at_ns, second_at) << path;
  }
}

// The planner's error for a graph that does not describe the trace.
std::string planner_error(const std::string& graph_path, std::vector<Request> reqs) {
  auto g = DependencyGraphReader::open(graph_path);
  if (!g) return "open: " + g.error().message;
  testing::VectorSource src(std::move(reqs));
  ScheduleOptions so;
  so.mode = TimingMode::kDependency;
  Schedule s(so);
  auto dm = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1u << 20, 512, 0});
  Planner p(src, s, *dm);
  p.use_graph(*g);
  PlannedRequest out;
  for (;;) {
    auto r = p.next(out);
    if (!r) return r.error().message;
    if (!*r) return "";
  }
}

TEST_F(GraphReplay, RefusesTheGraphOfAnotherTrace) {
  const std::string header = graph_header(GraphOptions{});
  const std::string good = write("good.deps", header + kPairLines);
  EXPECT_EQ(planner_error(good, pair()), "");
  auto other = pair();
  other[1].sector = 808;
  EXPECT_NE(planner_error(good, other).find("good.deps:6: request 1 of the trace (R at sector 808"),
            std::string::npos)
      << planner_error(good, other);
  auto longer = pair();
  longer.push_back(dep_req(1, 300, 400, 1600, Op::kRead));
  EXPECT_NE(planner_error(good, longer).find("the graph ends after 2 requests"), std::string::npos);
  EXPECT_NE(planner_error(good, {pair()[0]}).find("good.deps:6: the trace ended but the graph"),
            std::string::npos)
      << planner_error(good, {pair()[0]});
}

TEST_F(GraphReplay, RefusesMalformedGraphs) {
  const std::string header = graph_header(GraphOptions{});
  const std::string first = "0\t0\t100000\t1\tR\t0\t8\tindependent\t0\t0\t-\t0\n";
  const std::string second = "1\t150000\t250000\t1\tR\t800\t8\t";
  const std::pair<std::string, std::string> cases[] = {
      {first + second + "thread\t50000\t1\t1\t0\n", ":6: parent 1 is not an earlier request"},
      {first + second + "thread\t50000\t1\t-\t0\n", ":6: kind 'thread' disagrees with the parents"},
      {first + second + "cousin\t50000\t1\t0\t0\n", ":6: unknown kind 'cousin'"},
      {first + second + "thread\t50000\t1\t0\n", ":6: expected 12 tab-separated fields"},
      {first + second + "thread\t5e4\t1\t0\t0\n", ":6: a number field"},
      {first + second + "slot\t50000\t1\t0\t2\n", ":6: kind 'slot' disagrees with the parents"},
      {first + second + "slot\t50000\t1\t-\t0\n", ":6: kind 'slot' disagrees with slots"},
      {first + second + "thread\t50000\t1\t0\t4\n", ":6: kind 'thread' disagrees with slots"},
      {first + second + "slot\t50000\t1\t-\t99999\n", ":6: slots is not a number"},
  };
  for (const auto& [body, want] : cases) {
    const std::string path = write("bad.deps", header + body);
    const std::string e = planner_error(path, pair());
    EXPECT_NE(e.find(want), std::string::npos) << e << "\nwanted: " << want;
  }
  EXPECT_NE(planner_error(write("v3.deps", "# blkrr dependencies 3\n"), pair())
                .find("v3.deps:1: dependency graph version '3', this blkrr reads versions 1 and 2"),
            std::string::npos);
  EXPECT_NE(planner_error(write("x.deps", "seq\tissue\n"), pair()).find("not a dependency graph"),
            std::string::npos);
  // A slot line is read; a version 1 graph (no slots column) too.
  EXPECT_EQ(
      planner_error(write("s.deps", header + first + second + "slot\t50000\t1\t-\t2\n"), pair()),
      "");
  EXPECT_EQ(planner_error(write("v1.deps",
                                "# blkrr dependencies 1\n"
                                "0\t0\t100000\t1\tR\t0\t8\tindependent\t0\t0\t-\n" +
                                    second + "thread\t50000\t1\t0\n"),
                          pair()),
            "");
}

TEST_F(GraphReplay, HeaderOptionsAreTheGraphsWindows) {
  GraphOptions o;
  o.deps.thread_window_ns = 7'000'000;
  o.deps.cross_window_ns = 0;
  auto g = DependencyGraphReader::open(write("w.deps", graph_header(o) + kPairLines));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->options().thread_window_ns, 7'000'000u);
  EXPECT_EQ(g->options().cross_window_ns, 0u);
  EXPECT_EQ(g->options().sibling_ns, DependencyOptions{}.sibling_ns);
}

}  // namespace
}  // namespace blkrr::replay
