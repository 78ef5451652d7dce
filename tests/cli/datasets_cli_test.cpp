// `blkrr convert` on the public datasets as a user runs it: one volume of
// an Alibaba trace, the split of a Tencent .tgz archive into one load per
// volume, and the error a multi-volume file gives without either.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/cli/test_cli_run.h"

namespace {

using blkrr::testing::blkrr_run;

// The lines of a text, or of a gzip file's content.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
std::string gunzip(const std::string& path) {
  return blkrr::testing::run_command("gzip -dc '" + path + "'").out;
}

std::string sample(const std::string& name) {
  return std::string(BLKRR_TEST_DATA) + "/datasets/" + name;
}

class DatasetsCli : public blkrr::testing::ScratchDirTest {
 protected:
  DatasetsCli() : ScratchDirTest("datasets-cli") {}
};

TEST_F(DatasetsCli, AlibabaOneDeviceToALoad) {
  auto r = blkrr_run({"convert", sample("alibaba.csv"), "--device-id", "7", "-o", path("7.load")});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(alibaba) -> " + path("7.load") + " (load)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dataset:        Alibaba cloud block trace, time resolution 1 us"),
            std::string::npos)
      << r.out;
  auto lines = lines_of(blkrr::testing::slurp(path("7.load")));
  ASSERT_GE(lines.size(), 3u);
  const std::vector<std::string> want = {"      0.000000000 ;    247468056 ;    8 ; R ; 0.0 ; 0.0",
                                         "      0.000374000 ;           16 ;   16 ; W ; 0.0 ; 0.0",
                                         "      0.002374000 ;            8 ;    1 ; R ; 0.0 ; 0.0"};
  EXPECT_EQ(std::vector<std::string>(lines.end() - 3, lines.end()), want);
}

TEST_F(DatasetsCli, MixedVolumesAreAnErrorWithTheLine) {
  auto r = blkrr_run({"convert", sample("systor17.csv"), "-o", path("x.load")});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("systor17.csv:4: the trace mixes volumes 0 and 1"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("x.load")));
}

TEST_F(DatasetsCli, TencentArchiveSplitByVolume) {
  auto r = blkrr_run({"convert", sample("tencent-2018-10-01-01.tgz"), "--split-by", "volume", "-o",
                      path("vols") + "/"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("split:          2 volumes -> " + path("vols")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("assumed:        times were spread"), std::string::npos) << r.out;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path("vols")))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"volume-1063.load.gz", "volume-77.load.gz"}));
  auto v77 = lines_of(gunzip(path("vols/volume-77.load.gz")));
  ASSERT_FALSE(v77.empty());
  EXPECT_EQ(v77.back(), "      0.000000000 ;         3000 ;    8 ; W ; 0.0 ; 0.0");
  auto v1063 = lines_of(gunzip(path("vols/volume-1063.load.gz")));
  ASSERT_GE(v1063.size(), 4u);
  EXPECT_NE(v1063[v1063.size() - 4].find(";         1000 ;    8 ; R ;"), std::string::npos);
  EXPECT_NE(v1063.back().find(";         5000 ;   32 ; W ;"), std::string::npos);
}

TEST_F(DatasetsCli, TencentArchiveStreamedFromAPipe) {
  const std::string tgz = sample("tencent-2018-10-01-01.tgz");
  auto a = blkrr_run({"convert", tgz, "--device-id", "1063", "-o", path("file.load")});
  ASSERT_EQ(a.status, 0) << a.out;
  auto b = blkrr::testing::run_command("cat '" + tgz +
                                       "' | '" BLKRR_BINARY "' convert - --device-id 1063 -o '" +
                                       path("pipe.load") + "' 2>&1");
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("archive members read: 2"), std::string::npos) << b.out;
  auto fa = lines_of(blkrr::testing::slurp(path("file.load")));
  auto fb = lines_of(blkrr::testing::slurp(path("pipe.load")));
  ASSERT_GE(fa.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(fa.end() - 4, fa.end()),
            std::vector<std::string>(fb.end() - 4, fb.end()));
}

}  // namespace
