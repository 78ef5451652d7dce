// The report's index.html: every plot (embedded as data: URIs, so the file
// stands alone) with the summary tables of its section.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "report/context.h"
#include "report/dataset.h"
#include "report/plot.h"

namespace blkrr::report {

std::string base64(const std::string& bytes);

Status write_html(const Context& ctx, const std::vector<const Dataset*>& inputs,
                  const RenderResult& render, const std::string& command_line);

}  // namespace blkrr::report
