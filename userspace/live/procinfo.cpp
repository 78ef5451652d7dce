#include "live/procinfo.h"

#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string_view>

#include "core/args.h"
#include "core/file_io.h"

namespace blkrr::live {

namespace {

// First whitespace-separated field after "Key:" on the line that starts with it.
std::optional<std::string_view> status_field(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::string_view rest = line.substr(key.size() + 1);
      size_t b = rest.find_first_not_of(" \t");
      if (b == std::string_view::npos) return std::nullopt;
      rest = rest.substr(b);
      return rest.substr(0, rest.find_first_of(" \t"));
    }
    pos = eol + 1;
  }
  return std::nullopt;
}

}  // namespace

Result<ProcInfo> read_proc_info(uint32_t pid, const std::string& procfs) {
  std::string path = procfs + "/" + std::to_string(pid) + "/status";
  auto text = read_file(path);
  if (!text) return text.error();
  auto uid = status_field(*text, "Uid");
  auto ppid = status_field(*text, "PPid");
  if (!uid || !ppid) return Error(ErrorKind::kBadInput, path + ": no Uid or PPid line");
  auto u = parse_u64(*uid);
  auto p = parse_u64(*ppid);
  if (!u || !p) return Error(ErrorKind::kBadInput, path + ": bad Uid or PPid value");
  return ProcInfo{static_cast<uint32_t>(*u), static_cast<uint32_t>(*p)};
}

void ProcCache::touch(uint32_t pid) {
  auto [it, inserted] = entries_.try_emplace(pid);
  it->second.last_used = gen_;
  if (!inserted) return;
  auto r = read_proc_info(pid, procfs_);
  if (r) it->second.info = *r;
}

std::optional<ProcInfo> ProcCache::get(uint32_t pid) {
  touch(pid);
  return entries_[pid].info;
}

void ProcCache::next_generation() {
  ++gen_;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (gen_ - it->second.last_used > max_age_)
      it = entries_.erase(it);
    else
      ++it;
  }
}

Result<std::array<double, 3>> read_loadavg(const std::string& procfs) {
  auto text = read_file(procfs + "/loadavg");
  if (!text) return text.error();
  std::istringstream in(*text);
  std::array<double, 3> la{};
  for (auto& v : la) {
    std::string tok;
    if (!(in >> tok)) return Error(ErrorKind::kBadInput, procfs + "/loadavg: fewer than 3 fields");
    auto d = parse_double(tok);
    if (!d) return d.error().context(procfs + "/loadavg");
    v = *d;
  }
  return la;
}

Result<std::vector<DiskStat>> parse_diskstats(const std::string& text) {
  std::vector<DiskStat> out;
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string tok; ls >> tok;) f.push_back(tok);
    if (f.empty()) continue;
    // major minor name + at least the 11 classic counters.
    if (f.size() < 14)
      return Error(ErrorKind::kBadInput, "diskstats:" + std::to_string(lineno) + ": only " +
                                             std::to_string(f.size()) +
                                             " fields, expected 14 or more");
    // v[0], v[1]: major, minor; v[2..12]: the 11 classic counters (f[3..13]).
    std::array<uint64_t, 13> v{};
    for (size_t i = 0; i < v.size(); ++i) {
      auto n = parse_u64(f[i < 2 ? i : i + 1]);
      if (!n) return n.error().context("diskstats:" + std::to_string(lineno));
      v[i] = *n;
    }
    DiskStat d;
    d.dev = make_dev(static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]));
    d.name = f[2];
    d.reads = v[2];
    d.read_sectors = v[4];
    d.read_ms = v[5];
    d.writes = v[6];
    d.write_sectors = v[8];
    d.write_ms = v[9];
    d.in_flight = v[10];
    d.io_ticks_ms = v[11];
    d.time_in_queue_ms = v[12];
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<DiskStat>> read_diskstats(const std::string& procfs) {
  auto text = read_file(procfs + "/diskstats");
  if (!text) return text.error();
  auto r = parse_diskstats(*text);
  if (!r) return r.error().context(procfs);
  return r;
}

std::string CgroupNamer::name(uint64_t id) {
  if (auto it = paths_.find(id); it != paths_.end()) return it->second;
  if (!walked_) {
    walk();
    if (auto it = paths_.find(id); it != paths_.end()) return it->second;
  }
  return std::to_string(id);
}

void CgroupNamer::walk() {
  walked_ = true;
  namespace fs = std::filesystem;
  std::error_code ec;
  struct stat st {};
  if (::stat(root_.c_str(), &st) == 0) paths_[st.st_ino] = "/";
  fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    if (::stat(it->path().c_str(), &st) != 0) continue;
    paths_[st.st_ino] = "/" + fs::relative(it->path(), root_, ec).string();
  }
}

}  // namespace blkrr::live
