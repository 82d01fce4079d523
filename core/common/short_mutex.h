// ShortMutex and ShortSharedMutex: locks for critical sections that never
// block, wait, sleep or charge CPU while held (bumping counters, setting a
// status, a tree update done in place). Such a section needs a real lock
// where actors are OS threads (loopback, verbs) and is safe under SimGrid,
// whose actors share one OS thread and switch only at blocking calls, so
// never inside one. A lock that may be held across anything that blocks
// (Endpoint::wait, Clock::sleep_for, Cpu::charge, a condition variable)
// must come from Env::sync instead, or a SimGrid run deadlocks.
// ci/check-layering.sh rejects the std:: mutexes anywhere else in core/,
// so every lock in code that actors run says by its type which kind it is.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace locus {

class ShortMutex {
 public:
  void lock() { mu_.lock(); }
  void unlock() { mu_.unlock(); }
  bool try_lock() { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

class ShortSharedMutex {
 public:
  void lock() { mu_.lock(); }
  void unlock() { mu_.unlock(); }
  bool try_lock() { return mu_.try_lock(); }
  void lock_shared() { mu_.lock_shared(); }
  void unlock_shared() { mu_.unlock_shared(); }
  bool try_lock_shared() { return mu_.try_lock_shared(); }

 private:
  std::shared_mutex mu_;
};

}  // namespace locus
