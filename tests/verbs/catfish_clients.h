// Catfish clients against a `locus serve` of tests/verbs/scenarios/
// catfish.toml (the R-tree server of two messaging workers and a connect
// RPC): the scenario's figures, the oracle of what it loaded, and a client
// of a fresh client-only verbs runtime. Shared by the process and abuse
// tests of the tier.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/verbs/cluster_config.h"
#include "core/index/catfish/catfish_client.h"
#include "core/selector/selector_config.h"
#include "tests/support/failure_log.h"
#include "tests/verbs/served_index.h"

namespace locus::verbs::testing {

// catfish.toml's: index.rectangles, run.seed, platform.cores_per_server.
constexpr uint64_t kCatfishRectangles = 3000;
constexpr uint64_t kCatfishSeed = 11;
constexpr uint32_t kCatfishWorkers = 2;
// Entries 0..kCatfishWorkers-1 are the messaging workers, then the connect RPC.
constexpr NodeId kCatfishConnectNode = kCatfishWorkers;
constexpr size_t kCatfishEndpoints = kCatfishWorkers + 1;

// `locus serve` of catfish.toml in `server_mode`, `serve_verbs` lines
// added to the server's [verbs] table.
ServedIndex start_catfish_tree(const std::string& name, const std::string& server_mode = "event",
                               const std::string& serve_verbs = "");

// The ids of the loaded rectangles that `q` intersects (what the server
// loaded for kCatfishSeed), sorted.
std::vector<uint64_t> loaded_ids_in(const catfish::Rect& q);

// A client of a fresh client-only runtime, connected over the connect RPC,
// running fn in its actor; failures go to `failures` (it runs on test
// threads too).
using CatfishClientBody = std::function<void(catfish::CatfishClient&, Env&)>;
void with_catfish_client(const ClusterConfig& config, selector::SelectorKind kind, const CatfishClientBody& fn,
                         locus::testing::FailureLog& failures);

// Queries around loaded rectangles (from `first`): both paths give the
// same, non-empty answer, which is the loaded rectangles it intersects.
void check_catfish_searches(catfish::CatfishClient& c, const std::string& tag, uint64_t first, int queries,
                            locus::testing::FailureLog& failures);

}  // namespace locus::verbs::testing
