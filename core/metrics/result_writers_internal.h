// Helpers shared by the RunResult writers; not part of the metrics API.
#pragma once

#include <string>

#include "core/common/status.h"

namespace locus::metrics::internal {

// Replaces the file at `path` with `text`; the Status names the path.
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace locus::metrics::internal
