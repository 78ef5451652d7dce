#include "replay/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/io_guard.h"

namespace blkrr::replay {
namespace {

std::string holder_file_for(const struct stat& st) {
  std::string name =
      S_ISBLK(st.st_mode)
          ? "replay-" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev))
          : "replay-file-" + std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino);
  return lock_dir() + "/" + name + ".lock";
}

std::string utc_text(time_t t) {
  tm utc{};
  gmtime_r(&t, &utc);
  char buf[40];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return buf;
}

// The pids holding a BSD lock on the file `st` describes (/proc/locks:
// "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF", device numbers in hex).
std::vector<long> flock_pids(const struct stat& st) {
  std::vector<long> pids;
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string num, type, adv, mode, pid, id;
    if (!(ls >> num >> type) || type != "FLOCK") continue;  // also skips "->" (waiting)
    if (!(ls >> adv >> mode >> pid >> id)) continue;
    unsigned maj = 0, min = 0;
    unsigned long ino = 0;
    if (std::sscanf(id.c_str(), "%x:%x:%lu", &maj, &min, &ino) != 3) continue;
    if (maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino)
      pids.push_back(std::strtol(pid.c_str(), nullptr, 10));
  }
  return pids;
}

std::string comm_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string c;
  std::getline(in, c);
  return c;
}

// The holder file's pid and start time, 0 when it is missing or unreadable.
std::pair<long, long> read_holder_file(const std::string& file) {
  std::ifstream in(file);
  std::string key;
  long value = 0, pid = 0, start = 0;
  while (in >> key >> value) {
    if (key == "pid") pid = value;
    if (key == "start_unix") start = value;
  }
  return {pid, start};
}

}  // namespace

std::string lock_dir() {
  const char* env = std::getenv("BLKRR_RUN_DIR");
  return env && *env ? env : "/run/blkrr";
}

std::string lock_holder(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "another process";
  const std::vector<long> pids = flock_pids(st);
  const auto [pid, start] = read_holder_file(holder_file_for(st));
  for (long p : pids)
    if (p == pid && pid > 0)
      return "blkrr replay pid " + std::to_string(pid) + " since " + utc_text(start) + " (" +
             holder_file_for(st) + ")";
  if (!pids.empty()) {
    std::string comm = comm_of(pids.front());
    return "pid " + std::to_string(pids.front()) + (comm.empty() ? "" : " (" + comm + ")");
  }
  return "another process";
}

Result<DeviceLock> DeviceLock::take(const std::string& path, bool force,
                                    std::vector<std::string>& warnings) {
  DeviceLock l;
  l.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (l.fd_ < 0) return Error::system("cannot open " + path + " to lock it", errno);
  if (::flock(l.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    l.release();
    if (e != EWOULDBLOCK) return Error::system("cannot lock " + path, e);
    const std::string why = path + " is held by " + lock_holder(path) +
                            " (a BSD lock on the device node): two replays on one device mix "
                            "their data, and neither one's timing means anything";
    if (!force)
      return Error(ErrorKind::kUsage,
                   "refusing to replay: " + why + "; wait for it, or pass --force");
    warnings.push_back("overridden by --force: " + why + "; replaying without the lock");
    return l;
  }
  struct stat st {};
  if (::fstat(l.fd_, &st) != 0) return l;
  const std::string file = holder_file_for(st);
  ::mkdir(lock_dir().c_str(), 0755);  // may exist; not root: no holder file
  const time_t now = ::time(nullptr);
  std::string text = "pid " + std::to_string(::getpid()) + "\nstart_unix " +
                     std::to_string(static_cast<long>(now)) + "\nstart " + utc_text(now) +
                     "\ndevice " + path + "\n";
  if (write_file_atomic(file, text)) l.holder_file_ = file;
  return l;
}

DeviceLock::DeviceLock(DeviceLock&& o) noexcept {
  *this = std::move(o);
}

DeviceLock& DeviceLock::operator=(DeviceLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    holder_file_ = std::exchange(o.holder_file_, std::string());
  }
  return *this;
}

DeviceLock::~DeviceLock() {
  release();
}

void DeviceLock::release() {
  // The file first: while the lock is held, no other replay writes it.
  if (!holder_file_.empty()) ::unlink(holder_file_.c_str());
  holder_file_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace blkrr::replay
