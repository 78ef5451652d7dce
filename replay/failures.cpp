#include "replay/failures.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>

namespace blkrr::replay {

void Failures::add(const FailedRequest& f) {
  ++count;
  ++by_errno[f.result < 0 ? errno_name(-f.result) : "short"];
  if (listed.size() < kMaxListed) listed.push_back(f);
}

std::string Failures::describe(const FailedRequest& f) {
  std::string what = f.result < 0 ? errno_name(-f.result) + " (" + std::strerror(-f.result) + ")"
                                  : std::to_string(f.result) + " bytes";
  return std::string(op_name(f.op)) + " of " + std::to_string(f.sectors) + " sectors at sector " +
         std::to_string(f.sector) + " (request " + std::to_string(f.seq) + ") returned " + what;
}

std::string errno_name(int err) {
  const char* n = strerrorname_np(err);
  return n ? std::string(n) : "errno " + std::to_string(err);
}

nlohmann::json failures_json(const Failures& f) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& x : f.listed)
    listed.push_back(
        {{"request", x.seq},
         {"op", op_name(x.op)},
         {"sector", x.sector},
         {"sectors", x.sectors},
         {"errno", x.result < 0 ? nlohmann::json(errno_name(-x.result)) : nlohmann::json(nullptr)},
         {"result", x.result},
         {"submit_ns", x.submit_ns}});
  return {{"by_errno", f.by_errno},
          {"listed", listed},
          {"listed_max", Failures::kMaxListed},
          {"stop_reason",
           f.stop_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.stop_reason)},
          {"device_gone", f.device_gone}};
}

bool device_still_present(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  if (!S_ISBLK(st.st_mode)) return true;
  const std::string sys = "/sys/dev/block/" + std::to_string(major(st.st_rdev)) + ":" +
                          std::to_string(minor(st.st_rdev));
  struct stat s2 {};
  return ::stat(sys.c_str(), &s2) == 0;
}

}  // namespace blkrr::replay
