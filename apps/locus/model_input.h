// Maps a scenario onto the analytic locality model's input. The design
// says what one operation does on each path (its ModelProfile, brought by
// the design's folder: core/design/model_profile.h); this adds how the
// platform serves it: the server's cores, the NIC's READ and verb rates at
// the profile's sizes, the unloaded round trip over links and PCIe, and
// the client population. Used by `locus model`, `locus plan` and the
// model-against-simulation tests.
#pragma once

#include <optional>

#include "core/common/status.h"
#include "core/design/model_profile.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"

namespace locus::cli {

// The scenario's design's profile, or an error naming a design without a
// model (and the designs that have one).
StatusOr<design::ModelProfile> model_profile_of(const scenario::Scenario& s);

// model_profile_of(s), settled where it depends on its own throughput
// (ModelProfile::at_throughput): predicted at the scenario's split, asked
// again at that throughput, until the throughput moves by less than 0.1%
// (at most 20 rounds; an error if it does not settle).
StatusOr<design::ModelProfile> settled_profile(const scenario::Scenario& s);

StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s, const design::ModelProfile& m);
StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s);

// The server-side share the scenario itself runs (a static design's or a
// fixed-ratio selector's), empty when an adaptive selector decides.
std::optional<double> scenario_server_share(const scenario::Scenario& s);

}  // namespace locus::cli
