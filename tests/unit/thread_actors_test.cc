// ThreadActors (backends/os/thread_actors.h), the actors of the loopback
// and verbs backends: daemons and observers start before the workers, so
// busy workers cannot hold back a server loop or a fault timer. Started in
// spawn order, a crash actor spawned after ~40 actors on a 2-core machine
// under ThreadSanitizer began 1.4 s late and acted at 1.44 s instead of
// 0.98 s (cli_cell_takeover_test then saw no failures after the crash
// within its window; CI, 2026-11-27).
#include <atomic>
#include <string>

#include <boost/test/unit_test.hpp>

#include "backends/os/thread_actors.h"
#include "core/common/time.h"

namespace locus {
namespace {

BOOST_AUTO_TEST_SUITE(thread_actors)

// 192 workers spin until the run ends, as polling clients do, and are
// spawned first; a daemon spawned after them notes when it began and ends
// their spinning. Started in spawn order, the daemon's thread waited for
// the thread starting it to get a core between spinners: 0.8-1.0 s with
// 128 of them in an optimised build. Daemons start first now, within
// milliseconds; 500 ms leaves room for a loaded machine.
BOOST_AUTO_TEST_CASE(a_daemon_spawned_after_busy_workers_begins_at_once) {
  os::ThreadActors actors(1);
  std::atomic<Nanos> daemon_began{0};
  std::atomic<bool> done{false};
  constexpr int kSpinners = 192;
  for (int i = 0; i < kSpinners; ++i) {
    actors.spawn(nullptr, "spinner" + std::to_string(i), ActorKind::kWorker, [&](Env&) {
      while (!done.load(std::memory_order_acquire)) {
      }
    });
  }
  actors.spawn(nullptr, "daemon", ActorKind::kDaemon, [&](Env& env) {
    daemon_began.store(env.clock->now());
    env.clock->sleep_for(20 * kMillisecond);  // while the spinners spin
    done.store(true, std::memory_order_release);
    while (!env.stop_requested()) env.clock->sleep_for(kMillisecond);
  });
  os::SteadyClock clock;
  const Nanos before = clock.now();
  BOOST_REQUIRE(actors.run().is_ok());
  const Nanos late_ns = daemon_began.load() - before;
  BOOST_TEST_MESSAGE("the daemon began " << late_ns / 1000 << " us after run()");
  BOOST_TEST(late_ns < 500 * kMillisecond);
}

// Every actor gets its own Random and the stop flag; daemons run until
// the workers are done and then see stop_requested().
BOOST_AUTO_TEST_CASE(daemons_stop_after_the_workers) {
  os::ThreadActors actors(7);
  std::atomic<int> worker_runs{0};
  std::atomic<int> with_random{0};
  std::atomic<bool> daemon_saw_stop{false};
  actors.spawn(nullptr, "daemon", ActorKind::kDaemon, [&](Env& env) {
    while (!env.stop_requested()) env.clock->sleep_for(kMillisecond);
    daemon_saw_stop.store(worker_runs.load() == 2);
  });
  for (int i = 0; i < 2; ++i) {
    actors.spawn(nullptr, "worker", ActorKind::kWorker, [&](Env& env) {
      if (env.random != nullptr) with_random.fetch_add(1);
      env.clock->sleep_for(5 * kMillisecond);
      worker_runs.fetch_add(1);
    });
  }
  BOOST_REQUIRE(actors.run().is_ok());
  BOOST_TEST(worker_runs.load() == 2);
  BOOST_TEST(with_random.load() == 2);
  BOOST_TEST(daemon_saw_stop.load());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
