// Plots as gnuplot scripts over CSV data files, rendered by gnuplot running as
// a child process. Layout under the report directory: data/*.csv (the data),
// plots/NAME.gp (one script per plot, runnable as `cd DIR && gnuplot
// plots/NAME.gp`), plots/NAME.png.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::report {

// Columns of a count against a log axis: empty buckets are left out (log 0).
inline constexpr const char* kNonZero3 = "1:($3 > 0 ? $3 : 1/0)";
inline constexpr const char* kNonZero4 = "1:($4 > 0 ? $4 : 1/0)";

// Colours: reads blue, writes red; further datasets get related shades.
std::string read_color(size_t dataset);
std::string write_color(size_t dataset);
std::string neutral_color(size_t dataset);  // totals, originals, demanded

struct Series {
  std::string title;
  std::string file;              // relative to the report directory, e.g. "data/x.csv"
  std::string using_;            // gnuplot "using" clause, e.g. "1:2"
  std::string style = "points";  // points, lines, steps, linespoints, impulses
  std::string color = "#000000";
  int point_type = 7;
  double width = 1.5;  // line width, or point size for points
  bool dashed = false;
  std::string fill;  // fill style of boxes/filledcurves, e.g. "solid 0.8"
  bool key = true;   // listed in the key
};

struct PlotSpec {
  std::string name;  // file stem
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  // Inputs shown, and those of them that are FAKE (dry run / no O_DIRECT):
  // the plot is stamped "FAKE RESULT" (naming them when others are real).
  std::vector<std::string> labels, fake_labels;
  std::vector<std::string> notes;  // printed at the top left, below the context
  // Under the title: the inputs and what changes the meaning (see
  // provenance.h), what a bin is; wrapped to the plot's width.
  std::vector<std::string> context;
  bool pad = false;    // margins around the data (scatter plots: no point on an axis)
  bool cairo = false;  // needs pngcairo (transparent bands); libgd's png otherwise
  std::vector<Series> series;
  std::string extra;  // additional gnuplot commands (ranges, tics)
};

// Splits `text` into lines of at most `width` characters at ", " / "; " / " ".
std::vector<std::string> wrap_text(const std::string& text, size_t width);

// The gnuplot script of one plot; `terminal` is "pngcairo" or "png".
std::string gnuplot_script(const PlotSpec& p, const std::string& terminal);

struct RenderResult {
  bool ran = false;     // gnuplot was found and run
  std::string message;  // why not, or the error log location
  size_t produced = 0;  // PNG files present afterwards
};

// Writes plots/NAME.gp for every plot and, when gnuplot can be found
// (`gnuplot` is a command name or path), runs it with the report directory
// as working directory, in `jobs` parallel processes.
Result<RenderResult> render_plots(const std::string& dir, const std::vector<PlotSpec>& plots,
                                  const std::string& gnuplot, int jobs);

// Locates a program like the shell would ("" when not found).
std::string find_program(const std::string& name);

// log2(v) within 1e-5 (an exponent and a polynomial of the mantissa), for
// placing values on logarithmic grids; values <= 0 give -997.
inline double fast_log2(double v) {
  if (!(v > 1e-300)) return -997;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  std::memcpy(&m, &bits, sizeof m);  // [1, 2)
  double x = m - 1;                  // a fit of log2(1 + x) on [0, 1)
  return e + x * (1.4425449 +
                  x * (-0.7181452 +
                       x * (0.4575485 + x * (-0.2779042 + x * (0.1217970 - x * 0.0258411)))));
}

// Keeps at most one point per cell of a w x h grid over the plot area, so a
// scatter plot of millions of requests is drawn from what is visible.
class Thinner {
 public:
  Thinner(double x0, double x1, bool logx, double y0, double y1, bool logy, int w = 1200,
          int h = 800);
  bool keep(double x, double y);
  // The same with x and y already on the axes' scale (fast_log2 of log axes).
  bool keep_scaled(double sx, double sy) {
    size_t c = static_cast<size_t>(cell(sy, y0_, ky_, h_)) * static_cast<size_t>(w_) +
               static_cast<size_t>(cell(sx, x0_, kx_, w_));
    if (used_[c]) return false;
    used_[c] = true;
    return true;
  }

 private:
  static int cell(double v, double lo, double k, int n) {
    double f = (v - lo) * k;
    return f <= 0 ? 0 : f >= n - 1 ? n - 1 : static_cast<int>(f);
  }
  double x0_, x1_, y0_, y1_, kx_ = 0, ky_ = 0;
  bool logx_, logy_;
  int w_, h_;
  std::vector<bool> used_;
};

}  // namespace blkrr::report
