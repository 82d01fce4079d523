// Runs a scenario, given as TOML text, on the SimGrid backend with the
// scenario's seed: what the simulation tests share (tests/sim/).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/harness/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::testing {

// Runs `sc` on SimGrid with its seed; `tweak` may change the backend's
// other options.
inline StatusOr<harness::ScenarioReport> simulate(const scenario::Scenario& sc,
                                                 const std::function<void(simgrid_backend::SimOptions&)>& tweak = {}) {
  return harness::run_scenario(sc, [&tweak](const scenario::Scenario& s) {
    simgrid_backend::SimOptions o;
    o.seed = s.run.seed;
    if (tweak) tweak(o);
    return simgrid_backend::make_simgrid_runtime(s.platform, o);
  });
}

inline StatusOr<harness::ScenarioReport> simulate_scenario(std::string_view text, const std::string& source,
                                                           const std::vector<std::string>& sets = {}) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario sc, scenario::parse_scenario(text, source, sets));
  return simulate(sc);
}

}  // namespace locus::testing
