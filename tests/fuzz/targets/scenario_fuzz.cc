// Fuzz target: the scenario loader (core/scenario/scenario_toml.cc through
// designs::parse_scenario, with every built-in design's [index] parser),
// including --set overrides. Input: the TOML text, then optionally NUL-
// separated --set specs ("key=value"), as `locus sim file --set k=v ...`
// passes them. Every failure must be a Status (a file, line and key), never
// a crash, an exception or an abort.
#include <string>
#include <vector>

#include "core/designs/designs.h"
#include "tests/fuzz/support/input.h"

using namespace locus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string_view text = all.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = all.substr(nul + 1);
    while (overrides.size() < 8) {
      const size_t next = rest.find('\0');
      overrides.emplace_back(rest.substr(0, next));
      if (next == std::string_view::npos) break;
      rest = rest.substr(next + 1);
    }
  }
  auto sc = designs::parse_scenario(text, "fuzz.toml", overrides);
  if (!sc.is_ok()) {
    FUZZ_CHECK(!sc.status().message().empty(), "an error without a message");
  }
  return 0;
}
