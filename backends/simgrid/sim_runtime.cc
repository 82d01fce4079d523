// The SimGrid Transport, Clock, Cpu, blocking primitives and Runtime. The
// transport validates and queues work; executors (sim_datapath.cc) carry
// it through the platform model.
#include "backends/simgrid/sim_runtime.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "backends/simgrid/sim_energy.h"
#include "backends/simgrid/sim_sched.h"
#include "backends/simgrid/sim_world.h"
#include "backends/simgrid/sim_disk.h"
#include "core/log/mem_files.h"

namespace locus::simgrid_backend {
namespace {

class SimTransport final : public Transport {
 public:
  SimTransport(World& world, SimNode& node) : world_(world), node_(node) {}

  NodeId node_id() const override { return node_.id; }
  TransportLimits limits() const override {
    const SimOptions& o = world_.options();
    // A WRITE's data lands at one simulated instant, between actors' steps.
    return {o.max_send_wr, o.max_recv_wr, o.max_message_bytes, true};
  }

  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override {
    if (addr == nullptr && length > 0) return invalid_argument("register_memory: null address");
    return world_.add_region(node_, static_cast<std::byte*>(addr), length, access);
  }

  Status deregister_memory(const Region& region) override {
    if (region.node != node_.id || !world_.remove_region(node_, region.id)) {
      return not_found("deregister_memory: region " + std::to_string(region.id) +
                       " is not registered on " + node_.name);
    }
    return Status();
  }

  Status post(std::span<const WorkRequest> batch) override {
    if (batch.empty()) return Status();
    // Posted at the engine's time, the debt slept off first: a request
    // posted at a later own time would take its NIC and link slots (FCFS
    // in the order of the calls) ahead of requests other actors post
    // before that time. A Catfish worker owing a few handlers' CPU thus
    // held offloaded READs behind its responses for milliseconds
    // (catfish_scenario_test an_observer_actor_changes_nothing).
    settle_debt();
    const SimOptions& o = world_.options();
    for (const WorkRequest& wr : batch) {
      LOCUS_RETURN_IF_ERROR(check_work_request(wr, o.max_message_bytes, local_ok(wr.local), node_.name));
    }
    if (node_.outstanding_send + batch.size() > o.max_send_wr) {
      return resource_exhausted("post: send queue full on " + node_.name + " (" +
                                std::to_string(node_.outstanding_send) + " outstanding, max_send_wr " +
                                std::to_string(o.max_send_wr) + ")");
    }
    node_.outstanding_send += static_cast<uint32_t>(batch.size());
    world_.post(node_, batch);
    return Status();
  }

  Status post_recv(std::span<const RecvRequest> batch) override {
    settle_debt();  // the receive exists from the actor's own time on
    for (const RecvRequest& r : batch) {
      if (!local_ok(r.local)) {
        return invalid_argument("post_recv: buffer of " + std::to_string(r.local.length) +
                                " bytes is not inside a registration with lkey " +
                                std::to_string(r.local.lkey) + " on " + node_.name);
      }
    }
    if (node_.posted_recvs + batch.size() > world_.options().max_recv_wr) {
      return resource_exhausted("post_recv: receive queue full on " + node_.name);
    }
    for (const RecvRequest& r : batch) node_.recvs.push_back(r);
    node_.posted_recvs += static_cast<uint32_t>(batch.size());
    world_.receives_posted(node_);
    node_.recv_cv->notify_all();
    return Status();
  }

  Status fence_peer(NodeId peer) override {
    if (world_.node(peer) == nullptr) return not_found("fence_peer: no node " + std::to_string(peer));
    settle_debt();  // from the actor's own time on
    node_.fenced.insert(peer);
    return Status();
  }
  bool rejoin(NodeId peer) override {
    SimNode* target = world_.node(peer);
    return target != nullptr && target->fenced.erase(node_.id) != 0;
  }

  size_t poll(std::span<Completion> out) override {
    settle_debt();  // completions up to the actor's own time count
    world_.release_deferred(node_);
    return drain(out);
  }

  // A completion already queued arrived no later than the actor's own
  // time, so it is returned at once, debt or not. Otherwise the actor
  // blocks until one comes or the deadline (both on its own clock) and,
  // if it comes before the actor's own time, still owes the difference.
  size_t wait(std::span<Completion> out, Nanos timeout) override {
    if (node_.cq.empty() && !node_.deferred.empty()) {
      settle_debt();  // the executor path runs at the engine's time
      const Nanos deadline = world_.now_ns() + timeout;
      world_.run_deferred(node_);
      timeout = std::max<Nanos>(0, deadline - world_.now_ns());
    }
    ActorState* self = current_actor();
    if (node_.cq.empty() && (timeout > 0 || (self != nullptr && self->debt_s > 0))) {
      const double own_now = actor_now_s();
      const double deadline = own_now + static_cast<double>(timeout) * 1e-9;
      // Another actor of the node may take the completion that woke this one.
      while (node_.cq.empty() && engine_clock_s() < deadline) {
        CqWaiter w(node_);
        w.block_until(deadline);
      }
      if (self != nullptr) self->debt_s = std::max(0.0, own_now - engine_clock_s());
    }
    return drain(out);
  }

 private:
  size_t drain(std::span<Completion> out) {
    size_t n = 0;
    while (n < out.size() && !node_.cq.empty()) {
      out[n++] = node_.cq.front();
      node_.cq.pop_front();
    }
    // A descheduled polling thread sees them at its next slice (sim_sched.h).
    const ActorState* self = n > 0 ? current_actor() : nullptr;
    if (self != nullptr && self->slices != nullptr) wait_for_slice(world_, *self->slices);
    return n;
  }

  bool local_ok(const LocalBuf& buf) const { return local_buffer_ok(node_, buf); }

  World& world_;
  SimNode& node_;
};

// An actor's own clock (`self`: no lookup of the calling actor), or, for
// code outside actors (set-up), whichever actor calls.
class SimClock final : public Clock {
 public:
  SimClock(World& world, ActorState* self) : world_(world), self_(self) {}
  // The calling actor's own time (ActorState: ahead by the CPU time it owes).
  Nanos now() const override {
    return static_cast<Nanos>(std::llround((own_time_s(caller()) - world_.start_s()) * 1e9));
  }
  void sleep_for(Nanos d) override {
    ActorState* self = caller();
    const double owed = self == nullptr ? 0.0 : self->debt_s;
    if (self != nullptr) self->debt_s = 0;
    const double total = owed + (d > 0 ? static_cast<double>(d) * 1e-9 : 0.0);
    if (total <= 0) return;
    NativeActivity nap(&world_, engine_clock_s() + total);
    sg4::this_actor::sleep_for(total);
  }

 private:
  ActorState* caller() const { return self_ != nullptr ? self_ : current_actor(); }
  World& world_;
  ActorState* self_;
};

// Work is simulated on the node's host: one flop is one nanosecond. Where
// no other actor can contend for the core, it is owed instead (ActorState).
class SimCpu final : public Cpu {
 public:
  SimCpu(World& world, const scenario::CpuSpec& spec, SimNode& node, const SliceScheduler& sched)
      : world_(world), spec_(spec), node_(node), sched_(sched) {}
  void charge(Nanos d) override {
    if (d <= 0) return;
    const double s = static_cast<double>(d) * 1e-9;
    node_.cpu_busy_s += s;
    ActorState* self = current_actor();
    if (self != nullptr && self->node == &node_ && world_.cpu_uncontended(node_)) {
      self->debt_s += s;
      return;
    }
    settle_debt();
    // Time slices on an oversubscribed host (cpu_scheduler = "cfs").
    if (self != nullptr && self->slices != nullptr) return run_in_slices(world_, *self->slices, s);
    if (self != nullptr && self->wake != nullptr &&
        run_woken(world_, sched_, *self->wake, node_.host_index, node_.host_cores, s))
      return;
    // Where every actor of the host has a core, it ends exactly when due.
    NativeActivity exec(&world_, world_.host_uncontended(node_) ? engine_clock_s() + s : 0.0);
    // A polling thread's work is done on the core it polls with.
    if (self != nullptr && self->polling != nullptr) self->polling->pause();
    sg4::this_actor::execute(static_cast<double>(d));
    if (self != nullptr && self->polling != nullptr) self->polling->resume();
  }
  bool uses_native_time() const override { return spec_.measured; }
  void charge_work(std::string_view name, Nanos native_ns, uint64_t bytes) override {
    if (spec_.measured) return charge(static_cast<Nanos>(static_cast<double>(native_ns) * spec_.measured_factor));
    auto it = spec_.handler_cost_us.find(name);
    if (it != spec_.handler_cost_us.end()) return charge(us_to_ns(it->second.us_at(bytes)));
    // Not costed by name: a server handler costs the default; a client's
    // work costs client_op_us for "client.op" and nothing else (a design's
    // client-side step the scenario does not cost, e.g. Pilaf's CRC
    // checks, is no server handler).
    if (name == scenario::kClientOpWork) return charge(us_to_ns(spec_.client_op_us));
    if (!node_.is_server) return;
    if (spec_.default_handler_us) return charge(us_to_ns(*spec_.default_handler_us));
    world_.note_uncosted_handler(name);
  }

 private:
  static Nanos us_to_ns(double us) { return static_cast<Nanos>(std::llround(us * 1e3)); }
  World& world_;
  const scenario::CpuSpec& spec_;
  SimNode& node_;
  const SliceScheduler& sched_;
};

// Waking another actor (an unlock, a notify) is a hazard to running ahead
// by the lookahead (World::note_hazard).
class SimMutex final : public Mutex {
 public:
  explicit SimMutex(World& world) : world_(world), mu_(sg4::Mutex::create()) {}
  void lock() override {
    settle_debt();
    mu_->lock();
  }
  void unlock() override {
    world_.note_hazard();
    mu_->unlock();
  }
  sg4::Mutex& native() { return *mu_; }

 private:
  World& world_;
  sg4::MutexPtr mu_;
};

class SimCondVar final : public CondVar {
 public:
  explicit SimCondVar(World& world) : world_(world), cv_(sg4::ConditionVariable::create()) {}
  void wait(Mutex& mu) override {
    settle_debt();
    std::unique_lock<sg4::Mutex> lock(static_cast<SimMutex&>(mu).native(), std::adopt_lock);
    cv_->wait(lock);
    lock.release();
  }
  bool wait_for(Mutex& mu, Nanos timeout) override {
    settle_debt();
    const double wait_s = static_cast<double>(std::max<Nanos>(timeout, 0)) * 1e-9;
    NativeActivity timed_wait(&world_, engine_clock_s() + wait_s);
    std::unique_lock<sg4::Mutex> lock(static_cast<SimMutex&>(mu).native(), std::adopt_lock);
    const bool notified = cv_->wait_for(lock, static_cast<double>(timeout) * 1e-9) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void notify_one() override {
    settle_debt();
    world_.note_hazard();
    cv_->notify_one();
  }
  void notify_all() override {
    settle_debt();
    world_.note_hazard();
    cv_->notify_all();
  }

 private:
  World& world_;
  sg4::ConditionVariablePtr cv_;
};

class SimSyncFactory final : public SyncFactory {
 public:
  explicit SimSyncFactory(World& world) : world_(world) {}
  std::unique_ptr<Mutex> new_mutex() override { return std::make_unique<SimMutex>(world_); }
  std::unique_ptr<CondVar> new_condvar() override { return std::make_unique<SimCondVar>(world_); }

 private:
  World& world_;
};

struct NodeParts {
  std::unique_ptr<SimTransport> transport;
  std::unique_ptr<SimCpu> cpu;
  std::unique_ptr<SimDiskFiles> files;  // a server's disk, when [platform.disk] gives one
};

class SimRuntime final : public Runtime {
 public:
  SimRuntime(const scenario::PlatformSpec& platform, const SimOptions& options)
      : world_(platform, options),
        sched_(platform, options.seed),
        seed_rng_(options.seed),
        clock_(world_, nullptr),
        sync_(world_) {}

  // Set-up failed after actors were spawned (a load that ran out of room):
  // run them once with the stop flag up, so each returns before it serves.
  // Left unstarted, SimGrid exits with live actors, skips its clean-up, and
  // LeakSanitizer crashes on their contexts.
  void abandon() override {
    if (ran_) return;
    ran_ = true;
    stop_.store(true, std::memory_order_release);
    sg4::Engine::get_instance()->run();
  }

  std::string_view backend_name() const override { return "simgrid"; }
  bool simulated() const override { return true; }

  StatusOr<NodeId> add_node(const NodeOptions& options) override {
    SimNode* host_of = nullptr;
    if (options.host_of != kInvalidNode) {
      host_of = world_.node(options.host_of);
      if (host_of == nullptr) {
        return invalid_argument("add_node " + options.name + ": host_of names no node (" +
                                std::to_string(options.host_of) + ")");
      }
    }
    LOCUS_ASSIGN_OR_RETURN(SimNode * node, world_.add_node(options.name, options.is_server, host_of));
    std::unique_ptr<SimDiskFiles> disk;
    if (options.is_server && world_.platform().disk.given) {
      disk = std::make_unique<SimDiskFiles>(&files_, world_.platform().disk, &clock_, &stop_);
    }
    parts_.push_back({std::make_unique<SimTransport>(world_, *node),
                      std::make_unique<SimCpu>(world_, world_.platform().cpu, *node, sched_), std::move(disk)});
    return node->id;
  }

  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override {
    if (world_.node(node) == nullptr) return invalid_argument("spawn " + name + ": no node " + std::to_string(node));
    auto rng = std::make_unique<Random>(seed_rng_.fork(actor_count_++));
    Env env = make_env(node, rng.get());
    randoms_.push_back(std::move(rng));
    const bool daemon = !is_worker(kind);
    (daemon ? live_daemons_ : live_workers_)++;
    SimNode* where = world_.node(node);
    const uint32_t poller = busy_polls(kind) && sched_.on() ? sched_.add_poller(where->host_index) : 0;
    sg4::ActorPtr actor = sg4::Actor::create(name, where->host, [this, env, kind, where, poller,
                                                                 fn = std::move(fn)]() mutable {
      // An observer charges no CPU and so takes no core (ActorKind).
      const bool takes_core = kind != ActorKind::kObserver;
      ActorState state;
      state.node = where;
      state.world = &world_;
      // Stopped as the actor returns or, killed, unwinds.
      std::optional<PollingCore> polling;
      if (busy_polls(kind)) state.polling = &polling.emplace(where->host);
      // cpu_scheduler = "cfs" on a host whose hogs and pollers outnumber its cores.
      SliceWindows slices;
      WakeCredit wake;
      if (sched_.runnable_per_core(where->host_index, where->host_cores) > 0) {
        if (busy_polls(kind)) {
          slices = sched_.windows(where->host_index, poller, where->host_cores);
          state.slices = &slices;
        } else if (takes_core) {
          state.wake = &wake;
        }
      }
      sg4::Actor::self()->set_data(&state);
      SimClock own_clock(world_, &state);
      env.clock = &own_clock;
      if (takes_core) world_.actor_started(*where);
      fn(env);
      settle_debt();  // the actor ends at its own time
      if (takes_core) world_.actor_ended(*where);
      sg4::Actor::self()->set_data(nullptr);
      if (!is_worker(kind)) {
        --live_daemons_;
      } else if (--live_workers_ == 0) {
        run_end_s_ = engine_clock_s();
        if (world_.platform().power.given) power_.stop();
        wind_down();
      }
    });
    // Still daemons, so SimGrid ends one that ignores the stop request.
    if (daemon) actor->daemonize();
    return Status();
  }

  // Run by the last worker: stop daemons and executors and wait (a bounded
  // simulated time) for them to return, so no actor has to be killed:
  // killing unwinds a swapped stack, which sanitizers cannot follow.
  void wind_down() {
    stop_.store(true, std::memory_order_release);
    world_.stop_executors();
    for (int i = 0; i < 1000 && (live_daemons_ > 0 || world_.live_executors() > 0); ++i) {
      NativeActivity nap(&world_, engine_clock_s() + 1e-3);
      sg4::this_actor::sleep_for(1e-3);
      world_.stop_executors();
    }
  }

  Status run() override {
    ran_ = true;
    const double start = engine_clock_s();
    world_.reset_usage();
    stop_.store(false, std::memory_order_release);
    world_.restart_executors();
    spawn_background_load(world_, stop_);
    if (world_.platform().power.given) {
      // The meter starts in an actor: the plugin updates its accounts by simcalls.
      sg4::Actor::create("power-meter", world_.hosts().front(), [this] {
        std::vector<std::pair<std::string, sg4::Host*>> hosts;
        for (sg4::Host* h : world_.hosts()) hosts.emplace_back(h->get_name(), h);
        power_.start(std::move(hosts));
      });
    }
    sg4::Engine::get_instance()->run();
    last_run_s_ = run_end_s_ > start ? run_end_s_ - start : engine_clock_s() - start;
    stop_.store(true, std::memory_order_release);
    if (!world_.uncosted_handlers().empty()) {
      std::string names;
      for (const std::string& n : world_.uncosted_handlers()) names += (names.empty() ? "\"" : ", \"") + n + "\"";
      return invalid_argument("platform.cpu: server handler(s) " + names +
                              " have no cost: give each in [platform.cpu.handler_cost_us] (`locus calibrate` "
                              "measures them) or set platform.cpu.default_handler_us");
    }
    return Status();
  }

  Env setup_env(NodeId node) override {
    randoms_.push_back(std::make_unique<Random>(seed_rng_.fork(0x5E7u + actor_count_++)));
    return make_env(node, randoms_.back().get());
  }

  Status crash_node(NodeId node) override {
    SimNode* n = world_.node(node);
    if (n == nullptr) return invalid_argument("crash_node: no node " + std::to_string(node));
    world_.note_hazard();
    n->crashed = true;
    world_.receives_posted(*n);  // SENDs waiting for its receives fail now
    n->recv_cv->notify_all();
    return Status();
  }

  Status revive_node(NodeId node) override {
    SimNode* n = world_.node(node);
    if (n == nullptr) return invalid_argument("revive_node: no node " + std::to_string(node));
    world_.note_hazard();
    n->crashed = false;
    return Status();
  }

  std::vector<ResourceUsage> resource_usage() const override { return world_.usage(last_run_s_); }
  std::vector<HostPower> host_power() const override { return power_.read(); }

 private:
  Env make_env(NodeId node, Random* rng) {
    Env env;
    env.transport = parts_.at(node).transport.get();
    env.clock = &clock_;
    env.cpu = parts_.at(node).cpu.get();
    env.random = rng;
    env.sync = &sync_;
    env.files = parts_.at(node).files != nullptr ? static_cast<Files*>(parts_.at(node).files.get()) : &files_;
    env.stop = &stop_;
    return env;
  }

  World world_;
  SliceScheduler sched_;  // cpu_scheduler = "cfs" (sim_sched.h)
  Random seed_rng_;
  uint64_t actor_count_ = 0;
  SimClock clock_;
  SimSyncFactory sync_;
  // Logs (core/log) live in memory: a simulated run's logs matter only
  // within it, to the servers it restarts. A server's syncs and reads cost
  // its disk's time when the platform gives one (sim_disk.h).
  log::MemFiles files_;
  std::vector<NodeParts> parts_;
  std::vector<std::unique_ptr<Random>> randoms_;
  std::atomic<bool> stop_{false};
  PowerMeter power_;
  double last_run_s_ = 0;
  double run_end_s_ = 0;  // when the last worker returned
  uint32_t live_workers_ = 0;
  uint32_t live_daemons_ = 0;
  bool ran_ = false;
};

}  // namespace

std::unique_ptr<Runtime> make_simgrid_runtime(const scenario::PlatformSpec& platform,
                                              const SimOptions& options) {
  return std::make_unique<SimRuntime>(platform, options);
}

}  // namespace locus::simgrid_backend
