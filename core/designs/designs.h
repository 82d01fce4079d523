// The designs built into this binary (the folders listed in
// core/index/CMakeLists.txt), and scenario loading over them: what the
// command line and the tests use. Library code takes a Registry (or
// scenario::IndexTypes) as a parameter instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/design/design.h"
#include "core/scenario/scenario.h"

namespace locus::designs {

// Every built-in design, registered on first use; read-only after.
const design::Registry& registry();

// scenario::load_scenario and parse_scenario over registry().
StatusOr<scenario::Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
StatusOr<scenario::Scenario> parse_scenario(std::string_view text, const std::string& source,
                                            const std::vector<std::string>& overrides = {});

}  // namespace locus::designs
