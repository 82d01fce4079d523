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
  BOOST_TEST(rows[1].on_server);
  BOOST_TEST(!rows[1].has_fit);  // one byte count: no line to fit
}

// Work whose bytes vary within a run (a READ batch of 1 to 8 nodes) gets a
// least-squares line through its kept calls; work of a client node is
// marked as the client's.
BOOST_AUTO_TEST_CASE(fits_a_line_where_the_bytes_vary_and_tells_client_work_apart) {
  runner::WorkProfile profile;
  runner::ProfilingRuntime runtime(loopback::make_loopback_runtime({}), &profile);
  const NodeId client = *runtime.add_node({"client0", false});
  BOOST_REQUIRE(runtime.spawn(client, "c", ActorKind::kWorker, [](Env& env) {
    // 300 ns + 0.5 ns per byte, for 1 to 8 nodes of 1 KB; one preempted call.
    for (uint64_t nodes = 1; nodes <= 8; ++nodes) {
      env.cpu->charge_work("x.nodes", static_cast<Nanos>(300 + nodes * 512), nodes * 1024);
    }
    env.cpu->charge_work("x.nodes", 90'000'000, 1024);
  }).is_ok());
  BOOST_REQUIRE(runtime.run().is_ok());
  const auto rows = profile.rows();
  BOOST_TEST_REQUIRE(rows.size() == 1u);
  const runner::WorkProfile::Row& r = rows[0];
  BOOST_TEST(!r.on_server);
  BOOST_TEST_REQUIRE(r.has_fit);
  BOOST_TEST(r.fit_us_per_byte == 0.0005, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.fit_intercept_us == 0.3, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.p10_bytes == 1024u);
  BOOST_TEST(r.p90_bytes == 8192u);
  // A cost table gets two points of the line.
  const auto points = r.cost_points();
  BOOST_TEST_REQUIRE(points.size() == 2u);
  BOOST_TEST(points[0].first == 1024u);
  BOOST_TEST(points[1].second == 0.3 + 0.0005 * 8192, boost::test_tools::tolerance(1e-9));
}

// Noise that makes the line fall with the bytes (a client's draw of a get
// and of a 4 KB put take the same time) must not become a cost table
// with a negative cost at the large end (`locus sim` refuses it): one
// point, the mean.
BOOST_AUTO_TEST_CASE(a_falling_line_is_not_a_cost_curve) {
  runner::WorkProfile profile;
  for (int i = 0; i < 50; ++i) {
    profile.add("client.op", 200, 23, false);
    profile.add("client.op", 150, 4119, false);
  }
  const auto rows = profile.rows();
  BOOST_TEST_REQUIRE(rows.size() == 1u);
  BOOST_TEST_REQUIRE(rows[0].has_fit);
  BOOST_TEST(rows[0].fit_us_per_byte < 0);
  const auto points = rows[0].cost_points();
  BOOST_TEST_REQUIRE(points.size() == 1u);
  BOOST_TEST(points[0].second == 0.175, boost::test_tools::tolerance(1e-9));
}

// A piece of named work is timed only for a Cpu that uses native times:
// on a real backend's data path (a Pilaf client's CRC checks, every
// operation's client.op) WorkTimer reads no clock.
BOOST_AUTO_TEST_CASE(work_is_timed_only_for_a_cpu_that_uses_native_times) {
  struct CountingClock : Clock {
    mutable int reads = 0;
    Nanos now() const override { return ++reads * 10; }
    void sleep_for(Nanos) override {}
  } clock;
  struct TheCpu : Cpu {
    bool native = false;
    void charge(Nanos) override {}
    void charge_work(std::string_view, Nanos, uint64_t) override {}
    bool uses_native_time() const override { return native; }
  } cpu;
  Env env;
  env.clock = &clock;
  env.cpu = &cpu;
  const WorkTimer untimed(env);
  BOOST_TEST(untimed.elapsed() == 0);
  BOOST_TEST(clock.reads == 0);
  cpu.native = true;
  const WorkTimer timed(env);
  BOOST_TEST(timed.elapsed() == 10);
  BOOST_TEST(clock.reads == 2);
  // The OS-thread backends' Cpu does not use them; the profiler does.
  auto runtime = loopback::make_loopback_runtime({});
  const NodeId node = *runtime->add_node({"n", false});
  BOOST_TEST(!runtime->setup_env(node).cpu->uses_native_time());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
