// Guards around every file blkrr reads or writes (docs/reliability.md):
//  - inputs that are not regular files (pipes, FIFOs, "-") are streamed, see
//    core/input_stream.h; directories and block devices are refused;
//  - outputs are written to a temporary name in the target directory and
//    renamed over the target only when complete (AtomicFile);
//  - every output is checked against every input (same file, also through
//    links) and for a writable directory before any work starts;
//  - JSON from files is checked for nesting depth before it is parsed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fd.h"
#include "core/result.h"

namespace blkrr {

// Checks before work starts: no output names an input (same device and
// inode, following links; an input "-" is the file standard input comes
// from, if any; an input NAME that is no file stands for its blktrace files
// NAME.blktrace.N), no output is a block
// device, and each output's directory exists and is writable. `option`
// names the options in messages ("-o", "--json", ...).
// The input file that `path` is (same device and inode), or "": the one
// comparison check_outputs() makes, for writes that are not outputs (the
// device replay writes to).
std::string input_file_at(const std::string& path, const std::vector<std::string>& inputs);

struct OutputCheck {
  std::string path;
  std::string option;  // for messages: "-o", "--json", "-j", "--derive"
};

// The one rule of every command for outputs that exist already (docs/cli.md,
// "Outputs"): an existing regular file is replaced only with --overwrite
// (never implied by replay's --force, which overrides the device check);
// character devices (/dev/null), FIFOs and standard output are written as
// always. `Existing::kReplace` is what --overwrite gives.
enum class Existing { kRefuse, kReplace };
// The error for the existing output `path` of `option`; empty when `existing`
// allows it or `path` is no regular file.
Status refuse_existing(const std::string& path, const std::string& option, Existing existing);
// The same for a directory of outputs (report -o DIR, convert --split-by -o
// DIR/): refused when it holds one of `names` (the files the command writes there).
Status refuse_existing_in(const std::string& dir, const std::vector<std::string>& names,
                          const std::string& option, Existing existing);

// A directory of outputs, made with its missing parents (mkdir -p).
Status make_directories(const std::string& dir);
// Why `dir` cannot be made by make_directories(): its nearest existing
// ancestor is no directory or not writable (the errno's reason, e.g.
// "Permission denied", and that ancestor named). Empty when it can.
Status check_can_make_directories(const std::string& dir, const std::string& option);

// Also refuses an existing output under refuse_existing()'s rule.
Status check_outputs(const std::vector<OutputCheck>& outputs,
                     const std::vector<std::string>& inputs, Existing existing);

// A file written under a temporary name ("DIR/.NAME.XXXXXX") and renamed to
// NAME by commit() (after fsync). Destroyed or aborted without commit, the
// temporary file is removed, so a failed write never leaves a partial NAME.
// A signal that ends the process (SIGINT, SIGTERM, SIGHUP, SIGPIPE with their
// default action) removes it too (core/temp_files.h).
// "-" writes to standard output directly (commit only reports errors).
class AtomicFile {
 public:
  static Result<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&& o) noexcept;
  ~AtomicFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // A duplicate of fd() for fdopen/gzdopen, which close it themselves; close
  // it before commit(), which then syncs and closes the original.
  int dup_fd() const;
  // fsync + close + rename to the target. Idempotent. An existing target that
  // is not a regular file (/dev/null, a FIFO) is written in place instead.
  Status commit();
  void abort();  // remove the temporary file (idempotent)

 private:
  AtomicFile() = default;
  std::string path_, tmp_;
  int fd_ = -1;
  int temp_slot_ = -1;  // tmp_'s entry in core/temp_files.h
  bool done_ = false;
};

// Writes `data` to `path` atomically (AtomicFile).
Status write_file_atomic(const std::string& path, std::string_view data);

// Nesting depth of the JSON text (arrays and objects; strings skipped).
size_t json_nesting_depth(std::string_view text);
constexpr size_t kMaxJsonDepth = 64;

}  // namespace blkrr
