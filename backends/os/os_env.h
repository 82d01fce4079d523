// Clock, Cpu and blocking primitives for backends that run on real OS
// threads (loopback and verbs): the steady clock, a no-op CPU charge (the
// work itself takes the time) and std::mutex/std::condition_variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "core/transport/env.h"

namespace locus::os {

class SteadyClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void sleep_for(Nanos duration) override {
    if (duration > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(duration));
  }
};

class NoopCpu final : public Cpu {
 public:
  void charge(Nanos) override {}
  void charge_work(std::string_view, Nanos, uint64_t) override {}
  bool uses_native_time() const override { return false; }
};

class StdMutex final : public Mutex {
 public:
  void lock() override { mu_.lock(); }
  void unlock() override { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class StdCondVar final : public CondVar {
 public:
  void wait(Mutex& mu) override {
    std::unique_lock<std::mutex> lock(native(mu), std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  bool wait_for(Mutex& mu, Nanos timeout) override {
    std::unique_lock<std::mutex> lock(native(mu), std::adopt_lock);
    const bool notified = cv_.wait_for(lock, std::chrono::nanoseconds(timeout)) ==
                          std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void notify_one() override { cv_.notify_one(); }
  void notify_all() override { cv_.notify_all(); }

 private:
  // Only StdMutex is ever paired with StdCondVar: both come from StdSyncFactory.
  static std::mutex& native(Mutex& mu) { return static_cast<StdMutex&>(mu).native(); }
  std::condition_variable cv_;
};

class StdSyncFactory final : public SyncFactory {
 public:
  std::unique_ptr<Mutex> new_mutex() override { return std::make_unique<StdMutex>(); }
  std::unique_ptr<CondVar> new_condvar() override { return std::make_unique<StdCondVar>(); }
};

}  // namespace locus::os
