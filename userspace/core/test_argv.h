// A command line for tests: argc and a writable argv from string literals.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace blkrr {

struct TestArgv {
  std::vector<std::string> s;
  std::vector<char*> p;
  explicit TestArgv(std::initializer_list<const char*> a) {
    for (auto x : a) s.emplace_back(x);
    for (auto& x : s) p.push_back(x.data());
  }
  int argc() { return static_cast<int>(p.size()); }
  char** argv() { return p.data(); }
};

}  // namespace blkrr
