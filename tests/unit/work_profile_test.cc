// The profiling runtime of `locus calibrate` (core/runner/work_profile.h):
// every charge_work an actor or set-up code makes is recorded by name with
// its native time and bytes, and still reaches the backend's own Cpu.
#include <boost/test/unit_test.hpp>

#include "backends/loopback/loopback_runtime.h"
#include "core/runner/work_profile.h"

namespace locus {
namespace {

BOOST_AUTO_TEST_SUITE(work_profile)

BOOST_AUTO_TEST_CASE(records_named_work_by_name_with_median_and_bytes) {
  runner::WorkProfile profile;
  runner::ProfilingRuntime runtime(loopback::make_loopback_runtime({}), &profile);
  const NodeId node = *runtime.add_node({"server", true});
  runtime.setup_env(node).cpu->charge_work("a.layout", 500, 100);
  BOOST_REQUIRE(runtime.spawn(node, "worker", ActorKind::kWorker, [](Env& env) {
    // 40 ms: preempted by the OS (over 10x the median), left out of the mean.
    for (Nanos ns : {1000, 3000, 2000, 9000, 2500, 40'000'000}) env.cpu->charge_work("a.put", ns, 64);
    env.cpu->charge_work("client.op", 0, 0);  // no native time: not a measurement
  }).is_ok());
  BOOST_REQUIRE(runtime.run().is_ok());
  const auto rows = profile.rows();
  BOOST_TEST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].name == "a.layout");
  BOOST_TEST(rows[0].calls == 1u);
  BOOST_TEST(rows[0].median_bytes == 100u);
  BOOST_TEST(rows[1].name == "a.put");
  BOOST_TEST(rows[1].calls == 6u);
  BOOST_TEST(rows[1].median_us == 3.0);
  BOOST_TEST(rows[1].p90_us == 40000.0);
  BOOST_TEST(rows[1].trimmed_mean_us == 3.5);
  BOOST_TEST(rows[1].median_bytes == 64u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
