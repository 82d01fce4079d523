// Maps a scenario onto the analytic locality model's input: the server's
// cores and per-request CPU cost, the NIC's READ and verb rates at the
// scenario's sizes, the unloaded round trip over its links and PCIe, and
// the client population. Used by `locus model`, `locus plan` and the
// model-against-simulation tests.
#pragma once

#include "core/common/status.h"
#include "core/scenario/scenario.h"
#include "models/queueing/locality_model.h"

namespace locus::cli {

StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s);

// The server-side share the scenario itself runs (micro: rpc_fraction;
// pilaf: 1 in VO mode, else 0).
double scenario_server_share(const scenario::Scenario& s);

}  // namespace locus::cli
