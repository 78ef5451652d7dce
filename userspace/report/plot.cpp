#include "report/plot.h"
#include "core/version.h"
#include "core/io_guard.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace blkrr::report {

namespace {
const char* kReads[] = {"#0000ff", "#00a0e0", "#6a3d9a", "#008080", "#4060c0", "#00c0a0"};
const char* kWrites[] = {"#ff0000", "#ff8c00", "#c00060", "#a05000", "#e04080", "#c0a000"};
const char* kNeutral[] = {"#000000", "#2ca02c", "#808080", "#8c564b", "#9467bd", "#17becf"};
constexpr size_t kPalette = 6;

std::string fmt_width(double w) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", w);
  return b;
}

std::string quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("''") : std::string(1, c);
  return o + "'";
}

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && st.st_size > 0;
}

}  // namespace

std::string read_color(size_t i) {
  return kReads[i % kPalette];
}
std::string write_color(size_t i) {
  return kWrites[i % kPalette];
}
std::string neutral_color(size_t i) {
  return kNeutral[i % kPalette];
}

std::vector<std::string> wrap_text(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::string rest = text;
  while (rest.size() > width) {
    size_t cut = std::string::npos;
    for (const char* sep : {"; ", ", ", " "}) {
      size_t at = rest.rfind(sep, width);
      if (at != std::string::npos && at > width / 3) {
        cut = at + std::strlen(sep) - 1;
        break;
      }
    }
    if (cut == std::string::npos) cut = width;
    out.push_back(rest.substr(0, cut));
    rest = rest.substr(std::min(rest.size(), cut + 1));
  }
  if (!rest.empty() || out.empty()) out.push_back(rest);
  return out;
}

namespace {

// Title, context and notes at the top; returns the next free label tag.
int header(std::string& s, const PlotSpec& p) {
  s += "set label 1 " + quote(p.title) + " at screen 0.5,0.975 center font ',15' noenhanced\n";
  std::vector<std::string> lines;
  for (const auto& c : p.context)
    for (auto& l : wrap_text(c, 175)) lines.push_back(l);
  for (const auto& n : p.notes) lines.push_back(n);
  double y = 0.94;
  int tag = 2;
  for (const auto& l : lines) {
    s += "set label " + std::to_string(tag++) + " " + quote(l) + " at screen 0.01," + fmt_width(y) +
         " left font ',9' noenhanced front\n";
    y -= 0.02;
  }
  s += "set tmargin at screen " + fmt_width(y - 0.015) + "\n";
  s += "set label " + std::to_string(tag++) + " " +
       quote(std::string("blkrr ") + version() + " report; data and script: plots/" + p.name +
             ".gp") +
       " at screen 0.99,0.012 right font ',8' textcolor rgb '#808080' noenhanced\n";
  return tag;
}

}  // namespace

std::string gnuplot_script(const PlotSpec& p, const std::string& terminal) {
  std::string s = "# blkrr report: " + p.title + "\n# re-plot: cd REPORT_DIR && gnuplot plots/" +
                  p.name + ".gp\n";
  s += "reset\n";
  s += "set terminal " + terminal + " size 1200,800" +
       (terminal == "pngcairo" ? " font 'sans,11'" : "") + "\n";
  s += "set output " + quote("plots/" + p.name + ".png") + "\n";
  s += "set datafile separator ','\nset grid\nset key top right noenhanced box opaque\n";
  s += "set xlabel " + quote(p.xlabel) + " noenhanced\n";
  s += "set ylabel " + quote(p.ylabel) + " noenhanced\n";
  s += "set bmargin 4\n";
  if (p.logx) s += "set logscale x\n";
  if (p.logy) s += "set logscale y\n";
  if (p.pad) s += "set offsets graph 0.02, graph 0.02, graph 0.03, graph 0.03\n";
  int tag = header(s, p);
  if (!p.fake_labels.empty()) {
    std::string stamp = "FAKE RESULT";
    if (p.fake_labels.size() < p.labels.size()) {
      stamp += ": ";
      for (size_t i = 0; i < p.fake_labels.size(); ++i) stamp += (i ? ", " : "") + p.fake_labels[i];
    }
    s += "set label " + std::to_string(tag++) + " " + quote(stamp) +
         " at graph 0.5,0.5 center rotate by 25 font '," + (stamp.size() > 11 ? "40" : "64") +
         "' textcolor rgb '#60ff0000' front noenhanced\n";
  }
  s += p.extra;
  if (!p.extra.empty() && p.extra.back() != '\n') s += "\n";
  s += "plot ";
  for (size_t i = 0; i < p.series.size(); ++i) {
    const Series& x = p.series[i];
    if (i) s += ", \\\n     ";
    s += quote(x.file) + " skip 1 using " + x.using_ + " with " + x.style;
    if (x.style == "points")
      s += " pt " + std::to_string(x.point_type) + " ps " + fmt_width(x.width);
    else if (x.style != "filledcurves" && x.style != "boxes")
      s += " lw " + fmt_width(x.width) + (x.dashed ? " dt 2" : "");
    if (!x.fill.empty()) s += " fs " + x.fill;
    s += " lc rgb " + quote(x.color) + (x.key ? " title " + quote(x.title) : " notitle");
  }
  s += "\nunset output\n";
  return s;
}

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string ps = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t b = 0;
  while (b <= ps.size()) {
    size_t e = ps.find(':', b);
    if (e == std::string::npos) e = ps.size();
    std::string cand = (e > b ? ps.substr(b, e - b) : ".") + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    b = e + 1;
  }
  return "";
}

namespace {

// Runs `prog args...` in `dir` with stdout/stderr appended to `log`; returns the pid.
pid_t spawn_in(const std::string& dir, const std::string& prog,
               const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (::chdir(dir.c_str()) != 0) ::_exit(126);
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(prog.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(prog.c_str(), argv.data());
  ::_exit(127);
}

int wait_status(pid_t pid) {
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

Status write_text(const std::string& path, const std::string& text) {
  return write_file_atomic(path, text);
}

}  // namespace

Result<RenderResult> render_plots(const std::string& dir, const std::vector<PlotSpec>& plots,
                                  const std::string& gnuplot, int jobs) {
  RenderResult rr;
  std::string prog = find_program(gnuplot);
  // libgd's png draws scatter plots about 3x faster than pngcairo; cairo is
  // the fallback when gnuplot was built without libgd.
  // Plots with transparent bands need cairo (libgd draws them opaque).
  std::string terminal = "png", cairo = "pngcairo";
  std::string log = "plots/gnuplot.log";
  ::unlink((dir + "/" + log).c_str());
  auto works = [&](const char* t) {
    pid_t pid = spawn_in(dir, prog, {"-e", std::string("set terminal ") + t}, "/dev/null");
    return pid >= 0 && wait_status(pid) == 0;
  };
  if (!prog.empty()) {
    if (!works("png")) terminal = "pngcairo";
    if (!works("pngcairo")) cairo = terminal;
  }
  for (const auto& p : plots)
    BLKRR_TRY(write_text(dir + "/plots/" + p.name + ".gp",
                         gnuplot_script(p, p.cairo ? cairo : terminal)));
  if (prog.empty()) {
    rr.message = "gnuplot ('" + gnuplot +
                 "') was not found: no PNG plots were drawn. The data (data/*.csv) and the scripts "
                 "(plots/*.gp) are written; install gnuplot (e.g. apt-get install gnuplot-nox) and "
                 "run 'cd " +
                 dir + " && gnuplot plots/NAME.gp', or re-run 'blkrr report'.";
    return rr;
  }
  jobs = std::clamp(jobs, 1, 8);
  std::vector<std::string> scripts;
  for (int j = 0; j < jobs; ++j) {
    std::string body;
    for (size_t i = static_cast<size_t>(j); i < plots.size(); i += static_cast<size_t>(jobs))
      body.append("load ").append(quote("plots/" + plots[i].name + ".gp")).append("\n");
    if (body.empty()) continue;
    std::string name = "plots/all-" + std::to_string(j) + ".gp";
    std::string path = dir;
    path.append("/").append(name);
    BLKRR_TRY(write_text(path, body));
    scripts.push_back(name);
  }
  std::vector<pid_t> pids;
  pids.reserve(scripts.size());
  for (const auto& s : scripts) pids.push_back(spawn_in(dir, prog, {s}, log));
  bool failed = false;
  for (pid_t pid : pids) failed |= pid < 0 || wait_status(pid) != 0;
  auto in_dir = [&dir](const std::string& rel) {
    std::string p = dir;
    p.append("/").append(rel);
    return p;
  };
  for (const auto& s : scripts) ::unlink(in_dir(s).c_str());
  rr.ran = true;
  for (const auto& p : plots) rr.produced += file_exists(in_dir("plots/" + p.name + ".png"));
  if (failed || rr.produced != plots.size())
    rr.message = "gnuplot reported problems (" + std::to_string(rr.produced) + " of " +
                 std::to_string(plots.size()) + " plots drawn); see " + dir + "/" + log;
  return rr;
}

Thinner::Thinner(double x0, double x1, bool logx, double y0, double y1, bool logy, int w, int h)
    : x0_(x0),
      x1_(x1),
      y0_(y0),
      y1_(y1),
      logx_(logx),
      logy_(logy),
      w_(w),
      h_(h),
      used_(static_cast<size_t>(w) * static_cast<size_t>(h), false) {
  if (logx_) {
    x0_ = fast_log2(x0_);
    x1_ = fast_log2(x1_);
  }
  if (logy_) {
    y0_ = fast_log2(y0_);
    y1_ = fast_log2(y1_);
  }
  kx_ = x1_ > x0_ ? w_ / (x1_ - x0_) : 0;
  ky_ = y1_ > y0_ ? h_ / (y1_ - y0_) : 0;
}

bool Thinner::keep(double x, double y) {
  return keep_scaled(logx_ ? fast_log2(x) : x, logy_ ? fast_log2(y) : y);
}

}  // namespace blkrr::report
