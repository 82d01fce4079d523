// The transport conformance suite on the verbs backend: every check of the
// contract in core/transport/transport.h, against real queue pairs on an
// RDMA device (Soft-RoCE in CI), servers and clients in this process.
#include <boost/test/unit_test.hpp>

#include "backends/verbs/verbs_runtime.h"
#include "tests/support/conformance/transport_conformance.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

// Runs during static initialisation, before Boost.Test walks the test tree.
const bool registered = [] {
  locus::verbs::testing::exit_unless_rdma_available("transport_conformance_verbs_test");
  const locus::verbs::ClusterConfig cluster = locus::verbs::testing::local_cluster(2);
  locus::conformance::BackendUnderTest backend;
  backend.name = "verbs";
  backend.make_runtime = [cluster](uint64_t seed) {
    return locus::verbs::make_verbs_runtime(cluster, {.seed = seed});
  };
  // A SEND with no receive is RNR-retried rnr_retry_count times,
  // min_rnr_timer apart, then fails.
  backend.rnr = locus::conformance::RnrBehaviour::kRetry;
  backend.rnr_retry_budget = cluster.verbs.rnr_retry_budget();
  backend.completion_timeout = 30 * locus::kSecond;
  backend.quiet_period = 20 * locus::kMillisecond;
  locus::conformance::register_transport_conformance(backend);
  return true;
}();

}  // namespace
