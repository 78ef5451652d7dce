#include "core/common_options.h"

#include <array>

namespace blkrr {
namespace {

constexpr std::array<CommonOptionSpec, 13> kTable{{
    {CommonOpt::kHelp, 'h', "help", "", "show the help of the command"},
    {CommonOpt::kVersion, 'V', "version", "", "print the blkrr version"},
    {CommonOpt::kDevice, 'd', "device", "DEV",
     "a disk or partition: sda, /dev/sda2, 8:16 (repeatable where several make sense)"},
    {CommonOpt::kPid, 'p', "pid", "PID",
     "requests created by this process (the pid ps shows, all its threads)"},
    {CommonOpt::kComm, 'n', "comm", "COMM", "requests created by tasks of this name"},
    {CommonOpt::kCgroup, 0, "cgroup", "CGROUP", "requests created in this cgroup"},
    {CommonOpt::kOutput, 'o', "output", "FILE", "where the command's output goes"},
    {CommonOpt::kJson, 'j', "json", "", "JSON on standard output"},
    {CommonOpt::kJsonFile, 0, "json-file", "FILE", "JSON into FILE"},
    {CommonOpt::kQuiet, 'q', "quiet", "", "no progress line and no summary on stderr"},
    {CommonOpt::kDuration, 'D', "duration", "TIME", "run this long (10, 1.5s, 5m)"},
    {CommonOpt::kVerbose, 'v', "verbose", "", "every counter in the summary, also the zero ones"},
    {CommonOpt::kOverwrite, 0, "overwrite", "",
     "replace output files that exist (without it an existing file is an error)"},
}};

}  // namespace

std::span<const CommonOptionSpec> common_options() {
  return kTable;
}

const CommonOptionSpec& common_option(CommonOpt id) {
  for (const auto& o : kTable)
    if (o.id == id) return o;
  return kTable[0];  // unreachable: every CommonOpt has an entry (common_options_test)
}

const CommonOptionSpec* common_option_by_short(char c) {
  if (c == 0) return nullptr;
  for (const auto& o : kTable)
    if (o.short_name == c) return &o;
  return nullptr;
}

const CommonOptionSpec* common_option_by_long(std::string_view name) {
  for (const auto& o : kTable)
    if (o.long_name == name) return &o;
  return nullptr;
}

}  // namespace blkrr
