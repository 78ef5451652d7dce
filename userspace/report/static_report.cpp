#include "report/static_report.h"

#include <algorithm>
#include <numeric>

#include "report/static_analysis.h"
#include "report/static_series.h"
#include "report/timeplot.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr uint64_t kSec = 1'000'000'000;

Status rate_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  nlohmann::json& js) {
  TimeAxis ax = plot_time_axis(data, span_s(data));
  PlotSpec iops, mbps;
  iops.name = "iops";
  iops.title = "Request rate over time, reads vs writes: look for bursts, idle gaps and shifts";
  mbps.name = "mbps";
  mbps.title = "Throughput over time, reads vs writes: look for bursts, idle gaps and shifts";
  iops.ylabel = "requests per second";
  std::vector<std::pair<std::string, Summary>> rows_iops, rows_mbps;
  std::vector<std::vector<RatePoint>> rates;
  std::vector<double> win;  // window of each input's series, seconds (1 s up to 5.5 h)
  double max_bytes = 0;
  for (const Dataset* d : data) {
    uint64_t t_max = d->samples.bounds().t_max;
    win.push_back(series_window_s(kSec, t_max));
    rates.push_back(rates_by(d->samples, kSec, t_max, [](const Sample& s) { return s.t_ns; }));
    for (const auto& p : rates.back())
      max_bytes = std::max<double>(max_bytes, std::max(p.read_bytes, p.write_bytes) / win.back());
  }
  Scale bu = byte_scale(max_bytes);
  mbps.ylabel = "throughput [" + bu.unit + "/s]";
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    const auto& r = rates[i];
    std::string name = "static-" + d.label + "-rate-1s";
    auto f = ctx.csv(name, {"t_s", "read_iops", "write_iops", "read_mibs", "write_mibs"});
    if (!f) return f.error();
    std::vector<double> io, mb;
    double w = win[i];  // values per second: counts / w
    for (const auto& p : r) {
      f->row({static_cast<double>(p.t_ns) / 1e9, p.reads / w, p.writes / w,
              p.read_bytes / kBytesPerMiB / w, p.write_bytes / kBytesPerMiB / w});
      io.push_back(static_cast<double>(p.reads + p.writes) / w);
      mb.push_back((p.read_bytes + p.write_bytes) / kBytesPerMiB / w);
    }
    BLKRR_TRY(f->close());
    if (r.empty()) continue;
    std::string pre = data.size() > 1 ? d.label + " " : "";
    mark_plot(iops, d);
    mark_plot(mbps, d);
    auto g = [&](auto get) { return per_step(r, get); };
    BLKRR_TRY(add_time_series(
        ctx, iops, ax, w, name + "-iops-plot",
        {{pre + "reads", read_color(i), g([w](const RatePoint& p) { return p.reads / w; })},
         {pre + "writes", write_color(i), g([w](const RatePoint& p) { return p.writes / w; })}}));
    BLKRR_TRY(add_time_series(ctx, mbps, ax, w, name + "-bytes-plot",
                              {{pre + "reads", read_color(i),
                                g([&](const RatePoint& p) { return p.read_bytes / bu.div / w; })},
                               {pre + "writes", write_color(i), g([&](const RatePoint& p) {
                                  return p.write_bytes / bu.div / w;
                                })}}));
    Summary si = summarize(io), sm = summarize(mb);
    js[d.label]["iops_per_second"] = to_json(si);
    js[d.label]["mibs_per_second"] = to_json(sm);
    rows_iops.emplace_back(d.label, si);
    rows_mbps.emplace_back(d.label, sm);
  }
  ctx.add_plot(sec, iops);
  ctx.add_plot(sec, mbps);
  std::string per = fmt_elapsed(*std::max_element(win.begin(), win.end())) + " windows";
  sec.blocks.push_back(summary_table("Requests per second (" + per + ")", "IOPS", rows_iops));
  sec.blocks.push_back(summary_table("Throughput per second (" + per + ")", "MiB/s", rows_mbps));
  return {};
}

// Bars of power-of-two size buckets labelled 4K, 8K, ...: reads left, writes
// right of each label.
Status size_plot(Context& ctx, Section& sec, const std::vector<const Dataset*>& data) {
  PlotSpec size;
  size.name = "size-histogram";
  size.title = "Request sizes: which sizes dominate, reads vs writes";
  size.xlabel = "request size (power-of-two bucket: 4K holds 4 KiB up to 8 KiB)";
  size.ylabel = "requests";
  size_t lo = 64, hi = 0;
  std::vector<SizeHistogram> hs;
  for (const Dataset* d : data) {
    hs.push_back(size_histogram(d->samples));
    for (const auto* h : {&hs.back().reads, &hs.back().writes})
      for (size_t b = 1; b < h->counts.size(); ++b)
        if (h->counts[b]) {
          lo = std::min(lo, b);
          hi = std::max(hi, b);
        }
  }
  double bars = 2.0 * static_cast<double>(data.size()), width = 0.8 / bars;
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    const SizeHistogram& sh = hs[i];
    std::string name = "static-" + d.label + "-sizes";
    auto f = ctx.csv(name, {"size_kib", "reads", "writes", "label"});
    if (!f) return f.error();
    for (size_t b = lo; b <= hi; ++b)
      f->text_row({fmt_num(Log2Histogram::bucket_low(b) * 0.5), std::to_string(sh.reads.counts[b]),
                   std::to_string(sh.writes.counts[b]),
                   size_label(Log2Histogram::bucket_low(b) * 512)});
    BLKRR_TRY(f->close());
    if (!f->rows()) continue;
    std::string pre = data.size() > 1 ? d.label + " " : "";
    std::string path = Context::data_path(name);
    for (int dir = 0; dir < 2; ++dir) {
      double off = -0.4 + width * (2.0 * static_cast<double>(i) + dir + 0.5);
      std::string x = "($0" + std::string(off < 0 ? "" : "+") + fmt_num(off) + ")";
      Series s{pre + (dir ? "writes" : "reads"), path,
               x + ":" + (dir ? "3" : "2") + ":(" + fmt_num(width) + ")", "boxes",
               dir ? write_color(i) : read_color(i)};
      s.fill = "solid 1 border rgb '#404040'";
      size.series.push_back(s);
    }
    mark_plot(size, d);
  }
  std::string tics;
  for (size_t b = lo; b <= hi; ++b)
    tics += (tics.empty() ? "" : ", ") + std::string("'") +
            size_label(Log2Histogram::bucket_low(b) * 512) + "' " + std::to_string(b - lo);
  size.extra = "set xtics scale 0 (" + tics +
               ")\nset xrange [-0.6:" + fmt_num(static_cast<double>(hi >= lo ? hi - lo : 0) + 0.6) +
               "]\nset yrange [0:*]\nset offsets 0, 0, graph 0.12, 0\nset grid noxtics\n";
  ctx.add_plot(sec, size);
  return {};
}

Status histogram_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data) {
  BLKRR_TRY(size_plot(ctx, sec, data));
  PlotSpec pos;
  pos.name = "position-histogram";
  pos.title = "Request positions on the device: where the load reads and writes (hot spots)";
  pos.ylabel = "requests per slice";
  std::vector<PositionHistogram> ph;
  double max_bytes = 0;
  for (const Dataset* d : data) {
    ph.push_back(position_histogram(d->samples, ctx.bins()));
    max_bytes = std::max(
        max_bytes, static_cast<double>(ph.back().slice_sectors * 512 * ph.back().reads.size()));
  }
  Scale u = byte_scale(max_bytes);
  pos.xlabel =
      "position on the device [" + u.unit + "], " + std::to_string(ctx.bins()) + " equal slices";
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    std::string name = "static-" + d.label + "-positions";
    auto g = ctx.csv(name, {"position_gib", "reads", "writes", "slice_center"});
    if (!g) return g.error();
    double slice = static_cast<double>(ph[i].slice_sectors) * 512;
    for (size_t b = 0; b < ph[i].reads.size(); ++b)
      g->row({static_cast<double>(b) * slice / (kMiB * 1024), static_cast<double>(ph[i].reads[b]),
              static_cast<double>(ph[i].writes[b]),
              (static_cast<double>(b) + 0.5) * slice / u.div});
    BLKRR_TRY(g->close());
    if (d.samples.empty()) continue;
    std::string pre = data.size() > 1 ? d.label + " " : "";
    pos.series.push_back(
        {pre + "reads", Context::data_path(name), "4:2", "histeps", read_color(i), 7, 2});
    pos.series.push_back(
        {pre + "writes", Context::data_path(name), "4:3", "histeps", write_color(i), 7, 2});
    mark_plot(pos, d);
  }
  pos.extra = "set yrange [0:*]\n";
  ctx.add_plot(sec, pos);
  return {};
}

std::string bucket_name(size_t b) {  // sectors bucket -> "4K", "1M", ...
  if (b == 0) return "0";
  double bytes = Log2Histogram::bucket_low(b) * 512.0;
  const char* unit[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return fmt_num(bytes) + unit[u];
}

Status process_views(Context& ctx, Section& sec, const Dataset& d, nlohmann::json& js) {
  if (d.procs.empty()) return {};
  auto by_t = d.sorted(SortKey::kSetPoint);
  if (!by_t) return by_t.error();
  auto dist = per_process(**by_t, d.procs.size());
  std::vector<size_t> idx(d.procs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return d.procs[a].disk_time_ns != d.procs[b].disk_time_ns
               ? d.procs[a].disk_time_ns > d.procs[b].disk_time_ns
               : d.procs[a].requests > d.procs[b].requests;
  });
  uint64_t total_dt = 0;
  for (const auto& p : d.procs) total_dt += p.disk_time_ns;
  auto f = ctx.csv("static-" + d.label + "-processes",
                   {"tgid", "comm", "requests", "bytes", "disk_time_s", "disk_time_percent"});
  auto g = ctx.csv("static-" + d.label + "-process-distributions",
                   {"tgid", "comm", "kind", "bucket_low", "count"});
  if (!f) return f.error();
  if (!g) return g.error();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<std::string>> sizes_rows, seeks_rows;
  for (size_t k = 0; k < idx.size(); ++k) {
    const ProcInfo& p = d.procs[idx[k]];
    double pct = total_dt ? 100.0 * p.disk_time_ns / total_dt : 0;
    std::string comm;
    for (char c : p.comm) comm += (c == ',' || c == '\n') ? '_' : c;
    f->text_row({std::to_string(p.tgid), comm, std::to_string(p.requests), std::to_string(p.bytes),
                 fmt_num(p.disk_time_ns / 1e9), fmt_num(pct)});
    const auto& ds = dist[idx[k]];
    for (int kind = 0; kind < 2; ++kind) {
      const Log2Histogram& h = kind ? ds.seeks : ds.sizes;
      for (size_t b = 0; b < h.counts.size(); ++b)
        if (h.counts[b])
          g->text_row({std::to_string(p.tgid), comm, kind ? "seek_sectors" : "size_sectors",
                       std::to_string(Log2Histogram::bucket_low(b)), std::to_string(h.counts[b])});
    }
    if (k < 30)
      rows.push_back({std::to_string(p.tgid), p.comm, std::to_string(p.requests),
                      fmt_short(p.bytes / kMiB), fmt_short(p.disk_time_ns / 1e9), fmt_short(pct)});
    if (k < 10) {
      auto render = [&](const Log2Histogram& h) {
        std::string cells;
        for (size_t b = 0; b <= h.last_used(); ++b)
          if (h.counts[b])
            cells +=
                (cells.empty() ? "" : "  ") + bucket_name(b) + ":" + std::to_string(h.counts[b]);
        return cells;
      };
      sizes_rows.push_back({std::to_string(p.tgid), p.comm, render(ds.sizes)});
      seeks_rows.push_back({std::to_string(p.tgid), p.comm, render(ds.seeks)});
    }
    nlohmann::json pj = {{"tgid", p.tgid},
                         {"comm", p.comm},
                         {"requests", p.requests},
                         {"bytes", p.bytes},
                         {"disk_time_s", p.disk_time_ns / 1e9}};
    js[d.label]["processes"].push_back(pj);
  }
  BLKRR_TRY(f->close());
  BLKRR_TRY(g->close());
  sec.blocks.emplace_back(
      table(d.label + ": processes by disk time (top 30 of " + std::to_string(d.procs.size()) + ")",
            {"tgid", "comm", "requests", "MiB", "disk time [s]", "% disk time"}, rows),
      Question::kWho);
  sec.blocks.emplace_back(table(d.label + ": request sizes per process (bucket lower bound: count)",
                                {"tgid", "comm", "sizes"}, sizes_rows),
                          Question::kWho);
  sec.blocks.emplace_back(table(d.label + ": seek distance per process, bytes from the previous "
                                          "request's end (bucket lower bound: count)",
                                {"tgid", "comm", "seek distances"}, seeks_rows),
                          Question::kWho);
  return {};
}

}  // namespace

Status add_static(Context& ctx, const std::vector<const Dataset*>& data) {
  if (data.empty()) return {};
  Section& sec =
      ctx.section("Static analysis (where and when the load touches the disk)", Question::kHowMuch);
  nlohmann::json& js = ctx.json()["static"];
  std::vector<std::vector<std::string>> rows;
  for (const Dataset* d : data) {
    const SampleBounds& b = d->samples.bounds();
    uint64_t reads = b.reads, rb = b.read_bytes, wb = b.write_bytes, tmax = b.empty_t_max();
    uint64_t n = b.count;
    js[d->label]["kind"] = kind_name(d->kind);
    js[d->label]["requests"] = n;
    js[d->label]["reads"] = reads;
    js[d->label]["writes"] = n - reads;
    js[d->label]["read_bytes"] = rb;
    js[d->label]["write_bytes"] = wb;
    js[d->label]["other_requests"] = d->other_requests;
    js[d->label]["duration_s"] = tmax / 1e9;
    rows.push_back({d->label, kind_name(d->kind), std::to_string(n), std::to_string(reads),
                    std::to_string(n - reads), fmt_short(rb / kMiB), fmt_short(wb / kMiB),
                    fmt_short(tmax / 1e9), fmt_short(tmax ? n / (tmax / 1e9) : 0.0),
                    std::to_string(d->other_requests)});
  }
  sec.blocks.push_back(table("Inputs",
                             {"input", "kind", "requests", "reads", "writes", "read MiB",
                              "written MiB", "duration [s]", "mean IOPS", "other requests"},
                             rows));
  BLKRR_TRY(rate_plots(ctx, sec, data, js));
  BLKRR_TRY(working_set_plots(ctx, sec, data, js));
  BLKRR_TRY(seek_plots(ctx, sec, data, js));
  BLKRR_TRY(histogram_plots(ctx, sec, data));
  for (const Dataset* d : data) BLKRR_TRY(process_views(ctx, sec, *d, js));
  for (const Dataset* d : data) d->drop_sorted(SortKey::kSetPoint);
  return {};
}

}  // namespace blkrr::report
