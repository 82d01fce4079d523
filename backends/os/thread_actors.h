// ThreadActors: the actors of a backend that runs on real OS threads
// (loopback and verbs). spawn() only records an actor; run() starts each
// as a thread with its own Env (the backend's transport for its node, the
// steady clock, a no-op CPU charge, std synchronisation, a Random forked
// from the seed in spawn order), daemons first, waits for the workers,
// then sets the stop flag and joins the daemons. Header-only: both backends link it.
#pragma once

#include <atomic>
#include <functional>
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

  // Starts every pending actor, daemons and observers first, then the
  // workers, each as soon as its thread exists. Workers last: a busy one
  // (a polling client) takes a core from the thread still starting the
  // rest, and on 2 cores under ThreadSanitizer a daemon started after ~40
  // of them began 1.4 s late, so a server crash planned at 0.98 s of the
  // run fell at 1.44 s (cli_cell_takeover_test). Each actor's Random is
  // still forked by its place in spawn order. A thread that cannot be
  // started fails the run, naming the actor, once those started are done.
  Status run() {
    std::vector<Env> envs;
    for (auto& a : pending_) {
      randoms_.push_back(std::make_unique<Random>(seed_rng_.fork(actor_count_++)));
      envs.push_back(make_env(a.transport, randoms_.back().get()));
    }
    std::vector<std::thread> workers;
    Status started;
    for (const bool worker_pass : {false, true}) {
      for (size_t i = 0; i < pending_.size() && started.is_ok(); ++i) {
        Pending& a = pending_[i];
        if (is_worker(a.kind) != worker_pass) continue;
        auto body = [env = envs[i], fn = std::move(a.fn)]() mutable { fn(env); };
        try {
          (worker_pass ? workers : daemons_).emplace_back(std::move(body));
        } catch (const std::system_error& e) {
          started = resource_exhausted("could not start a thread for actor " + a.name + " (" +
                                       std::to_string(workers.size() + daemons_.size()) + " started): " + e.what());
          stop_.store(true, std::memory_order_release);
        }
      }
    }
    pending_.clear();
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
