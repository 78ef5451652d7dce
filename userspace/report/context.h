// What the report sections share: the output directory, the plots and HTML
// blocks collected so far, and the JSON summary.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/stats.h"
#include "report/csv.h"
#include "report/dataset.h"
#include "report/plot.h"
#include "report/timing.h"

namespace blkrr::report {

// The question a table or plot answers; index.html groups them by it (the
// fidelity of a replay on top, then how much, how fast, how late, who).
enum class Question { kSection, kFidelity, kHowMuch, kHowFast, kHowLate, kWho };

// An HTML fragment (a table, a note) and its question (kSection: its section's).
struct Block {
  Block(std::string h, Question q = Question::kSection) : html(std::move(h)), question(q) {}
  std::string html;
  Question question;
};

struct Section {
  std::string title;
  Question question;               // of its blocks and plots unless they say otherwise
  std::vector<Block> blocks;       // in order
  std::vector<std::string> plots;  // plot names, in order
};

class Context {
 public:
  Context(std::string dir, size_t bins) : dir_(std::move(dir)), bins_(bins) {}

  const std::string& dir() const { return dir_; }
  size_t bins() const { return bins_; }
  // Creates DIR/data/NAME.csv; the name is recorded in the JSON manifest.
  Result<CsvFile> csv(const std::string& name, const std::vector<std::string>& columns);
  static std::string data_path(const std::string& name) { return "data/" + name + ".csv"; }

  // Created on first use, kept in order.
  Section& section(const std::string& title, Question q);
  void add_plot(Section& s, PlotSpec p);
  const std::vector<PlotSpec>& plots() const { return plots_; }
  const std::vector<Section>& sections() const { return sections_; }
  nlohmann::json& json() { return json_; }
  const nlohmann::json& json() const { return json_; }
  // Each input's timing (inputs with completions or delays), computed once.
  const Timing* timing(const Dataset& d) const {
    auto it = timings_.find(&d);
    return it == timings_.end() ? nullptr : &it->second;
  }
  void set_timing(const Dataset& d, Timing t) { timings_.insert_or_assign(&d, std::move(t)); }

 private:
  std::map<const Dataset*, Timing> timings_;
  std::string dir_;
  size_t bins_;
  std::vector<PlotSpec> plots_;
  std::vector<Section> sections_;
  nlohmann::json json_ = nlohmann::json::object();
};

// HTML helpers.
std::string fmt_short(double v);  // %.6g, for tables
std::string html_escape(const std::string& s);
// A table of summaries: one row per (name, summary), values scaled as given.
std::string summary_table(const std::string& caption, const std::string& unit,
                          const std::vector<std::pair<std::string, Summary>>& rows);
std::string table(const std::string& caption, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);
std::string note(const std::string& text, bool warn = false);

// Notes shown on every plot of a dataset (FAKE stamp, wraparound factor).
void mark_plot(PlotSpec& p, const Dataset& d);

}  // namespace blkrr::report
