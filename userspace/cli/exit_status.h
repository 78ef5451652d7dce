// The exit statuses of every blkrr command, and the one place an error's
// kind becomes one (docs/cli.md has the table).
#pragma once

#include "core/result.h"

namespace blkrr::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;         // the command ran and failed (I/O, kernel, input)
inline constexpr int kExitUsage = 2;          // the command as given cannot run; nothing was done
inline constexpr int kExitIncomplete = 3;     // validate --fail-incomplete: requests missing
inline constexpr int kExitUnknown = 4;        // validate --fail-incomplete: nothing to judge by
inline constexpr int kExitInternal = 70;      // a bug of blkrr's own (EX_SOFTWARE)
inline constexpr int kExitInterrupted = 130;  // stopped by SIGINT before its work (128 + 2)

constexpr int exit_status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return kExitUsage;
    case ErrorKind::kInternal:
      return kExitInternal;
    case ErrorKind::kInterrupted:
      return kExitInterrupted;
    case ErrorKind::kFailed:
    case ErrorKind::kNotFound:
    case ErrorKind::kPermission:
    case ErrorKind::kBadInput:
    case ErrorKind::kUnsupported:
    case ErrorKind::kIo:
      return kExitFailed;
  }
  return kExitFailed;
}

}  // namespace blkrr::cli
