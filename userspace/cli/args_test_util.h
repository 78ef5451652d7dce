// argv for the parse functions of the commands' tests.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace blkrr::cli::testing
