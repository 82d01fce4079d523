// The transport conformance suite run against the loopback backend, in
// several configurations: the checks must hold with and without emulated
// latency (which widens every race window), under both policies for a SEND
// that finds no receive, and with queues small enough that the suite's own
// batching meets the bounds. Then through the fault-injecting transport
// (core/fault) with the faults the contract allows: armed with nothing
// drawn it must be transparent, and held completions and split READs must
// keep every promise.
#include <optional>

#include <boost/test/unit_test.hpp>

#include "backends/loopback/loopback_runtime.h"
#include "core/fault/fault_runtime.h"
#include "tests/support/conformance/transport_conformance.h"

namespace {

using locus::loopback::LoopbackOptions;
using locus::loopback::NoRecvPolicy;
using locus::conformance::BackendUnderTest;
using locus::conformance::RnrBehaviour;

void register_variant(const std::string& name, LoopbackOptions options,
                      std::optional<locus::fault::FaultOptions> faults = std::nullopt) {
  BackendUnderTest backend;
  backend.name = name;
  backend.make_runtime = [options, faults](uint64_t seed) -> std::unique_ptr<locus::Runtime> {
    LoopbackOptions o = options;
    o.seed = seed;
    if (!faults) return locus::loopback::make_loopback_runtime(o);
    locus::fault::FaultOptions f = *faults;
    f.seed = seed;
    auto runtime = std::make_unique<locus::fault::FaultRuntime>(locus::loopback::make_loopback_runtime(o), f);
    runtime->arm();
    return runtime;
  };
  backend.rnr = options.no_recv_policy == NoRecvPolicy::kWait ? RnrBehaviour::kRetry : RnrBehaviour::kFailAtOnce;
  backend.rnr_retry_budget = options.rnr_timeout;
  // Everything is in-process: a completion that takes seconds is lost.
  backend.completion_timeout = 10 * locus::kSecond;
  locus::conformance::register_transport_conformance(backend);
}

LoopbackOptions options_with(void (*edit)(LoopbackOptions&)) {
  LoopbackOptions o;
  // Short, so the RNR checks do not dominate the run time.
  o.rnr_timeout = 300 * locus::kMillisecond;
  edit(o);
  return o;
}

// Runs during static initialisation, before Boost.Test walks the test tree.
const bool registered = [] {
  register_variant("loopback", options_with([](LoopbackOptions&) {}));
  register_variant("loopback_latency", options_with([](LoopbackOptions& o) { o.op_latency = 20 * locus::kMicrosecond; }));
  register_variant("loopback_no_recv_fails",
                   options_with([](LoopbackOptions& o) { o.no_recv_policy = NoRecvPolicy::kFail; }));
  register_variant("loopback_small_queues", options_with([](LoopbackOptions& o) {
                     o.max_send_wr = 8;
                     o.max_recv_wr = 8;
                     o.max_message_bytes = 4096;
                     o.no_recv_policy = NoRecvPolicy::kFail;
                   }));
  register_variant("loopback_faults_none", options_with([](LoopbackOptions&) {}), locus::fault::FaultOptions{});
  locus::fault::FaultOptions held;
  held.delay = 0.3;
  held.max_delay_ns = 200 * locus::kMicrosecond;
  held.split_read = 0.5;
  held.read_order = locus::fault::ReadOrder::kRandom;
  register_variant("loopback_faults_held_and_split", options_with([](LoopbackOptions&) {}), held);
  return true;
}();

}  // namespace
