#include "report/static_report.h"

#include <algorithm>
#include <numeric>

#include "report/static_analysis.h"

namespace blkrr::report {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kSecMiB = 512.0 / kMiB;  // sectors -> MiB

std::string line_style(uint64_t points) {
  return points < 60 ? "linespoints" : "lines";
}

Status working_set_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                         const std::vector<TimeOrder>& order, nlohmann::json& js) {
  for (int w = 0; w <= 4; ++w) {
    bool cumulative = w == 4;
    uint64_t win = cumulative ? 1 : kStaticWindows[w];
    std::string tag = cumulative ? "cumulative" : std::to_string(win) + "s";
    PlotSpec lin, log;
    lin.name = "ws-" + tag + "-lin";
    lin.title = cumulative ? "Cumulative working set (distinct data touched since the start)"
                           : "Working set per " + std::to_string(win) + " s window";
    lin.xlabel = "time [s]";
    lin.ylabel = "working set [MiB]";
    for (size_t i = 0; i < data.size(); ++i) {
      const Dataset& d = *data[i];
      auto ws = cumulative ? cumulative_working_set(order[i], win * 1'000'000'000)
                           : working_set(order[i], win * 1'000'000'000);
      std::string name = "static-" + d.label + "-ws-" + tag;
      auto f = ctx.csv(name, {"t_s", "all_mib", "reads_mib", "writes_mib"});
      if (!f) return f.error();
      for (const auto& p : ws)
        f->row({static_cast<double>(p.t_ns) / 1e9, p.all * kSecMiB, p.reads * kSecMiB,
                p.writes * kSecMiB});
      BLKRR_TRY(f->close());
      if (ws.empty()) continue;
      std::string st = line_style(ws.size());
      std::string pre = data.size() > 1 ? d.label + " " : "";
      lin.series.push_back({pre + "all", Context::data_path(name), "1:2", st, neutral_color(i)});
      lin.series.push_back({pre + "reads", Context::data_path(name), "1:3", st, read_color(i)});
      lin.series.push_back({pre + "writes", Context::data_path(name), "1:4", st, write_color(i)});
      mark_plot(lin, d);
      if (cumulative)
        js[d.label]["working_set_total_mib"] = ws.back().all * kSecMiB;
      else {
        double mx = 0;
        for (const auto& p : ws) mx = std::max(mx, p.all * kSecMiB);
        js[d.label]["working_set_max_mib"][tag] = mx;
      }
    }
    log = lin;
    log.name = "ws-" + tag + "-log";
    log.title += " (log scale)";
    log.logy = true;
    ctx.add_plot(sec, lin);
    ctx.add_plot(sec, log);
  }
  return {};
}

Status seek_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  const std::vector<TimeOrder>& order, nlohmann::json& js) {
  PlotSpec turns;
  turns.name = "turns";
  turns.title = "Turns: backward seeks per second";
  turns.xlabel = "time [s]";
  turns.ylabel = "backward seeks [% of requests]";
  for (uint64_t win : kStaticWindows) {
    std::string tag = std::to_string(win) + "s";
    PlotSpec sum, avg;
    sum.name = "seek-sum-" + tag;
    sum.title = "Sum of seek distances per " + tag + " window";
    sum.xlabel = avg.xlabel = "time [s]";
    sum.ylabel = "seek distance [sectors of 512 B]";
    avg.name = "seek-avg-" + tag;
    avg.title = "Average seek distance per " + tag + " window";
    avg.ylabel = "average seek distance [sectors of 512 B]";
    for (size_t i = 0; i < data.size(); ++i) {
      const Dataset& d = *data[i];
      auto sk = seek_distance(order[i], win * 1'000'000'000);
      std::string name = "static-" + d.label + "-seek-" + tag;
      auto f = ctx.csv(
          name, {"t_s", "seeks", "backward", "sum_sectors", "avg_sectors", "backward_percent"});
      if (!f) return f.error();
      uint64_t seeks = 0, back = 0, total = 0;
      for (const auto& p : sk) {
        f->row({static_cast<double>(p.t_ns) / 1e9, static_cast<double>(p.seeks),
                static_cast<double>(p.backward), static_cast<double>(p.sum), p.avg(),
                p.turns_percent()});
        seeks += p.seeks;
        back += p.backward;
        total += p.sum;
      }
      BLKRR_TRY(f->close());
      if (sk.empty()) continue;
      std::string st = line_style(sk.size());
      std::string path = Context::data_path(name);
      sum.series.push_back({d.label, path, "1:4", st, neutral_color(i)});
      avg.series.push_back({d.label, path, "1:5", st, neutral_color(i)});
      mark_plot(sum, d);
      mark_plot(avg, d);
      if (win == 1) {
        turns.series.push_back({d.label, path, "1:6", st, neutral_color(i)});
        mark_plot(turns, d);
        js[d.label]["seek_avg_sectors"] = seeks ? static_cast<double>(total) / seeks : 0.0;
        js[d.label]["backward_seek_percent"] = seeks ? 100.0 * back / seeks : 0.0;
      }
    }
    ctx.add_plot(sec, sum);
    ctx.add_plot(sec, avg);
  }
  ctx.add_plot(sec, turns);
  return {};
}

Status rate_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  nlohmann::json& js) {
  PlotSpec iops, mbps;
  iops.name = "iops";
  iops.title = "Requests per second by direction";
  mbps.name = "mbps";
  mbps.title = "Throughput by direction";
  iops.xlabel = mbps.xlabel = "time [s]";
  iops.ylabel = "IOPS";
  mbps.ylabel = "MB/s (10^6 bytes)";
  std::vector<std::pair<std::string, Summary>> rows_iops, rows_mbps;
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    auto r = rates_by(d.samples, 1'000'000'000, [](const Sample& s) { return s.t_ns; });
    std::string name = "static-" + d.label + "-rate-1s";
    auto f = ctx.csv(name, {"t_s", "read_iops", "write_iops", "read_mbs", "write_mbs"});
    if (!f) return f.error();
    std::vector<double> io, mb;
    for (const auto& p : r) {
      f->row({static_cast<double>(p.t_ns) / 1e9, static_cast<double>(p.reads),
              static_cast<double>(p.writes), p.read_bytes / 1e6, p.write_bytes / 1e6});
      io.push_back(static_cast<double>(p.reads + p.writes));
      mb.push_back((p.read_bytes + p.write_bytes) / 1e6);
    }
    BLKRR_TRY(f->close());
    if (r.empty()) continue;
    std::string path = Context::data_path(name), st = line_style(r.size());
    std::string pre = data.size() > 1 ? d.label + " " : "";
    iops.series.push_back({pre + "reads", path, "1:2", st, read_color(i)});
    iops.series.push_back({pre + "writes", path, "1:3", st, write_color(i)});
    mbps.series.push_back({pre + "reads", path, "1:4", st, read_color(i)});
    mbps.series.push_back({pre + "writes", path, "1:5", st, write_color(i)});
    mark_plot(iops, d);
    mark_plot(mbps, d);
    Summary si = summarize(io), sm = summarize(mb);
    js[d.label]["iops_per_second"] = to_json(si);
    js[d.label]["mbs_per_second"] = to_json(sm);
    rows_iops.emplace_back(d.label, si);
    rows_mbps.emplace_back(d.label, sm);
  }
  ctx.add_plot(sec, iops);
  ctx.add_plot(sec, mbps);
  sec.blocks.push_back(summary_table("Requests per second (1 s windows)", "IOPS", rows_iops));
  sec.blocks.push_back(summary_table("Throughput per second (1 s windows)", "MB/s", rows_mbps));
  return {};
}

Status histogram_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data) {
  PlotSpec size, pos;
  size.name = "size-histogram";
  size.title = "Request sizes";
  size.xlabel = "request size [KiB], power-of-two buckets (lower bound)";
  size.ylabel = "requests";
  size.logx = true;
  pos.name = "position-histogram";
  pos.title = "Request positions";
  pos.xlabel = "position on the device [GiB]";
  pos.ylabel = "requests";
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    auto sh = size_histogram(d.samples);
    std::string name = "static-" + d.label + "-sizes";
    auto f = ctx.csv(name, {"size_kib", "reads", "writes"});
    if (!f) return f.error();
    size_t last = std::max(sh.reads.last_used(), sh.writes.last_used());
    for (size_t b = 1; b <= last; ++b)
      f->row({Log2Histogram::bucket_low(b) * 0.5, static_cast<double>(sh.reads.counts[b]),
              static_cast<double>(sh.writes.counts[b])});
    BLKRR_TRY(f->close());
    std::string pre = data.size() > 1 ? d.label + " " : "";
    if (f->rows()) {
      size.series.push_back(
          {pre + "reads", Context::data_path(name), "1:2", "linespoints", read_color(i)});
      size.series.push_back(
          {pre + "writes", Context::data_path(name), "1:3", "linespoints", write_color(i)});
      mark_plot(size, d);
    }
    auto ph = position_histogram(d.samples, ctx.bins());
    name = "static-" + d.label + "-positions";
    auto g = ctx.csv(name, {"position_gib", "reads", "writes"});
    if (!g) return g.error();
    for (size_t b = 0; b < ph.reads.size(); ++b)
      g->row({static_cast<double>(b * ph.slice_sectors) * 512 / (kMiB * 1024),
              static_cast<double>(ph.reads[b]), static_cast<double>(ph.writes[b])});
    BLKRR_TRY(g->close());
    if (!d.samples.empty()) {
      pos.series.push_back(
          {pre + "reads", Context::data_path(name), "1:2", "steps", read_color(i)});
      pos.series.push_back(
          {pre + "writes", Context::data_path(name), "1:3", "steps", write_color(i)});
      mark_plot(pos, d);
    }
  }
  ctx.add_plot(sec, size);
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

Status process_views(Context& ctx, Section& sec, const Dataset& d, const TimeOrder& order,
                     nlohmann::json& js) {
  if (d.procs.empty()) return {};
  auto dist = per_process(order, d.procs.size());
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
  sec.blocks.push_back(
      table(d.label + ": processes by disk time (top 30 of " + std::to_string(d.procs.size()) + ")",
            {"tgid", "comm", "requests", "MiB", "disk time [s]", "% disk time"}, rows));
  sec.blocks.push_back(table(d.label + ": request sizes per process (bucket lower bound: count)",
                             {"tgid", "comm", "sizes"}, sizes_rows));
  sec.blocks.push_back(table(d.label + ": seek distance per process, bytes from the previous "
                                       "request's end (bucket lower bound: count)",
                             {"tgid", "comm", "seek distances"}, seeks_rows));
  return {};
}

}  // namespace

Status add_static(Context& ctx, const std::vector<const Dataset*>& data) {
  if (data.empty()) return {};
  Section& sec = ctx.section("Static analysis (where and when the load touches the disk)");
  nlohmann::json& js = ctx.json()["static"];
  std::vector<TimeOrder> order;
  std::vector<std::vector<std::string>> rows;
  for (const Dataset* d : data) {
    order.emplace_back(d->samples);
    uint64_t reads = 0, rb = 0, wb = 0, tmax = 0;
    for (const auto& s : d->samples) {
      reads += !s.write();
      (s.write() ? wb : rb) += s.bytes();
      tmax = std::max(tmax, s.t_ns);
    }
    uint64_t n = d->samples.size();
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
  BLKRR_TRY(working_set_plots(ctx, sec, data, order, js));
  BLKRR_TRY(seek_plots(ctx, sec, data, order, js));
  BLKRR_TRY(histogram_plots(ctx, sec, data));
  for (size_t i = 0; i < data.size(); ++i)
    BLKRR_TRY(process_views(ctx, sec, *data[i], order[i], js));
  return {};
}

}  // namespace blkrr::report
