#include "report/report.h"
#include "core/io_guard.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "report/compare_report.h"
#include "core/json_doc.h"
#include "core/units.h"
#include "core/version.h"
#include "report/context.h"
#include "report/dynamic_report.h"
#include "report/dependency_report.h"
#include "report/html.h"
#include "report/static_report.h"
#include "report/timing.h"

namespace blkrr::report {

namespace {

std::string saved_name(const Dataset& d) {
  return "data/" + d.label + ".requests.csv.gz";
}

// The timing of every input with completions or delays, once for all sections;
// the in-flight profile in the dynamic plots' bins.
Status compute_timings(Context& ctx, const std::vector<const Dataset*>& all,
                       const std::vector<const Dataset*>& dyn) {
  uint64_t bucket = dynamic_bucket_ns(dyn);
  for (const Dataset* d : all) {
    if (!d->has_latency() && !d->has_delay()) continue;
    auto t = timing_of(*d, bucket);
    if (!t) return t.error().context("analysing " + d->path);
    ctx.set_timing(*d, std::move(*t));
  }
  return {};
}

Result<ReportOutcome> run(const std::vector<Dataset>& data, const ReportOptions& o, bool save) {
  if (data.empty())
    return Error(ErrorKind::kUsage, "nothing to report: give loads, traces or replay results");
  if (o.compare && data.size() < 2)
    return Error(ErrorKind::kUsage, "--compare needs the original and at least one replay result");
  BLKRR_TRY(make_directories(o.out_dir + "/data"));
  BLKRR_TRY(make_directories(o.out_dir + "/plots"));
  std::set<std::string> labels;
  for (const auto& d : data)
    if (!labels.insert(d.label).second)
      return Error(ErrorKind::kUsage,
                   "two inputs are both labelled '" + d.label +
                       "'; give each input its own label with -l NAME (--label, one per input "
                       "in order, e.g. -l before -l after)");
  Context ctx(o.out_dir, o.bins);
  nlohmann::json& js = ctx.json();
  js["schema"] = schema_tag(kSchemaReport);
  js["tool"] = "blkrr report";
  js["version"] = version();
  js["options"] = {{"static", o.want_static},
                   {"dynamic", o.want_dynamic},
                   {"compare", o.compare},
                   {"bins", o.bins}};
  for (const auto& d : data) {
    if (save) BLKRR_TRY(save_dataset(d, o.out_dir + "/" + saved_name(d)));
    js["inputs"].push_back({{"label", d.label},
                            {"path", d.path},
                            {"kind", kind_name(d.kind)},
                            {"requests", d.samples.size()},
                            {"fake", d.fake},
                            {"saved", saved_name(d)}});
  }
  bool both = !o.want_static && !o.want_dynamic;
  std::vector<const Dataset*> all, stat, dyn;
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset* d = &data[i];
    all.push_back(d);
    bool is_original = o.compare && i == 0;
    if (o.want_static || (both && (d->kind != DataKind::kReplay || is_original))) stat.push_back(d);
    if ((o.want_dynamic || both) && !is_original) dyn.push_back(d);
  }
  BLKRR_TRY(compute_timings(ctx, all, dyn));
  if (o.compare)
    BLKRR_TRY(add_compare(ctx, data[0], std::vector<const Dataset*>(all.begin() + 1, all.end())));
  BLKRR_TRY(add_dynamic(ctx, dyn));
  for (const Dataset* d : all) d->drop_sorted();  // at most two sorted copies at a time
  BLKRR_TRY(add_static(ctx, stat));
  BLKRR_TRY(add_dependencies(ctx, stat));
  for (const Dataset* d : all) {
    Status st = d->samples.status();
    if (!st) return st.error().context("reporting " + d->path);
  }

  auto render = render_plots(o.out_dir, ctx.plots(), o.gnuplot, o.jobs);
  if (!render) return render.error();
  js["gnuplot"] = {{"ran", render->ran},
                   {"plots", ctx.plots().size()},
                   {"drawn", render->produced},
                   {"message", render->message}};
  for (const auto& p : ctx.plots()) js["plots"].push_back("plots/" + p.name + ".png");
  auto summary = executive_summary(ctx, all, o.compare, js["summary"]);
  if (!summary) return summary.error();
  for (const Dataset* d : all) d->drop_sorted();
  js["method"] = method_note(ctx, all);
  BLKRR_TRY(write_html(ctx, all, *render, o.command_line, *summary));
  std::string jpath = o.out_dir + "/report.json";
  BLKRR_TRY(write_file_atomic(
      jpath, js.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  ReportOutcome out;
  out.plots = ctx.plots().size();
  out.render = *render;
  out.index = o.out_dir + "/index.html";
  return out;
}

bool same_inode(const struct stat& a, const std::string& path) {
  struct stat b;
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string parent_of(const std::string& path) {
  size_t s = path.rfind('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : path.substr(0, s);
}

}  // namespace

Status check_report_dir(const std::string& dir, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& also, Existing existing) {
  struct stat d;
  // Created by the report with its missing parents; a new directory holds no input.
  if (::stat(dir.c_str(), &d) != 0) return check_can_make_directories(dir, "-o");
  if (!S_ISDIR(d.st_mode)) return Error(ErrorKind::kUsage, "-o " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return Error::system("-o " + dir + " is not writable", errno,
                         "choose a directory you can write to")
        .as(ErrorKind::kUsage);
  std::vector<std::string> owned_dirs = {dir + "/data", dir + "/plots"}, files,
                           names = {"index.html", "report.json"};
  names.insert(names.end(), also.begin(), also.end());
  for (const auto& f : names) files.emplace_back(dir + "/").append(f);
  for (const auto& in : inputs) {
    struct stat st, p;
    if (in == "-" || ::stat(in.c_str(), &st) != 0) continue;
    for (const auto& sub : owned_dirs)
      if (::stat(parent_of(in).c_str(), &p) == 0 && same_inode(p, sub))
        return Error(ErrorKind::kUsage,
                     strfmt("the input %s is in %s, whose files the report writes and removes; "
                            "move it or choose another -o directory",
                            in.c_str(), sub.c_str()));
    for (const auto& f : files)
      if (same_inode(st, f))
        return Error(ErrorKind::kUsage,
                     strfmt("-o %s would replace the input %s (%s); choose another directory",
                            dir.c_str(), in.c_str(), f.c_str()));
  }
  return refuse_existing_in(dir, names, "-o", existing);
}

Result<ReportOutcome> make_report(const std::vector<Dataset>& data, const ReportOptions& o) {
  return run(data, o, true);
}

Result<ReportOutcome> rereport(ReportOptions o) {
  std::string jpath = o.out_dir + "/report.json";
  std::ifstream jf(jpath);
  if (!jf)
    return Error(ErrorKind::kNotFound, "no earlier report in " + o.out_dir + " (" + jpath +
                                           " is missing): give the inputs to report on");
  nlohmann::json js = nlohmann::json::parse(jf, nullptr, false);
  if (js.is_discarded() || !js.contains("inputs") || !js["inputs"].is_array())
    return Error(ErrorKind::kBadInput,
                 jpath + " is not a blkrr report summary; give the inputs again");
  if (!o.want_static && !o.want_dynamic && !o.compare && js.contains("options")) {
    const auto& opt = js["options"];
    o.want_static = opt.value("static", false);
    o.want_dynamic = opt.value("dynamic", false);
    o.compare = opt.value("compare", false);
  }
  std::vector<Dataset> data;
  for (const auto& in : js["inputs"]) {
    std::string saved = in.value("saved", "");
    if (saved.empty() || saved.find("..") != std::string::npos)
      return Error(ErrorKind::kBadInput,
                   jpath + ": an input has no saved data; give the inputs again");
    auto d = load_saved_dataset(o.out_dir + "/" + saved);
    if (!d) return d.error();
    data.push_back(std::move(*d));
  }
  return run(data, o, false);
}

}  // namespace blkrr::report
