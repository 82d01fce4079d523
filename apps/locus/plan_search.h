// `locus plan --designs A,B --selectors S,T`: one workload planned over
// several designs and selectors. Each (design, selector) pair becomes a
// scenario (the workload, run and platform of the scenario given, with the
// design's [index] and handler costs and the selector's [selector]) and a
// planner policy for the split the selector runs:
//   server_only, client_only  the static shares (as the design's model
//                             reads them: a design whose path is fixed,
//                             NessieSD say, keeps its own)
//   fixed_ratio               the best fixed split of each configuration
//   jsq                       the split the scenario's JSQ rule settles at:
//                             marginal or expected latency (the default)
//                             route towards the split that minimises the
//                             clients' mean latency, the model's p*; the
//                             paper's rule to its equilibrium
//                             (models::jsq_equilibrium_split)
// Other selectors (back-off, latency window) have no split model here and
// are refused by name.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"
#include "models/queueing/planner.h"

namespace locus::cli {

struct PlanChoice {
  std::string design;    // index.type, with :STEM of the file that gave it (NAME=FILE)
  std::string selector;  // as given to --selectors ("" when the scenario's own)
  scenario::Scenario scenario;
  models::LocalityInput input;
  models::PlanOptions options;  // the selector's split policy
  std::string policy;           // what that policy is, for the report
};

// `designs`: NAME (the scenario's own design) or NAME=SCENARIO.toml (that
// file's [index] and [platform.cpu] handler costs, the given scenario's
// workload, run and platform otherwise). Empty: the scenario's design.
// `selectors`: empty means the scenario's own selector at its best split.
StatusOr<std::vector<PlanChoice>> plan_choices(const std::string& scenario_path, const std::vector<std::string>& sets,
                                               const std::vector<std::string>& designs,
                                               const std::vector<std::string>& selectors);

}  // namespace locus::cli
