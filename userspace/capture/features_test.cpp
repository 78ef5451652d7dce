#include "capture/features.h"

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

// A 6.18-like kernel that offers everything.
KernelFeatures full_kernel() {
  KernelFeatures k;
  k.btf = true;
  k.issue_args = 1;
  k.complete_args = 3;
  k.requeue_args = 1;
  k.insert_args = 1;
  k.io_start_args = 1;
  k.io_done_args = 1;
  k.bio_queue_args = 1;
  k.bio_complete_args = 2;
  k.tp_btf = k.raw_tp = k.ringbuf = k.map_iter = k.atomics = {true, ""};
  k.cgroup_id_helper = k.task_btf_helper = {true, ""};
  k.lockdown = "none";
  k.lsms = "capability,bpf";
  k.cap_known = true;
  k.cap_eff = (1ull << kCapBpf) | (1ull << kCapPerfmon) | (1ull << kCapSysAdmin);
  return k;
}

const FeatureRow& row(const std::vector<FeatureRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(Features, ParseDenyAcceptsKnownNamesAndAll) {
  EXPECT_TRUE(parse_deny("")->empty());
  auto d = parse_deny("iter,insert");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, (std::set<std::string>{"iter", "insert"}));
  EXPECT_EQ(parse_deny("all")->size(), 5u);
  EXPECT_EQ(parse_deny("iter,,io_done,")->size(), 2u);
}

TEST(Features, ParseDenyNamesTheUnknownWord) {
  auto d = parse_deny("iter,kprobes");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::kUsage);
  EXPECT_NE(d.error().message.find("unknown feature 'kprobes'"), std::string::npos);
  EXPECT_NE(d.error().message.find("BLKRR_DENY"), std::string::npos);
}

TEST(Features, LockdownIsTheBracketedWord) {
  EXPECT_EQ(parse_lockdown("none [integrity] confidentiality\n"), "integrity");
  EXPECT_EQ(parse_lockdown("[none] integrity confidentiality\n"), "none");
  EXPECT_EQ(parse_lockdown(""), "not reported");
  EXPECT_EQ(parse_lockdown("garbage"), "not reported");
}

TEST(Features, CapEffFromStatus) {
  uint64_t caps = 0;
  EXPECT_TRUE(parse_cap_eff("Name:\tx\nCapPrm:\t0\nCapEff:\t000001fffeffffff\n", &caps));
  EXPECT_EQ(caps, 0x000001fffeffffffull);
  EXPECT_FALSE(caps & (1ull << kCapSysResource));  // this project's CI kernel build
  EXPECT_FALSE(parse_cap_eff("Name:\tx\n", &caps));
  EXPECT_FALSE(parse_cap_eff("CapEff:\tzz\n", &caps));
}

TEST(Features, FullKernelPassesAndOffersEverything) {
  FeatureSet f{full_kernel(), {}};
  EXPECT_TRUE(check_required(f).ok());
  EXPECT_TRUE(f.map_iter() && f.io_start() && f.io_done() && f.rq_insert());
  EXPECT_FALSE(f.queue_arg());
  for (const auto& r : feature_rows(f)) EXPECT_TRUE(r.available) << r.name << ": " << r.detail;
}

TEST(Features, DenyHidesAFeatureTheKernelHasAndSaysWhy) {
  FeatureSet f{full_kernel(), *parse_deny("iter,io_start")};
  EXPECT_FALSE(f.map_iter());
  EXPECT_FALSE(f.io_start());
  EXPECT_TRUE(f.io_done());
  auto rows = feature_rows(f);
  EXPECT_EQ(row(rows, "map_iter").detail, "switched off by BLKRR_DENY=iter");
  EXPECT_FALSE(row(rows, "map_iter").available);
  EXPECT_TRUE(check_required(f).ok());  // optional: capture still runs
}

TEST(Features, IteratorDeniedByTheKernelGivesItsReasonInOneLine) {
  auto k = full_kernel();
  k.map_iter = {false, "load: EPERM: denied (lockdown, an LSM or a missing capability)"};
  FeatureSet f{k, {}};
  std::string line = degrade_line(row(feature_rows(f), "map_iter"));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("EPERM"), std::string::npos);
  EXPECT_NE(line.find("sysfs idle check"), std::string::npos);
}

TEST(Features, Kernel510PrototypesAreAccepted) {
  auto k = full_kernel();
  k.issue_args = k.requeue_args = k.insert_args = 2;
  k.io_start_args = k.io_done_args = -1;
  k.map_iter = {true, ""};
  FeatureSet f{k, {}};
  EXPECT_TRUE(check_required(f).ok());
  EXPECT_TRUE(f.queue_arg());
  EXPECT_TRUE(f.rq_insert());
  EXPECT_FALSE(f.io_start());
}

TEST(Features, MissingRequiredFeatureIsAnErrorThatNamesIt) {
  auto k = full_kernel();
  k.tp_btf = {false, "load: EPERM: denied"};
  auto st = check_required(FeatureSet{k, {}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(st.error().message.find("tp_btf: load: EPERM"), std::string::npos);
  EXPECT_NE(st.error().message.find("lockdown none"), std::string::npos);

  k = full_kernel();
  k.issue_args = 3;  // an unknown prototype
  EXPECT_FALSE(check_required(FeatureSet{k, {}}).ok());
  k = full_kernel();
  k.btf = false;
  EXPECT_NE(check_required(FeatureSet{k, {}}).error().message.find("CONFIG_DEBUG_INFO_BTF"),
            std::string::npos);
}

TEST(Features, NoCapabilitiesSaysRunWithSudo) {
  auto k = full_kernel();
  k.cap_eff = 1ull << kCapBpf;  // CAP_BPF without CAP_PERFMON
  auto st = check_required(FeatureSet{k, {}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kPermission);
  EXPECT_NE(st.error().message.find("sudo"), std::string::npos);
  EXPECT_NE(st.error().message.find("-CAP_PERFMON"), std::string::npos);
}

TEST(Features, LoadErrorNamesProgramErrnoAndCause) {
  auto k = full_kernel();
  k.lockdown = "integrity";
  auto e = load_error(EPERM, "blkrr_check", k);
  EXPECT_NE(e.message.find("'blkrr_check'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("Operation not permitted"), std::string::npos);
  EXPECT_NE(e.message.find("lockdown integrity"), std::string::npos);
  EXPECT_EQ(e.message.find("BTF"), std::string::npos) << "EPERM is no BTF problem";
  EXPECT_EQ(e.kind, ErrorKind::kPermission);
  EXPECT_EQ(e.sys_errno, EPERM);
  auto v = load_error(EACCES, "", k);
  EXPECT_NE(v.message.find("verifier"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("libbpf messages above"), std::string::npos);
  EXPECT_EQ(v.sys_errno, EACCES);
}

}  // namespace
}  // namespace blkrr::capture
