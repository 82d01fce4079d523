// Power and CPU contention on the simulated platform: see sim_energy.h.
#include "backends/simgrid/sim_energy.h"

#include <fmt/format.h>
#include <simgrid/plugins/energy.h>
#include <xbt/log.h>

#include "backends/simgrid/sim_world.h"

namespace locus::simgrid_backend {
namespace {

// A hog's chunk of work: how late after the run's end it notices the stop.
constexpr double kHogChunkFlops = 1e6;  // 1 ms (1 flop = 1 ns, sim_platform.cc)
// A polling core's execution: longer than any run (1e9 simulated seconds).
constexpr double kPollingFlops = 1e18;

}  // namespace

void enable_host_energy() {
  static bool enabled = false;
  if (enabled) return;
  enabled = true;
  sg_host_energy_plugin_init();
  // Hosts built without a profile (later engines of the process, a
  // processor-sharing NIC's host) would each warn that they have none.
  xbt_log_control_set("host_energy.thresh:error");
}

void set_power_profile(sg4::Host& host, const scenario::PowerSpec& power, uint32_t cores) {
  const double all_cores_w = power.all_cores_w(cores);
  host.set_property("wattage_per_state", fmt::format("{}:{}:{}", power.idle_w, power.idle_w, all_cores_w));
  host.set_property("wattage_off", "0");
}

void PowerMeter::start(std::vector<std::pair<std::string, sg4::Host*>> hosts) {
  hosts_ = std::move(hosts);
  start_j_.clear();
  for (const auto& h : hosts_) start_j_.push_back(sg_host_get_consumed_energy(h.second));
  start_s_ = sg4::Engine::get_clock();
  power_.clear();
}

void PowerMeter::stop() {
  const double elapsed_s = sg4::Engine::get_clock() - start_s_;
  power_.clear();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const double joules = sg_host_get_consumed_energy(hosts_[i].second) - start_j_[i];
    power_.push_back({hosts_[i].first, elapsed_s > 0 ? joules / elapsed_s : 0.0, joules});
  }
}

void spawn_background_load(World& world, const std::atomic<bool>& stop) {
  const uint32_t hogs = world.platform().background_load;
  if (hogs == 0) return;
  const std::vector<sg4::Host*> hosts = world.hosts();
  for (uint32_t i = 0; i < hosts.size(); ++i) {
    world.add_host_load(i, static_cast<int>(hogs));
    for (uint32_t k = 0; k < hogs; ++k) {
      sg4::Actor::create(hosts[i]->get_name() + ".hog" + std::to_string(k), hosts[i], [&world, &stop, i] {
        while (!stop.load(std::memory_order_acquire)) {
          // Its end is not known: it shares the cores with everyone else.
          NativeActivity chunk(&world, 0.0);
          sg4::this_actor::execute(kHogChunkFlops);
        }
        world.add_host_load(i, -1);
      });
    }
  }
}

PollingCore::PollingCore(sg4::Host* host) {
  sg4::Actor::create(host->get_name() + ".polling", host, [shared = shared_] {
    std::unique_lock<sg4::Mutex> lock(*shared->mu);
    while (!shared->stopped) {
      if (!shared->spinning) {
        shared->cv->wait(lock);
        continue;
      }
      sg4::ExecPtr spin = sg4::this_actor::exec_init(kPollingFlops);
      spin->start();
      while (shared->spinning && !shared->stopped) shared->cv->wait(lock);
      spin->cancel();
    }
  })->daemonize();  // should its thread be killed before it stops it
}

void PollingCore::want(bool spinning) {
  std::unique_lock<sg4::Mutex> lock(*shared_->mu);
  shared_->spinning = spinning;
  shared_->cv->notify_all();
}

void PollingCore::stop() {
  std::unique_lock<sg4::Mutex> lock(*shared_->mu);
  shared_->stopped = true;
  shared_->cv->notify_all();
}

std::vector<sg4::Host*> World::hosts() const {
  std::vector<sg4::Host*> all = server_hosts_;
  all.insert(all.end(), client_hosts_.begin(), client_hosts_.end());
  return all;
}

void World::add_host_load(uint32_t host_index, int n) {
  if (host_actors_.size() <= host_index) host_actors_.resize(host_index + 1, 0);
  host_actors_[host_index] = static_cast<uint32_t>(static_cast<int>(host_actors_[host_index]) + n);
}

}  // namespace locus::simgrid_backend
