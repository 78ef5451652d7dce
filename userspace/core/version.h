// The version of blkrr, as printed by --version and written into trace
// headers, load notices and report.json. Built from git it is what
// `git describe --tags --always --dirty` says (leading "v" dropped; a bare
// commit id is prefixed with the project() version); built from a tarball it
// is the project() version. userspace/core/version.cmake generates the
// definition on every build, so a new commit needs no re-configure.
#pragma once

namespace blkrr {

const char* version();

}  // namespace blkrr
