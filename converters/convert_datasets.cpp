#include "converters/convert_datasets.h"

namespace blkrr {

Status check_split_options(ConvertOptions& o) {
  if (!o.split_by_volume) return {};
  if (o.output == "-" || o.derive || o.repeat != 1 || o.until_ns || o.fit)
    return Error(
        ErrorKind::kUsage,
        "--split-by volume writes files into the directory -o DIR/; it does not combine with "
        "-o -, --derive, --repeat, --until, --wrap or --scale");
  o.source.all_volumes = true;
  return {};
}

Status take_dataset_info(const ConvertOptions& o, const SourceInfo& info, ConvertSummary& s) {
  s.dataset = info.dataset;
  s.time_resolution = info.time_resolution;
  s.assumptions = info.assumptions;
  if (!s.dataset.empty()) return {};
  const std::string which =
      " input has no volume ids (they apply to alibaba, tencent, systor17 and k5cloud inputs)";
  if (!o.source.device_id.empty())
    return Error(ErrorKind::kUsage,
                 "--device-id: a " + s.input_format + which + "; --device selects devices");
  if (o.split_by_volume)
    return Error(ErrorKind::kUsage, "--split-by volume: a " + s.input_format + which);
  return {};
}

Result<std::unique_ptr<SplitSink>> open_volume_split(const ConvertOptions& o, const SinkOptions& so,
                                                     OutputFormat f) {
  if (f != OutputFormat::kLoad)
    return Error(ErrorKind::kUsage,
                 "--split-by volume writes blkreplay loads (volume-ID.load.gz), not " +
                     std::string(output_format_name(f)));
  SplitOptions sp;
  sp.dir = o.output;
  while (sp.dir.size() > 1 && sp.dir.back() == '/') sp.dir.pop_back();
  sp.preamble = so.preamble;
  sp.gz_level = o.gz_level;
  sp.max_open = o.split_max_open;
  sp.existing = o.existing;
  sp.buffer_bytes = o.split_buffer_bytes;
  sp.inputs = o.inputs;
  return SplitSink::create(sp);
}

}  // namespace blkrr
