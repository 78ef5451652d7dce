// argv for the parse functions of the commands' tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace blkrr::cli::testing {

// Owns the strings an argv points into; argv[0] is the command's name.
class Argv {
 public:
  Argv(std::initializer_list<std::string> args) : Argv(std::vector<std::string>(args)) {}
  explicit Argv(std::vector<std::string> args) : args_(std::move(args)) {
    for (auto& a : args_) ptrs_.push_back(a.data());
    ptrs_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(args_.size()); }
  char** argv() { return ptrs_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> ptrs_;
};

// The kind of the error a parse function returned (kInternal, and a test
// failure, when it parsed).
template <class T>
ErrorKind kind_of(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? ErrorKind::kInternal : r.error().kind;
}

// PARSE(ARGV) with what it printed on standard output (--help) in `out`.
template <class Parse>
auto parse_printing(Parse parse, Argv args, std::string& out) {
  ::testing::internal::CaptureStdout();
  auto r = parse(args.argc(), args.argv());
  out = ::testing::internal::GetCapturedStdout();
  return r;
}

}  // namespace blkrr::cli::testing
