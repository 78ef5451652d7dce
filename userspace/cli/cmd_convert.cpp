// blkrr convert: traces and loads between formats, with selection and
// blkreplay-style transformations. The work is in converters/convert.h.
#include <cstdio>

#include "cli/commands.h"
#include "cli/convert_args.h"
#include "core/progress.h"

namespace blkrr::cli {

Result<int> run_convert_command(ConvertArgs a) {
  ConvertOptions& o = a.convert;
  if (std::string ext = unknown_output_extension(o.output);
      !ext.empty() && !o.to && !o.split_by_volume && o.output != "-")
    std::fprintf(stderr,
                 "convert: warning: -o %s: blkrr knows no format '%s'; writing a blkreplay load "
                 "(name it *.load.gz, or give --to FMT to say the format)\n",
                 o.output.c_str(), ext.c_str());
  o.progress = ProgressLine::wanted(a.quiet);
  if (!o.output.empty()) {
    auto s = run_convert(o);
    if (!s) return s.error();
    print_input_warnings("convert", s->warnings);
    if (!a.quiet) std::fputs(s->text(a.verbose).c_str(), stderr);
  }
  if (!a.graph.output.empty()) {
    auto g = infer_dependency_graph(a.graph);
    if (!g) return g.error();
    if (!a.quiet) {
      std::fprintf(stderr, "convert: dependencies of %llu requests written to %s\n",
                   static_cast<unsigned long long>(g->stats.requests()), a.graph.output.c_str());
      for (const auto& line : g->stats.text()) std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  return 0;
}

Result<int> cmd_convert(int argc, char** argv) {
  auto a = parse_convert_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_convert_command(std::move(*a));
}

}  // namespace blkrr::cli
