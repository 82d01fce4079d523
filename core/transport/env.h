// Clock, Cpu, blocking primitives and Env: everything besides the Transport
// that core code needs from the world, passed explicitly (no globals).
// Real backends use the steady clock and OS primitives; SimGrid supplies
// simulated time, simulated CPU charging and actor-aware primitives.
#pragma once

#include <atomic>
#include <memory>
#include <string_view>

#include "core/common/random.h"
#include "core/common/time.h"
#include "core/transport/files.h"
#include "core/transport/transport.h"

namespace locus {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
  virtual void sleep_for(Nanos duration) = 0;
};

// Charges CPU time to the current node: a no-op on real hardware (the work
// itself takes the time), simulated core time on SimGrid.
class Cpu {
 public:
  virtual ~Cpu() = default;
  virtual void charge(Nanos duration) = 0;
  // Charges a named piece of work (an RPC handler, say) that took
  // `native_ns` on this machine and moved `bytes` (request and response).
  // A simulator charges the cost its model gives that name at that size;
  // real backends do nothing; `locus calibrate` records native times.
  virtual void charge_work(std::string_view name, Nanos native_ns, uint64_t bytes) = 0;
  // Whether charge_work uses `native_ns` (profiling, the simulator's
  // measured mode). Where it does not, WorkTimer reads no clock.
  virtual bool uses_native_time() const { return true; }
};

class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
};

class CondVar {
 public:
  virtual ~CondVar() = default;
  virtual void wait(Mutex& mu) = 0;
  // Returns false on timeout.
  virtual bool wait_for(Mutex& mu, Nanos timeout) = 0;
  virtual void notify_one() = 0;
  virtual void notify_all() = 0;
};

class SyncFactory {
 public:
  virtual ~SyncFactory() = default;
  virtual std::unique_ptr<Mutex> new_mutex() = 0;
  virtual std::unique_ptr<CondVar> new_condvar() = 0;
};

// RAII lock for locus::Mutex.
class MutexLock {
 public:
  explicit MutexLock(Mutex& mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// What one actor (a client thread, a server loop) works with. Non-owning:
// the backend's runtime owns every piece and outlives the actor.
struct Env {
  Transport* transport = nullptr;
  Clock* clock = nullptr;
  Cpu* cpu = nullptr;
  Random* random = nullptr;
  SyncFactory* sync = nullptr;
  Files* files = nullptr;  // local storage (logs); null where the backend gives none
  const std::atomic<bool>* stop = nullptr;  // set when daemons should wind down

  bool stop_requested() const { return stop != nullptr && stop->load(std::memory_order_acquire); }
};

// Times a piece of named work for Cpu::charge_work: two clock reads where
// the Cpu uses native times, none on the data path of a real backend.
class WorkTimer {
 public:
  explicit WorkTimer(const Env& env)
      : clock_(env.cpu->uses_native_time() ? env.clock : nullptr), from_(clock_ ? clock_->now() : 0) {}
  Nanos elapsed() const { return clock_ ? clock_->now() - from_ : 0; }

 private:
  Clock* clock_;
  Nanos from_;
};

}  // namespace locus
