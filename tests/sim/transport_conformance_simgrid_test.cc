// The transport conformance suite against the SimGrid backend: the same
// checks the loopback backend passes, in simulated time, with the FCFS
// and the processor-sharing NIC models.
#include <boost/test/unit_test.hpp>

#include "backends/simgrid/sim_runtime.h"
#include "tests/support/conformance/transport_conformance.h"

namespace {

using locus::conformance::BackendUnderTest;
using locus::scenario::NicModel;
using locus::scenario::PlatformSpec;
using locus::simgrid_backend::SimOptions;

void register_variant(const std::string& name, NicModel model) {
  BackendUnderTest backend;
  backend.name = name;
  backend.make_runtime = [model](uint64_t seed) {
    PlatformSpec p;
    p.servers = 4;
    p.client_hosts = 8;
    p.nic.model = model;
    SimOptions o;
    o.seed = seed;
    o.rnr_timeout = 50 * locus::kMillisecond;
    return locus::simgrid_backend::make_simgrid_runtime(p, o);
  };
  backend.rnr_retry_budget = 50 * locus::kMillisecond;
  backend.completion_timeout = 1 * locus::kSecond;  // simulated
  locus::conformance::register_transport_conformance(backend);
}

const bool registered = [] {
  register_variant("simgrid_fcfs", NicModel::kFcfs);
  register_variant("simgrid_ps", NicModel::kProcessorSharing);
  return true;
}();

}  // namespace
