// The split worker: a daemon actor beside each Cell server (on its own
// endpoint) that takes the meganode splits the server queued and drives
// them with a SplitDriver over RPC. Splits run outside the server's RPC
// actor because they wait on other servers; a handler that waited could
// deadlock two servers splitting into each other, while this way every
// handler only touches local memory and answers at once.
//
// Shutdown: a worker counts itself in `in_flight` while it may be talking
// to servers, and the server loops keep serving until stop is requested
// and no worker is in flight, so a split under way when a run ends still
// completes and leaves a consistent tree.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/common/short_mutex.h"
#include "core/index/cell/caller.h"
#include "core/index/cell/server.h"
#include "core/index/cell/split_driver.h"
#include "core/transport/env.h"

namespace locus::cell {

struct SplitWorkerShared {
  std::atomic<int> in_flight{0};
  std::atomic<uint64_t> splits{0};
  std::atomic<uint64_t> remote_placements{0};
  std::atomic<uint64_t> new_roots{0};
  std::atomic<uint64_t> parents_abandoned{0};
  std::atomic<uint64_t> failures{0};

  void record(const SplitDriverStats& before, const SplitDriverStats& after);
  void fail(const Status& st);
  std::string first_error() const;

 private:
  // Held only to copy a string, never across a wait.
  mutable ShortMutex mu_;  // never held across a wait
  std::string first_error_;
};

// The worker's body; returns after env.stop_requested(). `first`, if
// given, runs once over the worker's caller before any split (a server
// that took over a region ends its half-built splits, takeover.h).
void run_split_worker(Env& env, CellServer& server, const SplitDriverOptions& options, SplitWorkerShared& shared,
                      const std::function<Status(Caller&)>& first = {});

}  // namespace locus::cell
