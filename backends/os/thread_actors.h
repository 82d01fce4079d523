// ThreadActors: the actors of a backend that runs on real OS threads
// (loopback and verbs). spawn() only records an actor; run() starts each
// as a thread with its own Env (the backend's transport for its node, the
// steady clock, a no-op CPU charge, std synchronisation, a Random forked
// from the seed in spawn order), lets them all begin at once, waits for
// the workers, then sets the stop flag and joins the daemons. Header-only: both backends link it.
#pragma once

#include <atomic>
#include <functional>
#include <condition_variable>
#include <mutex>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/os/os_env.h"
#include "backends/os/posix_files.h"
#include "core/common/random.h"
#include "core/common/status.h"
#include "core/transport/runtime.h"

namespace locus::os {

class ThreadActors {
 public:
  explicit ThreadActors(uint64_t seed) : seed_rng_(seed) {}
  // Stops and joins daemons still running (a run() that was never made).
  ~ThreadActors() { join_daemons(); }
  ThreadActors(const ThreadActors&) = delete;
  ThreadActors& operator=(const ThreadActors&) = delete;

  void spawn(Transport* transport, std::string name, ActorKind kind, std::function<void(Env&)> fn) {
    pending_.push_back({transport, std::move(name), kind, std::move(fn)});
  }

  // Starts every pending actor, then opens a gate they all wait at, so
  // they begin together: a body that spins (a polling client, a server
  // worker) would otherwise take the cores from the thread still starting
  // the rest. On 2 cores under ThreadSanitizer the last of ~40 actors began
  // 1.4 s late, and a server crash planned at 0.98 s of the run fell at
  // 1.44 s (cli_cell_takeover_test). A thread that cannot be started fails
  // the run, naming the actor, after the ones started have been stopped.
  Status run() {
    std::vector<std::thread> workers;
    Gate gate;
    Status started;
    for (auto& a : pending_) {
      auto rng = std::make_unique<Random>(seed_rng_.fork(actor_count_++));
      Env env = make_env(a.transport, rng.get());
      randoms_.push_back(std::move(rng));
      auto body = [env, fn = std::move(a.fn), &gate]() mutable {
        gate.pass();
        fn(env);
      };
      try {
        if (!is_worker(a.kind)) {
          daemons_.emplace_back(std::move(body));
        } else {
          workers.emplace_back(std::move(body));
        }
      } catch (const std::system_error& e) {
        started = resource_exhausted("could not start a thread for actor " + a.name + " (" +
                                     std::to_string(workers.size() + daemons_.size()) + " started): " + e.what());
        stop_.store(true, std::memory_order_release);
        break;
      }
    }
    pending_.clear();
    gate.open();
    for (auto& t : workers) t.join();
    join_daemons();
    stop_.store(false, std::memory_order_release);
    return started;
  }

  // An Env for set-up code outside any actor, with a Random of its own.
  Env setup_env(Transport* transport) {
    randoms_.push_back(std::make_unique<Random>(seed_rng_.fork(0x5E7u + actor_count_++)));
    return make_env(transport, randoms_.back().get());
  }

  // Sets the stop flag and joins the daemons (their transports must outlive this).
  void join_daemons() {
    stop_.store(true, std::memory_order_release);
    for (auto& t : daemons_) t.join();
    daemons_.clear();
  }

 private:
  // Blocks actors until opened. A mutex and condition variable, not
  // std::latch: libstdc++'s latch spins under ThreadSanitizer, and 128
  // spinning waiters starved the thread starting them.
  class Gate {
   public:
    void pass() {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return open_; });
    }
    void open() {
      {
        std::lock_guard<std::mutex> lock(mu_);
        open_ = true;
      }
      cv_.notify_all();
    }

   private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool open_ = false;
  };

  struct Pending {
    Transport* transport;
    std::string name;
    ActorKind kind;
    std::function<void(Env&)> fn;
  };

  Env make_env(Transport* transport, Random* rng) {
    Env env;
    env.transport = transport;
    env.clock = &clock_;
    env.cpu = &cpu_;
    env.random = rng;
    env.sync = &sync_;
    env.files = &files_;
    env.stop = &stop_;
    return env;
  }

  Random seed_rng_;
  uint64_t actor_count_ = 0;
  std::vector<std::unique_ptr<Random>> randoms_;
  std::vector<Pending> pending_;
  std::vector<std::thread> daemons_;
  std::atomic<bool> stop_{false};
  SteadyClock clock_;
  NoopCpu cpu_;
  StdSyncFactory sync_;
  PosixFiles files_;
};

}  // namespace locus::os
