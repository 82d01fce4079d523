// ThreadActors (backends/os/thread_actors.h), the actors of the loopback
// and verbs backends. Actors start in spawn order, each as soon as its
// thread exists; under ThreadSanitizer on 2 cores the last of ~40 begins
// over a second late. Starting daemons first (a fault timer among them)
// armed faults before late clients had connected, and starting everyone
// behind a gate put thread creation in front of every client: both broke
// TSan runs (docs/correctness.md).
#include <atomic>
#include <string>

#include <boost/test/unit_test.hpp>

#include "backends/os/thread_actors.h"
#include "core/common/time.h"

namespace locus {
namespace {

BOOST_AUTO_TEST_SUITE(thread_actors)

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
