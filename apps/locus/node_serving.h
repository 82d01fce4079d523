// `locus serve --node K`: one server machine of a scenario per process, as
// a production deployment runs one server per machine. Machine K's
// endpoints take the cluster file's entries K x E to K x E + E - 1 (E: the
// design's endpoints per machine, one for most designs) and listen here;
// every other entry is a peer, served by its own `locus serve --node`. The
// runner still sets up and loads every machine (RunOptions::serve_machine),
// the others on shadows, so designs whose load spans servers lay out the
// same memory in every process (docs/deployment.md says which do).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "backends/verbs/cluster_config.h"
#include "backends/verbs/verbs_runtime.h"
#include "core/design/index_driver.h"
#include "core/scenario/scenario.h"

namespace locus::cli {

struct NodePlan {
  // The cluster entries that listen here: [listen_first, listen_end);
  // without --node all of them.
  uint32_t listen_first = 0;
  uint32_t listen_end = UINT32_MAX;
  std::vector<NodeId> peers;  // every other entry the scenario uses
};

// Checks --node `node` against the scenario and the cluster file and says
// which entries are its own and which its peers': an error names --node's
// range, a cluster file with too few entries, and a peer without a port.
StatusOr<NodePlan> plan_node(const scenario::Scenario& s, const verbs::ClusterConfig& cluster, int64_t node,
                             const design::Placement& placement);

// Waits until every peer accepts a connection, within `timeout_s` in all;
// the error names the first peer that did not come up. Gives up early if
// *stop turns true (a SIGINT or SIGTERM).
Status wait_for_peers(verbs::VerbsRuntime& runtime, const NodePlan& plan, double timeout_s,
                      const std::atomic<bool>* stop);

}  // namespace locus::cli
