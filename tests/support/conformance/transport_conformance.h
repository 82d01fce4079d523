// The transport conformance suite: one set of checks of the contract in
// core/transport/transport.h, written once and run against every backend
// (loopback now; verbs and SimGrid later), so that "the core runs unchanged
// on every backend" is something a test shows rather than a hope.
//
// A backend's test executable describes the backend once and registers the
// suite at static-initialisation time:
//
//   const bool registered = [] {
//     locus::conformance::register_transport_conformance({
//         .name = "verbs",
//         .make_runtime = [](uint64_t seed) { return make_verbs_runtime(...); },
//     });
//     return true;
//   }();
//
// Every check builds a fresh Runtime from the factory, so a failing check
// cannot poison the next one and a failing seed replays on SimGrid.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/common/time.h"
#include "core/transport/runtime.h"

namespace boost::unit_test {
class test_suite;
}

namespace locus::conformance {

// What a SEND (or WRITE_WITH_IMM) does when the target has no receive
// posted. The contract allows a bounded RNR retry; how long is the backend's
// (and its configuration's) business, so the suite is told.
enum class RnrBehaviour {
  kFailAtOnce,  // completes kRnrRetryExceeded without waiting
  kRetry,       // retries for rnr_retry_budget, then kRnrRetryExceeded
};

struct BackendUnderTest {
  // Names the Boost.Test suite ("transport_conformance/<name>"), so it must
  // be unique per registered variant and a valid test unit name.
  std::string name;
  std::function<std::unique_ptr<Runtime>(uint64_t seed)> make_runtime;

  RnrBehaviour rnr = RnrBehaviour::kRetry;
  // With kRetry: how long the backend keeps retrying. A receive posted
  // after a fifth of this must still catch the message.
  Nanos rnr_retry_budget = 2 * kSecond;

  // The longest the suite waits for one expected completion before calling
  // it lost. Generous: a real NIC reports a dead peer only after its
  // transport retries run out.
  Nanos completion_timeout = 30 * kSecond;
  // How long "no further completion arrives" is watched for.
  Nanos quiet_period = 5 * kMillisecond;

  // Fault injection may be missing on a backend (e.g. real hardware).
  bool supports_crash_node = true;

  uint64_t seed = 1;
};

// Builds the suite for `backend` and adds it to the master test suite.
// Returns the suite so callers may decorate it.
boost::unit_test::test_suite* register_transport_conformance(const BackendUnderTest& backend);

}  // namespace locus::conformance
