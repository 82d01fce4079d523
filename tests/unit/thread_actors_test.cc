// ThreadActors (backends/os/thread_actors.h), the actors of the loopback
// and verbs backends: every actor begins once all have been started, so
// busy actors started first cannot hold back the ones started after them.
// Before the start gate, ~40 actors on a 2-core machine under
// ThreadSanitizer began over 1.4 s, and a crash actor planned for 0.98 s of
// the run acted at 1.44 s (cli_cell_takeover_test then saw no failures
// after the crash within its window; CI, 2026-11-27). 128 busy actors took
// 0.8-1.0 s to start in an optimised build, the gate 13-38 ms.
#include <atomic>
#include <filesystem>
#include <string>

#include <boost/test/unit_test.hpp>

#include "backends/os/thread_actors.h"
#include "core/common/time.h"

namespace locus {
namespace {

int threads_of_this_process() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

BOOST_AUTO_TEST_SUITE(thread_actors)

// No actor begins before the run has started every actor's thread: the
// first actor, as it begins, counts the process's threads
// (/proc/self/task), and every actor stays until all have begun, so none
// has exited yet. Without the gate the first actor began as soon as its
// own thread existed, and saw 2 or 3.
BOOST_AUTO_TEST_CASE(no_actor_begins_before_every_thread_is_started) {
  os::ThreadActors actors(1);
  constexpr int kActors = 32;
  std::atomic<int> began{0};
  std::atomic<int> threads_seen_by_first{-1};
  std::atomic<int> gave_up{0};
  for (int i = 0; i < kActors; ++i) {
    actors.spawn(nullptr, "actor" + std::to_string(i), ActorKind::kWorker, [&, i](Env& env) {
      if (i == 0) threads_seen_by_first.store(threads_of_this_process());
      began.fetch_add(1);
      const Nanos deadline = env.clock->now() + 30 * kSecond;
      while (began.load() < kActors) {
        if (env.clock->now() > deadline) {
          gave_up.fetch_add(1);
          return;
        }
        env.clock->sleep_for(kMillisecond);
      }
    });
  }
  BOOST_REQUIRE(actors.run().is_ok());
  BOOST_REQUIRE(gave_up.load() == 0);
  BOOST_TEST_MESSAGE("the first actor began with " << threads_seen_by_first.load() << " threads in the process");
  BOOST_TEST(threads_seen_by_first.load() >= kActors + 1);  // the actors and this one
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
