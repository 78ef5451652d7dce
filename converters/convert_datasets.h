// The parts of `blkrr convert` that only the public multi-volume datasets
// use (--device-id, --split-by volume), kept out of the pipeline's file.
#pragma once

#include <memory>

#include "converters/convert.h"

namespace blkrr {

// Before any work: --split-by volume's exclusions; sets o.source.all_volumes.
Status check_split_options(ConvertOptions& o);
// Once the input is open: its dataset lines in the summary, and --device-id
// and --split-by refused for inputs without volumes.
Status take_dataset_info(const ConvertOptions& o, const SourceInfo& info, ConvertSummary& s);
// The sink of --split-by volume for output format f (only loads).
Result<std::unique_ptr<SplitSink>> open_volume_split(const ConvertOptions& o, const SinkOptions& so,
                                                     OutputFormat f);

}  // namespace blkrr
