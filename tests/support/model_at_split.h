// The analytic model of a scenario at the split its own configuration runs
// (a static design's or a fixed selector's): the design's profile, the
// locality model's input and its prediction, as the model-against-
// simulation tests compare them with the simulator.
#pragma once

#include <string>

#include "apps/locus/model_input.h"
#include "core/common/status.h"
#include "models/queueing/locality_model.h"

namespace locus::testing {

struct ModelAtSplit {
  design::ModelProfile profile;
  models::LocalityInput input;
  models::LocalityPrediction prediction;
};

inline StatusOr<ModelAtSplit> model_at_scenario_split(const scenario::Scenario& sc) {
  ModelAtSplit m;
  LOCUS_ASSIGN_OR_RETURN(m.profile, cli::settled_profile(sc));
  LOCUS_ASSIGN_OR_RETURN(m.input, cli::locality_input_from(sc, m.profile));
  if (!m.profile.scenario_server_share) {
    return invalid_argument(sc.source + ": the scenario's selector decides its split at run time");
  }
  LOCUS_ASSIGN_OR_RETURN(m.prediction, models::predict_split(m.input, *m.profile.scenario_server_share));
  return m;
}

}  // namespace locus::testing
