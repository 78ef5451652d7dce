// Whole reads and writes on file descriptors, retried on EINTR and on short
// transfers, and the one scratch-file rule. Every failure is an
// Error::system naming `what` (the file or its purpose) with the errno kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/fd.h"
#include "core/result.h"

namespace blkrr {

// All n bytes, or an error (a write that makes no progress is EIO).
Status write_all(int fd, const void* p, size_t n, const char* what);
Status pwrite_all(int fd, const void* p, size_t n, uint64_t off, const char* what);
// All n bytes at off; an end of file before them is an error (kIo).
Status pread_all(int fd, void* p, size_t n, uint64_t off, const char* what);
// Up to n bytes, fewer only at the end of file: the count read.
Result<size_t> read_all(int fd, void* p, size_t n, const char* what);
// A whole small file (sysfs, procfs, a plot), at most max_bytes of it: a
// longer file is an error (kBadInput), never a silent cut.
Result<std::string> read_file(const std::string& path, size_t max_bytes = 64u << 20);

// An unlinked temporary file for data too large for memory (read and written
// with pread/pwrite), gone when closed: O_TMPFILE in $TMPDIR, else
// /var/tmp (where large temporaries belong; /tmp is often a small tmpfs),
// with a named-then-unlinked file where the filesystem lacks O_TMPFILE.
// Always O_CLOEXEC. `purpose` names it in the error ("the report's request
// store").
Result<Fd> open_scratch_file(const std::string& purpose);

}  // namespace blkrr
