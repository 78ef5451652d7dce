// The temporary files this process is writing (AtomicFile's "DIR/.NAME.XXXXXX"),
// removed when a signal ends the process, so that an interrupted command leaves
// neither a hidden temporary nor a partial output behind.
//
// A fixed table of paths (no allocation), filled when a temporary is created
// and emptied when it is renamed or removed. The signals that end a process
// by default (SIGINT, SIGTERM, SIGHUP, SIGPIPE) get a handler that unlinks
// every path in the table, then dies of the same signal as before (the exit
// status a shell sees is unchanged). A signal that is ignored or has a
// handler of its own keeps it: a command that stops cleanly on SIGINT
// (StopSignals) removes or commits its outputs itself, and StopSignals hands a
// signal back to this handler, not to the default action (a second Ctrl-C).
// A child between fork() and exec() removes nothing (the table belongs to the
// process that made the files).
#pragma once

#include <string>

#include "core/result.h"

namespace blkrr::temp_files {

constexpr int kSlots = 128;        // temporaries alive at once, at most
constexpr size_t kMaxPath = 4096;  // PATH_MAX

// A temporary file made from `tmpl` (ending in "XXXXXX", replaced in place) by
// mkostemp(O_CLOEXEC), and entered in the table before any signal can end
// the process in between. The handlers are installed on first use.
struct Made {
  int fd = -1;
  int slot = -1;
};
Result<Made> make(std::string& tmpl);
// The file of `slot` was renamed or removed: drop it from the table
// (-1: nothing). Remove a temporary (unlink) before forgetting it.
void forget(int slot);

// Unlinks every file in the table (async-signal-safe; the table is left as it
// is). Returns how many were unlinked.
int unlink_all() noexcept;
// How many temporaries the table holds.
int live();

// Installs the removing handler on each of SIGINT, SIGTERM, SIGHUP and
// SIGPIPE whose action is the default. Idempotent; StopSignals calls it
// before it saves the actions it replaces.
void install_handlers();
// Gives `signo` the removing handler (async-signal-safe): StopSignals' "a
// second Ctrl-C kills".
void die_on(int signo) noexcept;

}  // namespace blkrr::temp_files
