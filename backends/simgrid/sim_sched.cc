// The time-slice scheduler model: see sim_sched.h for what it models and
// where each constant comes from.
#include "backends/simgrid/sim_sched.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <simgrid/s4u.hpp>

#include "backends/simgrid/sim_world.h"

namespace locus::simgrid_backend {
namespace {

// kernel/sched/fair.c (sim_sched.h): the normalised defaults, in seconds.
constexpr double kNormalizedLatencyS = 6e-3;            // normalized_sysctl_sched_latency
constexpr double kNormalizedMinGranularityS = 0.75e-3;  // normalized_sysctl_sched_min_granularity
constexpr double kNormalizedWakeupGranularityS = 1e-3;  // normalized_sysctl_sched_wakeup_granularity
constexpr uint32_t kNrLatency = 8;                      // sched_nr_latency
constexpr uint32_t kFactorCpusCap = 8;                  // get_update_sysctl_factor: min(cpus, 8)

uint64_t mix(uint64_t seed, uint64_t a, uint64_t b) {
  return seed ^ (a * 0x9E3779B97F4A7C15ULL) ^ ((b + 1) * 0xC2B2AE3D27D4EB4FULL) ^ 0x5C4EDULL;
}

void sleep_until(World& world, double until_s) {
  const double now = engine_clock_s();
  if (until_s <= now) return;
  NativeActivity nap(&world, until_s);
  sg4::this_actor::sleep_for(until_s - now);
}

}  // namespace

CfsTunables CfsTunables::for_cpus(uint32_t cpus) {
  const uint32_t capped = std::clamp<uint32_t>(cpus, 1, kFactorCpusCap);
  uint32_t ilog2 = 0;
  while ((2u << ilog2) <= capped) ++ilog2;
  const double factor = 1.0 + ilog2;  // SCHED_TUNABLESCALING_LOG
  CfsTunables t;
  t.latency_s = factor * kNormalizedLatencyS;
  t.min_granularity_s = factor * kNormalizedMinGranularityS;
  t.wakeup_granularity_s = factor * kNormalizedWakeupGranularityS;
  t.nr_latency = kNrLatency;
  return t;
}

double CfsTunables::period_s(uint32_t nr_running) const {
  return nr_running > nr_latency ? nr_running * min_granularity_s : latency_s;
}

double SliceWindows::slice_start_s(int64_t k) const {
  uint32_t place = rank;
  if (order_seed != 0) {
    // This period's order of the core's tasks: a seeded shuffle.
    Random r(mix(order_seed, static_cast<uint64_t>(k), 0));
    std::vector<uint32_t> order(tasks);
    std::iota(order.begin(), order.end(), 0u);
    for (uint32_t i = 0; i + 1 < tasks; ++i) std::swap(order[i], order[i + r.uniform(tasks - i)]);
    place = order[rank];
  }
  return phase_s + static_cast<double>(k) * period_s + place * slice_s;
}

std::pair<int64_t, double> SliceWindows::window_from(double t) const {
  auto k = static_cast<int64_t>(std::floor((t - phase_s) / period_s));
  // Rounding may put t a period off near a boundary.
  if (phase_s + static_cast<double>(k + 1) * period_s <= t) ++k;
  if (phase_s + static_cast<double>(k) * period_s > t) --k;
  const double start = slice_start_s(k);
  if (t < start + slice_s) return {k, start};
  return {k + 1, slice_start_s(k + 1)};
}

double SliceWindows::next_on_s(double t) const {
  if (always_on()) return t;
  return std::max(t, window_from(t).second);
}

double SliceWindows::finish_s(double t, double work_s) const {
  if (always_on()) return t + work_s;
  auto [k, start] = window_from(t);
  double now = std::max(t, start);
  for (;;) {
    const double left_s = start + slice_s - now;
    if (work_s <= left_s) return now + work_s;
    work_s -= left_s;
    start = slice_start_s(++k);
    now = start;
  }
}

SliceScheduler::SliceScheduler(const scenario::PlatformSpec& platform, uint64_t seed)
    : on_(platform.cpu_scheduler == scenario::CpuScheduler::kCfs), hogs_(platform.background_load), seed_(seed) {}

uint32_t SliceScheduler::add_poller(uint32_t host_index) {
  if (pollers_.size() <= host_index) pollers_.resize(host_index + 1, 0);
  return pollers_[host_index]++;
}

uint32_t SliceScheduler::runnable(uint32_t host_index) const {
  return hogs_ + (host_index < pollers_.size() ? pollers_[host_index] : 0);
}

double SliceScheduler::runnable_per_core(uint32_t host_index, uint32_t cores) const {
  const uint32_t r = runnable(host_index);
  return on_ && r > cores ? static_cast<double>(r) / cores : 0.0;
}

const CfsTunables& SliceScheduler::tunables(uint32_t cores) const {
  if (tunables_.size() <= cores) tunables_.resize(cores + 1);
  if (tunables_[cores].latency_s == 0) tunables_[cores] = CfsTunables::for_cpus(cores);
  return tunables_[cores];
}

SliceWindows SliceScheduler::windows(uint32_t host_index, uint32_t k, uint32_t cores) const {
  const uint32_t r = runnable(host_index);
  if (!on_ || r <= cores) return {};
  // Slot i is on core i mod cores (an even deal, as CFS's load balancing
  // keeps the runqueues' lengths within one); the pollers take seeded
  // slots among the hogs'.
  std::vector<uint32_t> slots(r);
  std::iota(slots.begin(), slots.end(), 0u);
  Random rng(mix(seed_, host_index, 0));
  const uint32_t pollers = pollers_.at(host_index);
  for (uint32_t i = 0; i < pollers && i + 1 < r; ++i) std::swap(slots[i], slots[i + rng.uniform(r - i)]);
  const uint32_t slot = slots.at(k);
  const uint32_t core = slot % cores;
  const uint32_t on_core = r / cores + (core < r % cores ? 1 : 0);
  if (on_core <= 1) return {};
  const CfsTunables& t = tunables(cores);
  SliceWindows w;
  w.period_s = t.period_s(on_core);
  w.slice_s = w.period_s / on_core;
  w.tasks = on_core;
  w.rank = slot / cores;
  // Where each core's rotation stands when the run starts, and its order
  // in each period, are not known: seeded, per core.
  Random core_rng(mix(seed_, host_index, 1 + core));
  w.phase_s = core_rng.uniform_double() * w.period_s;
  w.order_seed = core_rng.next_u64() | 1;
  return w;
}

void wait_for_slice(World& world, const SliceWindows& w) { sleep_until(world, w.next_on_s(engine_clock_s())); }

void run_in_slices(World& world, const SliceWindows& w, double work_s) {
  sleep_until(world, w.finish_s(engine_clock_s(), work_s));
}

bool run_woken(World& world, const SliceScheduler& s, WakeCredit& c, uint32_t host_index, uint32_t cores,
               double work_s) {
  const double per_core = s.runnable_per_core(host_index, cores);
  if (per_core <= 0) return false;
  const CfsTunables& t = s.tunables(cores);
  const double now = engine_clock_s();
  const double cap = t.latency_s / 2;  // place_entity's credit for a sleeper
  c.lag_s = c.last_s < 0 ? cap : std::min(cap, c.lag_s + (now - c.last_s) / per_core);
  // It preempts the running task if it lags it by more than the wake-up
  // granularity (wakeup_preempt_entity), then runs until its virtual
  // runtime passes the others' by a slice (check_preempt_tick); short of
  // that lag it takes its turn: a shared execution.
  const uint32_t on_core = static_cast<uint32_t>(std::ceil(per_core));
  const double fast_s = c.lag_s > t.wakeup_granularity_s ? std::clamp(c.lag_s + t.slice_s(on_core), 0.0, work_s) : 0.0;
  c.lag_s -= fast_s;
  sleep_until(world, now + fast_s);
  if (work_s > fast_s) {
    NativeActivity shared(&world, 0.0);  // shares the cores with the hogs
    sg4::this_actor::execute((work_s - fast_s) * 1e9);
  }
  c.last_s = engine_clock_s();
  return true;
}

}  // namespace locus::simgrid_backend
