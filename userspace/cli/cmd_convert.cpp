// blkrr convert: traces and loads between formats, with selection and
// blkreplay-style transformations. The work is in converters/convert.h.
#include <cstdio>

#include "cli/commands.h"
#include "cli/dependency_options.h"
#include "converters/convert.h"
#include "converters/dependency_graph.h"
#include "core/args.h"
#include "core/progress.h"

namespace blkrr::cli {

namespace {
Status set_fit(ConvertOptions& o, MapMode mode, std::string_view v) {
  if (o.fit) return Error(ErrorKind::kUsage, "use either --wrap or --scale, once");
  auto f = parse_fit(mode, std::string(v));
  if (!f) return f.error();
  o.fit = *f;
  return {};
}
}  // namespace

Result<int> cmd_convert(int argc, char** argv) {
  ConvertOptions o;
  std::string from, to, point = "issue", action = "D", until, split_by;
  uint64_t derive = 0, gz_level = 1;
  std::string snippet = "300", reorder = "10";
  bool quiet = false;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  ArgParser ap(
      argv[0], "IN... -o OUT [options]",
      "Convert block traces and loads between formats, select and transform them.\n"
      "Inputs are detected by content: native .blkrr traces, blkreplay loads (*.load.gz),\n"
      "blktrace captures (NAME or NAME.blktrace.N, per-CPU files merged by time),\n"
      "blkparse text, fio iologs v2/v3, MSR Cambridge CSV, the Alibaba, Tencent CBS (also\n"
      "its .tgz archives), SNIA systor'17 and K5cloud datasets. Several inputs of one format\n"
      "are read one after the other (blktrace files are merged). The output format\n"
      "follows the name of OUT (*.blkrr native, *.iolog fio v3, *.csv, *.json/*.jsonl,\n"
      "anything else a blkreplay load; .gz compresses) or --to. A summary goes to stderr.");
  ap.common_string(CommonOpt::kOutput, "output file ('-' = standard output)", &o.output, "OUT");
  bool overwrite = false;
  ap.common_flag(CommonOpt::kOverwrite, &overwrite);
  ap.opt_string(
      0, "from", "FMT",
      "input format: native, load, blktrace, blkparse, fio, msr, alibaba, tencent, systor17, "
      "k5cloud",
      &from);
  ap.opt_string(0, "to", "FMT", "output format: load, fio, csv, json, native", &to);
  ap.opt_string(0, "action", "Q|D",
                "blktrace/blkparse: requests as queued (Q) or issued (D, default)", &action);
  ap.flag(0, "skip-bad", &o.source.skip_bad,
          "skip malformed lines/events and report how many and why, instead of stopping");
  ap.common_string(CommonOpt::kDevice,
                   "keep one device: sda, /dev/sda2, 8:16; MSR: DISK or HOST:DISK; fio: FILE",
                   &o.source.device);
  ap.opt_string(0, "device-id", "ID",
                "multi-volume datasets (alibaba, tencent, systor17, k5cloud): keep the volume, "
                "device or LUN with this id",
                &o.source.device_id);
  ap.opt_string(0, "split-by", "volume",
                "multi-volume datasets: write one load per volume, -o DIR/ (DIR/volume-ID.load.gz)",
                &split_by);
  ap.opt_u64(0, "time-seed", "N",
             "seed of the rule that spreads whole-second times over their second (tencent; "
             "default 1)",
             &o.source.time_seed);
  ap.common(
      CommonOpt::kPid, "keep requests of these processes or threads (comma-separated pids)",
      [&](std::string_view v) { return parse_pid_list(v, o.select.pids); }, "LIST");
  ap.common_strings(CommonOpt::kComm, "keep requests of this task name (repeatable)",
                    &o.select.comms);
  ap.common(
      CommonOpt::kCgroup, "keep requests of these cgroup ids (comma-separated)",
      [&](std::string_view v) { return parse_u64_list(v, o.select.cgroups); }, "LIST");
  ap.removed('c', "-n COMM (task name) or --cgroup LIST");
  ap.option(0, "ops", "LIST", "keep these operations: R,W,F,D or read,write,flush,discard",
            [&](std::string_view v) { return parse_op_list(v, o.select.op_mask); });
  ap.option(0, "window", "START:DUR",
            "keep START..START+DUR (seconds or 10m, 250ms) after the first request; rebased to 0",
            [&](std::string_view v) { return parse_window(v, o.select); });
  ap.opt_string(0, "point", "issue|complete",
                "native traces: start time is the issue (default) or the completion", &point);
  ap.opt_u64(0, "repeat", "N", "repeat the input N times, each pass after the previous one",
             &o.repeat);
  ap.opt_string(0, "until", "SECONDS", "repeat the input until this output time", &until);
  ap.option(0, "slip", "EVERY:SECTORS", "every EVERY requests, shift later sectors by SECTORS",
            [&](std::string_view v) { return parse_slip(v, o.transform); });
  ap.option(0, "subst", "FROM=TO", "substitute an operation, e.g. R=W",
            [&](std::string_view v) { return parse_subst(v, o.transform); });
  ap.option(0, "spread", "F[:ALIGN[:OFF]]",
            "spread sectors by factor F, keeping ALIGN (8) alignment, plus OFF sectors",
            [&](std::string_view v) { return parse_spread(v, o.transform); });
  ap.option(0, "resize", "F[:MIN:MAX]", "scale request sizes by F, clamped to MIN..MAX sectors",
            [&](std::string_view v) { return parse_resize(v, o.transform); });
  ap.opt_double(0, "timescale", "F", "multiply start times by F (0.5 = twice as fast)",
                &o.timescale);
  ap.opt_u64(0, "derive", "N", "deal snippets heaviest-first into N outputs OUT.000 ... OUT.N-1",
             &derive);
  ap.opt_string(0, "snippet", "SECONDS", "snippet length for --derive (default 300)", &snippet);
  ap.option(0, "wrap", "SIZE|DEVICE",
            "fit positions onto a target of this size (30G) or the size of DEVICE/FILE: past "
            "its end they wrap modulo the size, as replay --wrap (its default) does on its "
            "DEVICE",
            [&](std::string_view v) { return set_fit(o, MapMode::kWrap, v); });
  ap.option(0, "scale", "SIZE|DEVICE",
            "fit positions onto a target by scaling them proportionally, as replay --scale does "
            "on its DEVICE (reads the input twice)",
            [&](std::string_view v) { return set_fit(o, MapMode::kScale, v); });
  ap.opt_string(0, "fio-file", "NAME",
                "fio output: the file the iolog targets (default the placeholder /dev/sdX, never "
                "the recorded device)",
                &o.fio_file);
  ap.opt_u64(0, "gzip-level", "N", "compression level 1..9 of .gz outputs (default 1: fastest)",
             &gz_level);
  ap.opt_string(0, "reorder-window", "SECONDS",
                "unsorted inputs (native traces, replay results) are sorted within this much "
                "trace time, and sorted ones are read this far past --window/--until (default 10)",
                &reorder);
  GraphOptions graph;
  ap.opt_string(0, "dependencies", "FILE",
                "write the dependencies inferred from IN (one line per request, issue order: "
                "parents, think time; needs completion times) to FILE; without -o only this",
                &graph.output);
  add_dependency_options(ap, graph.deps);
  ap.common_flag(CommonOpt::kQuiet, &quiet, "no progress line and no summary on stderr");
  bool verbose = false;
  ap.common_flag(CommonOpt::kVerbose, &verbose,
                 "every counter of the input in the summary, also the zero ones");
  ap.positionals("IN", &o.inputs, 1, 100000);
  ap.examples(
      "  blkrr convert prod.blkrr -o prod.load.gz              native trace to blkreplay load\n"
      "  blkrr convert sda.blktrace.0 sda.blktrace.1 -o sda.load.gz --action Q\n"
      "  blkrr convert prod.load.gz -o prod.iolog --fio-file /dev/sdX   for fio --read_iolog\n"
      "  blkrr convert prod.load.gz -o lab.iolog --fio-file /dev/sdb --wrap /dev/sdb\n"
      "  blkrr convert prod.blkrr -o mysql.csv --comm mysqld --window 10m:5m\n"
      "  blkrr convert msr/hm_0.csv.gz -d 0 -o hm0.load.gz --timescale 0.5\n"
      "  blkrr convert 2018-10-01-01.tgz --device-id 1063 -o v1063.load.gz   Tencent CBS\n"
      "  blkrr convert io_traces.csv --split-by volume -o alibaba/   one load per volume\n"
      "  blkrr convert prod.load.gz -o over.load.gz --derive 4 --snippet 300   over.000..003\n"
      "  blkrr convert app.blkrr --dependencies app.deps       inferred dependencies\n");
  auto parsed = ap.parse(argc, argv);
  if (!parsed) return parsed.error();
  if (!*parsed) return 0;

  auto usage = [&](const std::string& m) {
    return Error(ErrorKind::kUsage, m + "\nTry 'blkrr convert --help'.");
  };
  if (o.output.empty() && graph.output.empty())
    return usage("no output given (-o OUT or --dependencies FILE)");
  if (!from.empty()) {
    auto f = parse_input_format(from);
    if (!f) return usage("unknown input format '" + from + "'");
    o.source.format = *f;
  }
  if (!to.empty()) {
    auto f = parse_output_format(to);
    if (!f) return usage("unknown output format '" + to + "'");
    o.to = *f;
  }
  if (!split_by.empty() && split_by != "volume") return usage("--split-by must be 'volume'");
  o.split_by_volume = !split_by.empty();
  if (action != "Q" && action != "D") return usage("--action must be Q or D");
  o.source.blktrace_action = action[0];
  if (point == "complete")
    o.point = StartPoint::kComplete;
  else if (point != "issue")
    return usage("--point must be issue or complete");
  if (!until.empty()) {
    if (o.repeat != 1) return usage("use either --repeat or --until");
    auto u = parse_duration_ns(until);
    if (!u || *u == 0) return usage("bad --until '" + until + "'");
    o.until_ns = static_cast<int64_t>(*u);
  }
  if (derive > 1000) return usage("--derive: at most 1000 outputs");
  o.derive = static_cast<uint32_t>(derive);
  auto sn = parse_duration_ns(snippet);
  if (!sn || *sn == 0) return usage("bad --snippet '" + snippet + "'");
  o.snippet_ns = static_cast<int64_t>(*sn);
  auto rw = parse_duration_ns(reorder);
  if (!rw) return usage("bad --reorder-window '" + reorder + "'");
  o.reorder_window_ns = static_cast<int64_t>(*rw);
  if (gz_level < 1 || gz_level > 9) return usage("--gzip-level must be 1..9");
  o.gz_level = static_cast<int>(gz_level);

  o.existing = overwrite ? Existing::kReplace : Existing::kRefuse;
  if (std::string ext = unknown_output_extension(o.output);
      !ext.empty() && !o.to && !o.split_by_volume && o.output != "-")
    std::fprintf(stderr,
                 "convert: warning: -o %s: blkrr knows no format '%s'; writing a blkreplay load "
                 "(name it *.load.gz, or give --to FMT to say the format)\n",
                 o.output.c_str(), ext.c_str());
  o.progress = ProgressLine::wanted(quiet);
  if (!o.output.empty()) {
    auto s = run_convert(o);
    if (!s) return s.error();
    print_input_warnings("convert", s->warnings);
    if (!quiet) std::fputs(s->text(verbose).c_str(), stderr);
  }
  if (!graph.output.empty()) {
    graph.inputs = o.inputs;
    graph.existing = o.existing;
    graph.source = o.source;
    graph.reorder_window_ns = static_cast<uint64_t>(o.reorder_window_ns);
    auto g = infer_dependency_graph(graph);
    if (!g) return g.error();
    if (!quiet) {
      std::fprintf(stderr, "convert: dependencies of %llu requests written to %s\n",
                   static_cast<unsigned long long>(g->stats.requests()), graph.output.c_str());
      for (const auto& line : g->stats.text()) std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  return 0;
}

}  // namespace blkrr::cli
