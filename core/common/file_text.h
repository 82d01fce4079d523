// read_file_text: a whole file as a string, or an error naming the file and
// what it was meant to be ("the scenario file").
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace locus {

StatusOr<std::string> read_file_text(const std::string& path, std::string_view what);

}  // namespace locus
