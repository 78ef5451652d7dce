#include "cli/convert_args.h"

#include <string>

#include "cli/dependency_options.h"
#include "core/args.h"

namespace blkrr::cli {
namespace {

// What the options say before the rules turn it into ConvertArgs.
struct RawConvertArgs {
  std::string from, to, point = "issue", action = "D", until, split_by;
  uint64_t derive = 0, gz_level = 1;
  std::string snippet = "300", reorder = "10";
  bool overwrite = false;
};

Status set_fit(ConvertOptions& o, MapMode mode, std::string_view v) {
  if (o.fit) return Error(ErrorKind::kUsage, "use either --wrap or --scale, once");
  auto f = parse_fit(mode, std::string(v));
  if (!f) return f.error();
  o.fit = *f;
  return {};
}

void add_input_options(ArgParser& ap, ConvertOptions& o, RawConvertArgs& raw) {
  ap.common_string(CommonOpt::kOutput, "output file ('-' = standard output)", &o.output, "OUT");
  ap.common_flag(CommonOpt::kOverwrite, &raw.overwrite);
  ap.opt_string(
      0, "from", "FMT",
      "input format: native, load, blktrace, blkparse, fio, msr, alibaba, tencent, systor17, "
      "k5cloud",
      &raw.from);
  ap.opt_string(0, "to", "FMT", "output format: load, fio, csv, json, native", &raw.to);
  ap.opt_string(0, "action", "Q|D",
                "blktrace/blkparse: requests as queued (Q) or issued (D, default)", &raw.action);
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
                &raw.split_by);
  ap.opt_u64(0, "time-seed", "N",
             "seed of the rule that spreads whole-second times over their second (tencent; "
             "default 1)",
             &o.source.time_seed);
}

void add_selection_options(ArgParser& ap, ConvertOptions& o, RawConvertArgs& raw) {
  ap.common(
      CommonOpt::kPid, "keep requests of these processes or threads (comma-separated pids)",
      [&o](std::string_view v) { return parse_pid_list(v, o.select.pids); }, "LIST");
  ap.common_strings(CommonOpt::kComm, "keep requests of this task name (repeatable)",
                    &o.select.comms);
  ap.common(
      CommonOpt::kCgroup, "keep requests of these cgroup ids (comma-separated)",
      [&o](std::string_view v) { return parse_u64_list(v, o.select.cgroups); }, "LIST");
  ap.removed('c', "-n COMM (task name) or --cgroup LIST");
  ap.option(0, "ops", "LIST", "keep these operations: R,W,F,D or read,write,flush,discard",
            [&o](std::string_view v) { return parse_op_list(v, o.select.op_mask); });
  ap.option(0, "window", "START:DUR",
            "keep START..START+DUR (seconds or 10m, 250ms) after the first request; rebased to 0",
            [&o](std::string_view v) { return parse_window(v, o.select); });
  ap.opt_string(0, "point", "issue|complete",
                "native traces: start time is the issue (default) or the completion", &raw.point);
  ap.opt_u64(0, "repeat", "N", "repeat the input N times, each pass after the previous one",
             &o.repeat);
  ap.opt_string(0, "until", "SECONDS", "repeat the input until this output time", &raw.until);
}

void add_transform_options(ArgParser& ap, ConvertOptions& o, RawConvertArgs& raw) {
  ap.option(0, "slip", "EVERY:SECTORS", "every EVERY requests, shift later sectors by SECTORS",
            [&o](std::string_view v) { return parse_slip(v, o.transform); });
  ap.option(0, "subst", "FROM=TO", "substitute an operation, e.g. R=W",
            [&o](std::string_view v) { return parse_subst(v, o.transform); });
  ap.option(0, "spread", "F[:ALIGN[:OFF]]",
            "spread sectors by factor F, keeping ALIGN (8) alignment, plus OFF sectors",
            [&o](std::string_view v) { return parse_spread(v, o.transform); });
  ap.option(0, "resize", "F[:MIN:MAX]", "scale request sizes by F, clamped to MIN..MAX sectors",
            [&o](std::string_view v) { return parse_resize(v, o.transform); });
  ap.opt_double(0, "timescale", "F", "multiply start times by F (0.5 = twice as fast)",
                &o.timescale);
  ap.opt_u64(0, "derive", "N", "deal snippets heaviest-first into N outputs OUT.000 ... OUT.N-1",
             &raw.derive);
  ap.opt_string(0, "snippet", "SECONDS", "snippet length for --derive (default 300)", &raw.snippet);
  ap.option(0, "wrap", "SIZE|DEVICE",
            "fit positions onto a target of this size (30G) or the size of DEVICE/FILE: past "
            "its end they wrap modulo the size, as replay --wrap (its default) does on its "
            "DEVICE",
            [&o](std::string_view v) { return set_fit(o, MapMode::kWrap, v); });
  ap.option(0, "scale", "SIZE|DEVICE",
            "fit positions onto a target by scaling them proportionally, as replay --scale does "
            "on its DEVICE (reads the input twice)",
            [&o](std::string_view v) { return set_fit(o, MapMode::kScale, v); });
}

void add_output_options(ArgParser& ap, ConvertArgs& a, RawConvertArgs& raw) {
  ap.opt_string(0, "fio-file", "NAME",
                "fio output: the file the iolog targets (default the placeholder /dev/sdX, never "
                "the recorded device)",
                &a.convert.fio_file);
  ap.opt_u64(0, "gzip-level", "N", "compression level 1..9 of .gz outputs (default 1: fastest)",
             &raw.gz_level);
  ap.opt_string(0, "reorder-window", "SECONDS",
                "unsorted inputs (native traces, replay results) are sorted within this much "
                "trace time, and sorted ones are read this far past --window/--until (default 10)",
                &raw.reorder);
  ap.opt_string(0, "dependencies", "FILE",
                "write the dependencies inferred from IN (one line per request, issue order: "
                "parents, think time; needs completion times) to FILE; without -o only this",
                &a.graph.output);
  add_dependency_options(ap, a.graph.deps);
  ap.common_flag(CommonOpt::kQuiet, &a.quiet, "no progress line and no summary on stderr");
  ap.common_flag(CommonOpt::kVerbose, &a.verbose,
                 "every counter of the input in the summary, also the zero ones");
  ap.positionals("IN", &a.convert.inputs, 1, 100000);
}

Error usage(const std::string& m) {
  return Error(ErrorKind::kUsage, m + "\nTry 'blkrr convert --help'.");
}

// An output, the formats, and the words an option takes.
Status take_words(const RawConvertArgs& raw, ConvertArgs& a) {
  ConvertOptions& o = a.convert;
  if (o.output.empty() && a.graph.output.empty())
    return usage("no output given (-o OUT or --dependencies FILE)");
  if (!raw.from.empty()) {
    auto f = parse_input_format(raw.from);
    if (!f) return usage("unknown input format '" + raw.from + "'");
    o.source.format = *f;
  }
  if (!raw.to.empty()) {
    auto f = parse_output_format(raw.to);
    if (!f) return usage("unknown output format '" + raw.to + "'");
    o.to = *f;
  }
  if (!raw.split_by.empty() && raw.split_by != "volume")
    return usage("--split-by must be 'volume'");
  o.split_by_volume = !raw.split_by.empty();
  if (raw.action != "Q" && raw.action != "D") return usage("--action must be Q or D");
  o.source.blktrace_action = raw.action[0];
  if (raw.point == "complete")
    o.point = StartPoint::kComplete;
  else if (raw.point != "issue")
    return usage("--point must be issue or complete");
  return {};
}

// Times and counts in range.
Status take_numbers(const RawConvertArgs& raw, ConvertOptions& o) {
  if (!raw.until.empty()) {
    if (o.repeat != 1) return usage("use either --repeat or --until");
    auto u = parse_duration_ns(raw.until);
    if (!u || *u == 0) return usage("bad --until '" + raw.until + "'");
    o.until_ns = static_cast<int64_t>(*u);
  }
  if (raw.derive > 1000) return usage("--derive: at most 1000 outputs");
  o.derive = static_cast<uint32_t>(raw.derive);
  auto sn = parse_duration_ns(raw.snippet);
  if (!sn || *sn == 0) return usage("bad --snippet '" + raw.snippet + "'");
  o.snippet_ns = static_cast<int64_t>(*sn);
  auto rw = parse_duration_ns(raw.reorder);
  if (!rw) return usage("bad --reorder-window '" + raw.reorder + "'");
  o.reorder_window_ns = static_cast<int64_t>(*rw);
  if (raw.gz_level < 1 || raw.gz_level > 9) return usage("--gzip-level must be 1..9");
  o.gz_level = static_cast<int>(raw.gz_level);
  return {};
}

}  // namespace

Result<ConvertArgs> parse_convert_args(int argc, char** argv) {
  ConvertArgs a;
  RawConvertArgs raw;
  for (int i = 0; i < argc; ++i) a.convert.command_line += (i ? " " : "") + std::string(argv[i]);
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
  add_input_options(ap, a.convert, raw);
  add_selection_options(ap, a.convert, raw);
  add_transform_options(ap, a.convert, raw);
  add_output_options(ap, a, raw);
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
  if (!*parsed) {
    a.help_printed = true;
    return a;
  }
  BLKRR_TRY(take_words(raw, a));
  BLKRR_TRY(take_numbers(raw, a.convert));
  a.convert.existing = raw.overwrite ? Existing::kReplace : Existing::kRefuse;
  a.graph.inputs = a.convert.inputs;
  a.graph.existing = a.convert.existing;
  a.graph.source = a.convert.source;
  a.graph.reorder_window_ns = static_cast<uint64_t>(a.convert.reorder_window_ns);
  return a;
}

}  // namespace blkrr::cli
