// Power and CPU contention on the simulated platform: SimGrid's host
// energy plugin with a scenario's power profile ([platform.power]), the
// background CPU hogs of [platform] background_load, and the busy core of
// a polling server thread (ActorKind::kPollingDaemon). Kept apart from
// the datapath: only the world's construction, the runtime's run and the
// CPU charge call in here.
#pragma once

#include <atomic>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics/resource_usage.h"
#include "core/scenario/platform.h"

namespace locus::simgrid_backend {

namespace sg4 = simgrid::s4u;
class World;

// Turns SimGrid's host energy plugin on, once per process, before the
// first host of a platform with a power profile is created. Later engines
// of the process keep it (SimGrid cannot turn it off); hosts without a
// profile are then measured at 0 W and never read.
void enable_host_energy();

// The host's power profile as the plugin's properties: wattage_per_state
// "Idle:Epsilon:AllCores" with Epsilon = Idle (linear from idle in the
// busy cores), wattage_off 0 (hosts stay on). Before the host is sealed.
void set_power_profile(sg4::Host& host, const scenario::PowerSpec& power, uint32_t cores);

// Each host's energy between two moments of a run, read in actor context
// (the plugin brings a host's account up to date by a simcall).
class PowerMeter {
 public:
  void start(std::vector<std::pair<std::string, sg4::Host*>> hosts);
  void stop();
  std::vector<HostPower> read() const { return power_; }

 private:
  std::vector<std::pair<std::string, sg4::Host*>> hosts_;
  std::vector<double> start_j_;
  double start_s_ = 0;
  std::vector<HostPower> power_;
};

// Spawns platform.background_load hog actors on every host of the world:
// each executes 1 ms chunks of work until `stop` is set, so hogs end by
// themselves within a chunk of the run's end.
void spawn_background_load(World& world, const std::atomic<bool>& stop);

// The core a polling thread keeps busy while it waits for work: an
// endless execution on its host, cancelled while the thread executes its
// own charged work (so the thread holds one core's share, not two) and
// started again after. A companion actor owns the execution: SimGrid
// suspends an actor's activities while the actor is suspended, as a
// blocked wait() suspends it (CqWaiter), and Activity::suspend() of an
// execution did not stop it in SimGrid 3.32 (its flops kept counting).
// Made, paused, resumed and stopped by the polling thread's own actor.
class PollingCore {
 public:
  explicit PollingCore(sg4::Host* host);
  ~PollingCore() { stop(); }
  PollingCore(const PollingCore&) = delete;
  PollingCore& operator=(const PollingCore&) = delete;
  void pause() { want(false); }
  void resume() { want(true); }
  void stop();

 private:
  struct Shared {
    sg4::MutexPtr mu = sg4::Mutex::create();
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
    bool spinning = true;
    bool stopped = false;
  };
  void want(bool spinning);
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

}  // namespace locus::simgrid_backend
