// ThreadActors: the actors of a backend that runs on real OS threads
// (loopback and verbs). spawn() only records an actor; run() starts each
// as a thread with its own Env (the backend's transport for its node, the
// steady clock, a no-op CPU charge, std synchronisation, a Random forked
// from the seed in spawn order), waits for the workers, then sets the stop
// flag and joins the daemons. Header-only: both backends link it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
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

  Status run() {
    std::vector<std::thread> workers;
    for (auto& a : pending_) {
      auto rng = std::make_unique<Random>(seed_rng_.fork(actor_count_++));
      Env env = make_env(a.transport, rng.get());
      randoms_.push_back(std::move(rng));
      auto body = [env, fn = std::move(a.fn)]() mutable { fn(env); };
      if (!is_worker(a.kind)) {
        daemons_.emplace_back(std::move(body));
      } else {
        workers.emplace_back(std::move(body));
      }
    }
    pending_.clear();
    for (auto& t : workers) t.join();
    join_daemons();
    stop_.store(false, std::memory_order_release);
    return Status();
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
