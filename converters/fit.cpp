#include "converters/fit.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/args.h"
#include "core/fd.h"
#include "core/units.h"

namespace blkrr {

namespace {

const char* option_name(MapMode m) {
  return m == MapMode::kScale ? "--scale" : "--wrap";
}

Result<uint64_t> size_of_path(const std::string& path, const char* opt) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error::system(std::string(opt) + ": '" + path + "' is neither a size (30G) nor a file",
                         errno, "give a size such as 30G or an existing block device");
  if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  if (!S_ISBLK(st.st_mode))
    return Error(ErrorKind::kUsage,
                 std::string(opt) + ": '" + path + "' is not a block device or regular file");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::system(std::string(opt) + ": cannot open '" + path + "'", errno, "");
  uint64_t size = 0;
  if (ioctl(fd.get(), BLKGETSIZE64, &size) != 0)
    return Error::system(std::string(opt) + ": cannot read the size of '" + path + "'", errno, "");
  return size;
}

}  // namespace

Result<FitOptions> parse_fit(MapMode mode, const std::string& arg) {
  FitOptions f;
  f.mode = mode;
  f.target = arg;
  const char* opt = option_name(mode);
  bool looks_like_size =
      !arg.empty() && arg[0] >= '0' && arg[0] <= '9' && arg.find('/') == std::string::npos;
  if (looks_like_size) {
    auto n = parse_size(arg);
    if (!n)
      return Error(ErrorKind::kUsage,
                   std::string(opt) + ": bad size '" + arg + "' (e.g. 30G, 512M)");
    f.target_bytes = *n;
  } else {
    auto n = size_of_path(arg, opt);
    if (!n) return n.error();
    f.target_bytes = *n;
  }
  if (f.target_bytes < 512)
    return Error(ErrorKind::kUsage,
                 std::string(opt) + ": the target '" + arg + "' is smaller than one sector");
  return f;
}

std::string FitReport::text() const {
  const uint64_t target_sectors = options.target_bytes / 512;
  double factor = target_sectors
                      ? static_cast<double>(load_end_sector) / static_cast<double>(target_sectors)
                      : 0;
  std::string t = "  positions:      ";
  std::string target = options.target + (options.target == fmt_bytes(options.target_bytes)
                                             ? ""
                                             : " (" + fmt_bytes(options.target_bytes) + ")");
  if (options.mode == MapMode::kScale) {
    t += strfmt("scaled onto %s: the load reached %s, every position multiplied by %.4g\n",
                target.c_str(), fmt_bytes(load_end_sector * 512).c_str(),
                factor > 0 ? 1.0 / factor : 0.0);
  } else if (wrapped == 0) {
    t += strfmt("fit %s as they were (the load reached %s)\n", target.c_str(),
                fmt_bytes(load_end_sector * 512).c_str());
  } else {
    t += strfmt(
        "wrapped onto %s: the load reached %s (%.3g times the target); %llu requests beyond "
        "the end were moved to position modulo the target size, %llu of them back from the "
        "end so as not to cross it\n",
        target.c_str(), fmt_bytes(load_end_sector * 512).c_str(), factor,
        static_cast<unsigned long long>(wrapped), static_cast<unsigned long long>(clamped));
  }
  if (too_large)
    t += strfmt("  NOT CONVERTED:  %llu requests longer than the target itself\n",
                static_cast<unsigned long long>(too_large));
  return t;
}

}  // namespace blkrr
