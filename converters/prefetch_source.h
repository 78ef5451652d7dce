// A request source read ahead on its own thread: the wrapped source's
// decompression and parsing run beside the consumer's work (convert's
// filters, formatting and output), in batches. Memory stays bounded: at most
// kPrefetchBatches batches of kPrefetchBatch requests wait.
#pragma once

#include <memory>

#include "converters/source.h"

namespace blkrr {

inline constexpr size_t kPrefetchBatch = 4096;
inline constexpr size_t kPrefetchBatches = 4;

// The same requests, counters, info and errors as `inner`, in the same order.
std::unique_ptr<RequestSource> prefetch_source(std::unique_ptr<RequestSource> inner);

}  // namespace blkrr
