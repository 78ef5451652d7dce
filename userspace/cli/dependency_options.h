// The inference options (core/dependency.h) of the commands that infer
// dependencies: replay --timing dependency and convert --dependencies take
// the same flags with the same meaning.
#pragma once

#include "core/args.h"
#include "core/dependency.h"

namespace blkrr::cli {

void add_dependency_options(ArgParser& p, DependencyOptions& d);

}  // namespace blkrr::cli
