// A time-slice model of the operating system's scheduler for hosts whose
// always-runnable threads (CPU hogs, polling server threads) outnumber
// their cores ([platform] cpu_scheduler = "cfs"). SimGrid shares a host's
// cores fluidly, so a polling thread among hogs holds a fraction of a core
// all the time and sees every request at once; under Linux's CFS it holds
// a whole core for a slice and then none for the rest of its core's
// period, and a request that lands while it is descheduled waits for its
// next slice (Nessie, section 3; Catfish, section IV-B). Woken blocking
// threads preempt the running hog (CFS wake-up preemption) and run at a
// core's speed while their sleep credit lasts.
//
// Source of every constant: Linux kernel/sched/fair.c, unchanged from
// v2.6.38 to v6.5 (EEVDF replaced it in v6.6); the Nessie testbed's era
// (TPDS 2017) ran v4.x, e.g. Ubuntu 16.04's v4.4
// (https://github.com/torvalds/linux/blob/v4.4/kernel/sched/fair.c):
//   sysctl_sched_latency = 6 ms, sysctl_sched_min_granularity = 0.75 ms,
//   sysctl_sched_wakeup_granularity = 1 ms, each times
//   1 + ilog2(min(ncpus, 8)) (get_update_sysctl_factor, LOG scaling);
//   sched_nr_latency = 8; __sched_period(nr) = nr > 8 ? nr x min_gran :
//   latency; sched_slice = period x weight / rq weight (all nice 0 here:
//   period / nr); place_entity gives a waking sleeper at most latency / 2
//   of credit (GENTLE_FAIR_SLEEPERS).
// The papers do not name their kernels.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/common/random.h"
#include "core/scenario/platform.h"

namespace locus::simgrid_backend {

class World;

// CFS's tunables on a machine of `cpus` online CPUs, in seconds.
struct CfsTunables {
  double latency_s = 0;
  double min_granularity_s = 0;
  double wakeup_granularity_s = 0;
  uint32_t nr_latency = 8;
  static CfsTunables for_cpus(uint32_t cpus);
  // __sched_period: the time in which each of `nr_running` tasks runs once.
  double period_s(uint32_t nr_running) const;
  // sched_slice for equal weights.
  double slice_s(uint32_t nr_running) const { return period_s(nr_running) / nr_running; }
};

// When one always-runnable thread holds its core: one slice of slice_s in
// every period_s of its core (periods from phase_s), at its place among
// the core's `tasks`. The order of a core's tasks within a period is
// drawn anew each period from order_seed (CFS picks the least virtual
// runtime, and among equal tasks that order shifts with every wake-up
// and tick, so the cores' slices do not stay aligned); order_seed 0 keeps
// it fixed (the thread's place is `rank`). tasks <= 1: always (a core of
// its own).
struct SliceWindows {
  double phase_s = 0;
  double period_s = 0;
  double slice_s = 0;
  uint32_t tasks = 1;
  uint32_t rank = 0;
  uint64_t order_seed = 0;
  bool always_on() const { return tasks <= 1 || period_s <= 0; }
  // The earliest moment >= t at which the thread runs.
  double next_on_s(double t) const;
  // When `work_s` of CPU started at t is done, run only in its slices.
  double finish_s(double t, double work_s) const;
  // When its slice of period k starts.
  double slice_start_s(int64_t k) const;

 private:
  // The period holding t, and its slice if that has not ended by t, else
  // the next period's: {period, slice start}.
  std::pair<int64_t, double> window_from(double t) const;
};

// A blocking thread's CFS sleep credit: how far its virtual runtime lags
// its core's, capped at latency / 2, growing by 1 / nr per second it does
// not run. Woken, it runs at a core's speed for its lag plus a slice.
struct WakeCredit {
  double lag_s = 0;
  double last_s = -1;
};

// Per run: the hosts' always-runnable threads and each polling thread's
// windows. Off unless the platform asks for "cfs".
class SliceScheduler {
 public:
  SliceScheduler(const scenario::PlatformSpec& platform, uint64_t seed);
  bool on() const { return on_; }
  // A polling thread on the host (before the run); its number there.
  uint32_t add_poller(uint32_t host_index);
  // Polling thread k of the host, once every poller is added: the
  // host's hogs and pollers dealt evenly over its cores, the pollers at
  // seeded places among them (which tasks share a core is not known), a
  // seeded phase per core, the pollers of one core in turn.
  SliceWindows windows(uint32_t host_index, uint32_t k, uint32_t cores) const;
  // Always-runnable threads per core on the host (0 if it has a core each).
  double runnable_per_core(uint32_t host_index, uint32_t cores) const;
  const CfsTunables& tunables(uint32_t cores) const;

 private:
  uint32_t runnable(uint32_t host_index) const;
  bool on_ = false;
  uint32_t hogs_ = 0;
  uint64_t seed_ = 0;
  std::vector<uint32_t> pollers_;              // by host_index
  mutable std::vector<CfsTunables> tunables_;  // by cores
};

// In the calling actor (a polling thread whose windows are not always on):
// sleeps until its next slice.
void wait_for_slice(World& world, const SliceWindows& w);
// Runs `work_s` of CPU in its slices (a sleep to when it is done: the
// thread's core is counted busy by its polling execution meanwhile).
void run_in_slices(World& world, const SliceWindows& w, double work_s);
// A blocking thread's `work_s` on a host with `per_core` always-runnable
// threads a core: the part its credit covers at a core's speed (a sleep),
// the rest as a shared execution. Returns false (nothing done) where
// the host's cores are not oversubscribed.
bool run_woken(World& world, const SliceScheduler& s, WakeCredit& c, uint32_t host_index, uint32_t cores,
               double work_s);

}  // namespace locus::simgrid_backend
