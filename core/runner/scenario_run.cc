// The scenario runner: see scenario_run.h.
#include "core/runner/scenario_run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/check/history.h"
#include "core/fault/fault_runtime.h"
#include "core/runner/scenario_checks.h"
#include "core/runner/ycsb_loop.h"

namespace locus::runner {
namespace {

using detail::check_clients_on_servers;
using detail::check_memory;
using detail::check_serve_machine;
using detail::client_rpc_options;
using detail::server_rpc_options;

struct ClientOutcome {
  metrics::OpStats stats;
  // The session's own counters when the measured window began (after
  // run.warmup_s; none without a warm-up): the design's mechanism figures
  // (IndexDriver::report_mechanism) are taken over the window.
  metrics::OpStats warmup_counters;
  Status error;
  bool connected = false;  // its session opened: later errors are its operations'
  uint64_t server_choices = 0;  // the selector's, after the warm-up
  uint64_t client_choices = 0;
};

Nanos to_ns(double s) { return static_cast<Nanos>(std::llround(s * 1e9)); }

// Sleeps until `when_ns` in steps of at most 10 ms, so that a stop request
// is seen; false if the run was stopped first.
bool sleep_until(Env& env, Nanos when_ns) {
  while (!env.stop_requested() && env.clock->now() < when_ns) {
    env.clock->sleep_for(std::min<Nanos>(when_ns - env.clock->now(), 10 * kMillisecond));
  }
  return !env.stop_requested();
}

// Client workers busy-poll for their completions where the scenario says
// its design's clients do ([platform] polling_clients).
ActorKind client_kind(const scenario::Scenario& s) {
  return s.platform.polling_clients ? ActorKind::kPollingWorker : ActorKind::kWorker;
}

// Clients active at `t` (relative to the run's start), and when that next changes.
uint32_t active_clients(const scenario::Scenario& s, Nanos t, Nanos* next_change) {
  uint32_t active = s.run.clients;
  *next_change = to_ns(s.run.duration_s);
  for (const scenario::PhaseSpec& p : s.phases) {
    if (to_ns(p.start_s) <= t) {
      active = p.active_clients;
    } else {
      *next_change = std::min(*next_change, to_ns(p.start_s));
      break;
    }
  }
  return active;
}

struct Shared {
  const scenario::Scenario* scenario;
  design::IndexDriver* driver;
  std::vector<NodeId> servers;
  int64_t serve_machine = -1;  // RunOptions::serve_machine
  // The servers go on serving after this run (`locus run` against `locus
  // serve`, or a node's own clients under --node): clients give back what
  // the servers hold for them (ClientSession::close) when they end.
  bool servers_outlive_run = false;
  std::shared_ptr<workload::AcknowledgedCounter> inserts;
  // When the run's clock starts (kNotStarted until then). The simulator's
  // clock stands still through set-up, so there it is set-up's end, set
  // before any actor runs. On OS threads actors begin one by one as their
  // threads are made, a late one seconds late under a sanitizer, so the
  // run starts when the last of `clients_to_start` local clients has
  // connected or given up: no client loses its run to the others' start,
  // and none connects under faults armed after a fixed warm-up.
  static constexpr Nanos kNotStarted = -1;
  std::atomic<Nanos> run_start{kNotStarted};
  uint32_t clients_to_start = 0;
  std::atomic<uint32_t> clients_started{0};
  std::atomic<uint64_t> ops{0};
  TimeseriesRecorder timeseries;
  // [check]: every client's calls, and the Random load() drew the records from.
  std::optional<check::HistoryRecorder> history;
  std::optional<Random> load_rng;
  // faults.crash_clients: set before the client's node is crashed.
  std::unique_ptr<std::atomic<bool>[]> crashed;
  // Every node of each server machine (its endpoints, its daemons' own
  // nodes), for faults.crash_servers.
  std::vector<std::vector<NodeId>> machine_nodes;
  std::atomic<uint32_t> crashed_servers{0};
  std::atomic<uint32_t> revived_servers{0};  // faults.server_outage_ms
  std::atomic<uint32_t> restarted_servers{0};  // faults.restart_servers: endpoints recovered
  std::atomic<uint32_t> failed_restarts{0};
  // When the first server machine died (check::kNeverNs: none has), and the calls
  // answered after that: the other servers kept serving.
  std::atomic<Nanos> first_server_crash_ns{check::kNeverNs};
  std::atomic<uint64_t> ok_after_server_crash{0};

  // A local client has connected, or could not: the last one starts the run.
  void client_started(Env& env) {
    if (clients_started.fetch_add(1, std::memory_order_acq_rel) + 1 == clients_to_start) {
      run_start.store(env.clock->now(), std::memory_order_release);
    }
  }
  // The run's start, once it has started; kNotStarted if the run was
  // stopped before (an actor that is no worker, stopped with the workers).
  Nanos wait_for_start(Env& env) const {
    Nanos t = run_start.load(std::memory_order_acquire);
    while (t == kNotStarted && !env.stop_requested()) {
      env.clock->sleep_for(100 * kMicrosecond);
      t = run_start.load(std::memory_order_acquire);
    }
    return t;
  }
};

// Client `index` (its place in [[phases]]) as one process: connects, runs
// YCSB operations until the run ends, and records them as history client
// `history_id` (a restarted client is a new process with an id of its own).
// `crashed`, set when its host dies, makes it idle to the end instead of
// failing call after call. One of the run's first clients (`starts_run`)
// counts towards its start once connected (Shared::client_started); it
// runs from then to the end of the run.
void run_client(Env& env, uint32_t index, uint32_t history_id, const std::atomic<bool>& crashed, bool starts_run,
                Shared& sh, ClientOutcome* out) {
  const scenario::Scenario& s = *sh.scenario;
  const auto give_up = [&](Status st) {
    out->error = std::move(st);
    if (starts_run) sh.client_started(env);
  };
  Endpoint ep(env, to_ns(s.run.wait_timeout_ms / 1e3));
  ep.set_timeout_setting("run.wait_timeout_ms");
  auto rpc = rpc::RpcClient::create(ep, client_rpc_options(*sh.driver));
  if (!rpc.is_ok()) return give_up(rpc.status());
  const uint32_t machines = s.platform.servers;
  auto session_or = s.run.clients_on_servers
                        ? sh.driver->connect_on_server(env, ep, **rpc, sh.servers, index % machines)
                        : sh.driver->connect(env, ep, **rpc, sh.servers);
  if (!session_or.is_ok()) return give_up(session_or.status());
  auto wl = workload::Workload::create(s.workload, sh.inserts);
  if (!wl.is_ok()) return give_up(wl.status());
  const Nanos duration = to_ns(s.run.duration_s);
  design::ClientSession& session = **session_or;
  out->connected = true;
  if (starts_run) sh.client_started(env);
  const Nanos run_start = sh.wait_for_start(env);
  if (run_start == Shared::kNotStarted) return;
  if (sh.history) session.record_into({&sh.history->client(history_id), env.clock});
  metrics::OpStats& st = out->stats;
  const auto failures = st.counter("failed_ops");
  uint64_t server_seen = 0, client_seen = 0;  // the selector's choices so far
  YcsbHooks hooks;
  const Nanos measure_from = run_start + to_ns(s.run.warmup_s);
  bool warmup_taken = s.run.warmup_s <= 0;
  // [[phases]]: a client beyond the active count idles until that changes.
  // Asked before every operation, it also takes the session's counters
  // before the first one of the measured window.
  hooks.idle_for = [&](Nanos now) -> Nanos {
    if (!warmup_taken && now >= measure_from) {
      session.report(out->warmup_counters);
      warmup_taken = true;
    }
    const Nanos t = now - run_start;
    if (crashed.load(std::memory_order_relaxed)) return std::max<Nanos>(duration - t, 1);
    Nanos next_change = duration;
    return index >= active_clients(s, t, &next_change) ? next_change - t : 0;
  };
  hooks.on_op = [&](const YcsbOpDone& done) {
    uint64_t server = server_seen, client = client_seen;
    (void)session.selector_choices(&server, &client);
    if (done.measured) {
      if (!done.status.is_ok()) st.add(failures);
      out->server_choices += server - server_seen;
      out->client_choices += client - client_seen;
    }
    if (sh.timeseries.enabled()) {
      sh.timeseries.record(done.end_ns - run_start, done.end_ns - done.start_ns, done.status.is_ok(),
                           server - server_seen, client - client_seen);
    }
    server_seen = server;
    client_seen = client;
    sh.ops.fetch_add(1, std::memory_order_relaxed);
    if (done.status.is_ok() && done.start_ns > sh.first_server_crash_ns.load(std::memory_order_relaxed)) {
      sh.ok_after_server_crash.fetch_add(1, std::memory_order_relaxed);
    }
  };
  YcsbLimits limits;
  limits.end_ns = run_start + duration;
  limits.measure_from_ns = measure_from;
  out->error = run_ycsb_ops(env, *wl, session, limits, st, hooks).first_error;
  session.report(st);
  if (sh.servers_outlive_run && !session.close().is_ok()) {
    // The servers keep this client's share until they restart; the run's
    // figures stand.
    st.add(st.counter("release_failures"));
  }
}


// Sets up the server endpoints (RpcServer, the design's state, RPC worker
// actors), loads the records and spawns the design's daemons.
Status start_servers(const scenario::Scenario& s, Runtime& runtime, design::IndexDriver& driver,
                     const std::vector<design::EndpointSpec>& endpoints, Shared& sh,
                     std::vector<std::unique_ptr<rpc::RpcServer>>& rpcs, Env* setup) {
  // Only the simulator runs several worker actors on one RpcServer (its
  // actors never run at the same time); OS-thread backends use one.
  const uint32_t workers = runtime.simulated() ? s.platform.cores_per_server : 1;
  const rpc::RpcServerOptions so = server_rpc_options(s, driver);
  // Server machines in platform order, each with the design's endpoints on
  // its host, numbered on.
  const uint32_t per_server = static_cast<uint32_t>(endpoints.size());
  for (uint32_t i = 0; i < s.platform.servers * per_server; ++i) {
    const uint32_t machine = i / per_server;
    const std::string name = "server" + std::to_string(machine) + endpoints[i % per_server].suffix;
    const NodeId host_of = i % per_server == 0 ? kInvalidNode : sh.servers[i - i % per_server];
    LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime.add_node({name, true, host_of}));
    Env env = runtime.setup_env(node);
    LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcServer::create(env, so));
    LOCUS_RETURN_IF_ERROR(driver.setup_server(i, env, *rpc));
    rpc::RpcServer* srv = rpc.get();
    const design::IndexDriver* drv = &driver;
    const bool serves_here = sh.serve_machine < 0 || machine == sh.serve_machine;
    for (uint32_t w = 0; serves_here && endpoints[i % per_server].rpc_workers && w < workers; ++w) {
      LOCUS_RETURN_IF_ERROR(runtime.spawn(node, name + ".worker" + std::to_string(w), ActorKind::kDaemon,
                                          [srv, drv](Env& env) {
                                            while (!env.stop_requested() || drv->keep_serving()) {
                                              srv->serve_once(10 * kMillisecond);
                                            }
                                          }));
    }
    rpcs.push_back(std::move(rpc));
    sh.servers.push_back(node);
    if (machine == sh.machine_nodes.size()) sh.machine_nodes.emplace_back();
    sh.machine_nodes[machine].push_back(node);
  }
  *setup = runtime.setup_env(sh.servers.front());
  sh.load_rng = *setup->random;
  return driver.load(s.workload, *setup->random);
}

Status spawn_daemons(Runtime& runtime, design::IndexDriver& driver, Shared& sh) {
  const size_t per_machine = sh.servers.size() / sh.machine_nodes.size();
  for (uint32_t i = 0; i < sh.servers.size(); ++i) {
    if (sh.serve_machine >= 0 && static_cast<int64_t>(i / per_machine) != sh.serve_machine) continue;  // a shadow
    for (design::DaemonSpec& d : driver.server_daemons(i)) {
      NodeId node = sh.servers[i];
      if (d.own_node) {
        LOCUS_ASSIGN_OR_RETURN(node, runtime.add_node({d.name, false, sh.servers[i]}));
        sh.machine_nodes[i / per_machine].push_back(node);
      }
      const ActorKind kind = d.polls ? ActorKind::kPollingDaemon : ActorKind::kDaemon;
      LOCUS_RETURN_IF_ERROR(runtime.spawn(node, d.name, kind, std::move(d.body)));
    }
  }
  return Status();
}

// When each crash happens: `n` distinct members of 0..count-1 drawn from
// faults.seed (a stream per kind, `salt`), each at a time drawn uniformly
// in [from_ns, until_ns) of the run (from its start), in time order.
std::vector<std::pair<Nanos, uint32_t>> plan_crashes(const scenario::Scenario& s, uint64_t salt, uint32_t n,
                                                     uint32_t count, Nanos from_ns, Nanos until_ns) {
  Random rng = Random(s.faults.seed).fork(salt);
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  const auto span = static_cast<uint64_t>(std::max<Nanos>(until_ns - from_ns, 1));
  std::vector<std::pair<Nanos, uint32_t>> plan;
  for (uint32_t k = 0; k < std::min(n, count); ++k) {
    std::swap(order[k], order[k + rng.uniform(count - k)]);
    plan.emplace_back(from_ns + static_cast<Nanos>(rng.uniform(span)), order[k]);
  }
  std::sort(plan.begin(), plan.end());
  return plan;
}

// One actor carries out every crash at its time in the run: `crash(env,
// index)` kills what the plan's index names.
Status spawn_crashes(Runtime& runtime, NodeId at, std::string name, std::vector<std::pair<Nanos, uint32_t>> plan,
                     const Shared& sh, std::function<void(Env&, uint32_t)> crash) {
  return runtime.spawn(at, std::move(name), ActorKind::kDaemon,
                       [plan = std::move(plan), &sh, crash = std::move(crash)](Env& env) {
                         const Nanos run_start = sh.wait_for_start(env);
                         if (run_start == Shared::kNotStarted) return;
                         for (const auto& [at_ns, index] : plan) {
                           if (!sleep_until(env, run_start + at_ns)) return;
                           crash(env, index);
                         }
                       });
}

// faults.crash_clients, .restart_after_ms, .crash_servers and
// .server_outage_ms, from the end of the warm-up to the end of the run. A
// restarted client is a new node on the crashed one's host, made and
// spawned now (no backend adds nodes mid-run), whose actor waits for its
// time and then runs as client `index` with history id clients + k.
Status spawn_crashes_and_restarts(const scenario::Scenario& s, Runtime& runtime, design::IndexDriver& driver,
                                  NodeId at, Shared& sh, const std::vector<NodeId>& clients,
                                  std::vector<ClientOutcome>* restarted) {
  const Nanos from_ns = to_ns(s.run.warmup_s);
  const Nanos until_ns = to_ns(s.run.duration_s);
  const auto client_plan =
      plan_crashes(s, 0xC7A5, s.faults.crash_clients, static_cast<uint32_t>(clients.size()), from_ns, until_ns);
  if (!client_plan.empty()) {
    LOCUS_RETURN_IF_ERROR(spawn_crashes(runtime, at, "faults.crash", client_plan, sh, [&runtime, &sh, clients](Env&, uint32_t c) {
      sh.crashed[c].store(true, std::memory_order_relaxed);
      (void)runtime.crash_node(clients[c]);
    }));
  }
  if (s.faults.restart_after_ns > 0) {
    restarted->resize(client_plan.size());
    static const std::atomic<bool> kNeverCrashed{false};
    for (uint32_t k = 0; k < client_plan.size(); ++k) {
      // Not a structured binding: clang (the fuzz build) refuses to capture one.
      const Nanos crash_ns = client_plan[k].first;
      const uint32_t c = client_plan[k].second;
      const std::string name = "client" + std::to_string(c) + ".restarted";
      LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime.add_node({name, false, clients[c]}));
      const uint32_t history_id = static_cast<uint32_t>(clients.size()) + k;
      const Nanos start_ns = crash_ns + s.faults.restart_after_ns;
      ClientOutcome* out = &(*restarted)[k];
      Shared* shp = &sh;
      LOCUS_RETURN_IF_ERROR(runtime.spawn(node, name, client_kind(s), [=](Env& env) {
        const Nanos run_start = shp->wait_for_start(env);
        if (run_start == Shared::kNotStarted || !sleep_until(env, run_start + std::min(start_ns, until_ns))) return;
        if (env.clock->now() < run_start + until_ns) run_client(env, c, history_id, kNeverCrashed, false, *shp, out);
      }));
    }
  }
  // Server machines: crash events carry the machine's index, and with
  // faults.server_outage_ms its return that long after carries index +
  // machines.
  const auto machines = static_cast<uint32_t>(sh.machine_nodes.size());
  auto server_plan = plan_crashes(s, 0x5E7C, s.faults.crash_servers, machines, from_ns, until_ns);
  if (server_plan.empty()) return Status();
  if (s.faults.server_outage_ns > 0) {
    for (size_t k = 0, n = server_plan.size(); k < n; ++k) {
      server_plan.emplace_back(server_plan[k].first + s.faults.server_outage_ns, server_plan[k].second + machines);
    }
    std::sort(server_plan.begin(), server_plan.end());
  }
  return spawn_crashes(runtime, at, "faults.crash_servers", server_plan, sh,
                       [&runtime, &sh, &driver, machines, restart = s.faults.restart_servers](Env& env,
                                                                                               uint32_t event) {
                         if (event >= machines) {
                           // Restarted processes rebuild their state before they answer again.
                           const auto per_machine = static_cast<uint32_t>(sh.servers.size()) / machines;
                           const uint32_t m = event - machines;
                           for (uint32_t e = m * per_machine; restart && e < (m + 1) * per_machine; ++e) {
                             if (Status st = driver.restart_server(e); st.is_ok()) {
                               sh.restarted_servers.fetch_add(1, std::memory_order_relaxed);
                             } else if (env.stop_requested()) {
                               // The run ended mid-recovery (a slow disk): the
                               // server was still recovering, which is no failure.
                               return;
                             } else {
                               sh.failed_restarts.fetch_add(1, std::memory_order_relaxed);
                               fmt::print(stderr, "faults.restart_servers: server endpoint {}: {}\n", e,
                                          st.to_string());
                             }
                           }
                           for (NodeId node : sh.machine_nodes[event - machines]) (void)runtime.revive_node(node);
                           sh.revived_servers.fetch_add(1, std::memory_order_relaxed);
                           return;
                         }
                         for (NodeId node : sh.machine_nodes[event]) (void)runtime.crash_node(node);
                         if (Status st = driver.server_machine_crashed(env, event); !st.is_ok()) {
                           fmt::print(stderr, "faults.crash_servers: machine {}: {}\n", event, st.to_string());
                         }
                         if (sh.crashed_servers.fetch_add(1, std::memory_order_relaxed) == 0) {
                           sh.first_server_crash_ns.store(env.clock->now(), std::memory_order_relaxed);
                         }
                       });
}

void report_faults(const fault::FaultStats& f, std::map<std::string, double>& extra) {
  for (const auto& [name, n] : {std::pair{"delayed", &f.delayed}, {"retry_exceeded", &f.retry_exceeded},
                                {"retry_exceeded_applied", &f.retry_exceeded_applied},
                                {"remote_access_error", &f.remote_access_error}, {"rnr", &f.rnr},
                                {"register_failure", &f.register_failure}, {"split_read", &f.split_read}}) {
    extra[std::string("faults.") + name] = static_cast<double>(n->load());
  }
}

// [check]: the load's puts, then every client's calls, judged by the
// design's model. A history that is not linearizable, or that the search
// could not decide within its budget, fails the run with the report.
Status check_run(const scenario::Scenario& s, const design::IndexDriver& driver, Shared& sh,
                 std::map<std::string, double>& extra) {
  check::History run = sh.history->merge();
  if (run.size() > s.check.max_ops) {
    return resource_exhausted(fmt::format(
        "check.linearizability: {} operations recorded, more than check.max_ops ({}): shorten run.duration_s or "
        "use fewer clients (the checker's memory grows with the history)",
        run.size(), s.check.max_ops));
  }
  check::History history;
  LOCUS_RETURN_IF_ERROR(driver.loaded_history(s.workload, *sh.load_rng, &history));
  const size_t loaded = history.size();
  check::sequence_load(history, loaded);
  history.insert(history.end(), std::make_move_iterator(run.begin()), std::make_move_iterator(run.end()));
  size_t pending = 0;
  for (const check::Operation& op : run) pending += op.pending() ? 1 : 0;
  check::CheckOptions options;
  options.time_budget_ns = to_ns(s.check.time_budget_s);
  LOCUS_ASSIGN_OR_RETURN(const check::CheckResult result, driver.check_history(history, options));
  extra["check.ops"] = static_cast<double>(run.size());
  extra["check.loaded"] = static_cast<double>(loaded);
  extra["check.pending"] = static_cast<double>(pending);
  extra["check.partitions"] = static_cast<double>(result.partitions);
  extra["check.violations"] = result.verdict == check::Verdict::kNotLinearizable ? 1 : 0;
  if (result.verdict == check::Verdict::kLinearizable) return Status();
  std::string written;
  if (!s.check.history_file.empty()) {
    std::ofstream out(s.check.history_file);
    for (size_t i = 0; i < history.size(); ++i) out << '#' << i << ' ' << check::describe(history[i]) << '\n';
    written = out ? "; the history is in " + s.check.history_file : "; could not write " + s.check.history_file;
  }
  std::string report = result.report(history) + written;
  if (report.size() > 4000) report = report.substr(0, 4000) + "\n...";
  return Status(result.verdict == check::Verdict::kUnknown ? StatusCode::kTimeout : StatusCode::kCorruption,
                fmt::format("check.linearizability: {} operations (faults.seed {}): {}", run.size(), s.faults.seed,
                            report));
}

}  // namespace

StatusOr<ScenarioReport> run_scenario(const scenario::Scenario& s, const design::Registry& designs,
                                      const ScenarioRuntimeFactory& make_runtime, const RunOptions& options) {
  const design::Placement& placement = options.placement;
  if (!placement.servers_here && !placement.clients_here) {
    return invalid_argument("run_scenario: neither the servers nor the clients run here");
  }
  if (!placement.clients_here && options.stop == nullptr) {
    return invalid_argument("run_scenario: serving without clients needs a stop flag");
  }
  const design::Design* design = designs.find(s.index.type);
  if (design == nullptr) return scenario::setting_error(s, "index.type", "'" + s.index.type + "' is not a design of this build");
  // The runtime outlives everything registered on it: declared first. It
  // is made after the memory check, so that a run that cannot fit opens no
  // device (verbs) and builds no platform.
  std::unique_ptr<Runtime> runtime;
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<design::IndexDriver> driver, design->make_driver(s, placement));
  LOCUS_RETURN_IF_ERROR(check_memory(s, *driver, placement, options, sizeof(ClientOutcome)));
  runtime = make_runtime(s);
  fault::FaultRuntime* faults = nullptr;
  if (s.faults.any()) {
    auto wrapped = std::make_unique<fault::FaultRuntime>(std::move(runtime), s.faults);
    faults = wrapped.get();
    runtime = std::move(wrapped);
  }
  const std::vector<design::EndpointSpec> endpoints = driver->server_endpoints();
  if (endpoints.empty()) return internal_error("design " + s.index.type + " has no server endpoints");
  Shared sh;
  sh.scenario = &s;
  sh.driver = driver.get();
  if (s.check.linearizability) {
    if (!placement.servers_here || !placement.clients_here) {
      return scenario::setting_error(s, "check.linearizability", "needs the servers and the clients in this one run");
    }
    sh.history.emplace();
  }
  LOCUS_RETURN_IF_ERROR(check_clients_on_servers(s, placement));
  sh.serve_machine = options.serve_machine;
  sh.servers_outlive_run = !placement.servers_here || options.serve_machine >= 0;
  LOCUS_RETURN_IF_ERROR(check_serve_machine(s, options));
  if (s.faults.crash_servers > 0 && !placement.servers_here) {
    return scenario::setting_error(s, "faults.crash_servers", "crashes servers of this run, and it runs none here");
  }
  std::vector<std::unique_ptr<rpc::RpcServer>> rpcs;
  Env setup;  // of the first server, or with the servers elsewhere of the first client
  if (placement.servers_here) {
    if (Status st = start_servers(s, *runtime, *driver, endpoints, sh, rpcs, &setup); !st.is_ok()) {
      runtime->abandon();  // the RPC workers already spawned end before `rpcs` does
      return st;
    }
  } else {
    for (uint32_t i = 0; i < s.platform.servers * endpoints.size(); ++i) sh.servers.push_back(i);
  }
  sh.inserts = workload::Workload::make_insert_counter(s.workload);
  if (s.output.timeseries_ms > 0) {
    sh.timeseries.init(std::max<Nanos>(1, to_ns(s.output.timeseries_ms / 1e3)), to_ns(s.run.duration_s));
  }

  const uint32_t clients = placement.clients_here ? s.run.clients : 0;
  std::vector<ClientOutcome> outcomes(clients);
  std::vector<ClientOutcome> restarted;  // faults.restart_after_ms: the crashed clients' new processes
  sh.crashed = std::make_unique<std::atomic<bool>[]>(clients);
  NodeId first_client = kInvalidNode;
  std::vector<NodeId> client_nodes;
  std::vector<uint32_t> client_index;  // of each of client_nodes
  const uint32_t per_machine = static_cast<uint32_t>(endpoints.size());
  for (uint32_t c = 0; c < clients; ++c) {
    // serve_machine: the other machines' clients run in their processes.
    if (options.serve_machine >= 0 && c % s.platform.servers != options.serve_machine) continue;
    // run.clients_on_servers: round-robin over the machines, on the
    // host of each machine's first endpoint.
    const NodeId host_of = s.run.clients_on_servers ? sh.servers[(c % s.platform.servers) * per_machine] : kInvalidNode;
    LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime->add_node({"client" + std::to_string(c), false, host_of}));
    client_nodes.push_back(node);
    client_index.push_back(c);
    if (first_client == kInvalidNode) first_client = node;
  }
  const auto spawn_clients = [&]() -> Status {
    for (size_t k = 0; k < client_nodes.size(); ++k) {
      const uint32_t c = client_index[k];
      ClientOutcome* out = &outcomes[c];
      Shared* shp = &sh;
      LOCUS_RETURN_IF_ERROR(runtime->spawn(client_nodes[k], "client" + std::to_string(c), client_kind(s),
                                           [c, shp, out](Env& env) {
                                             run_client(env, c, c, shp->crashed[c], true, *shp, out);
                                           }));
    }
    return Status();
  };
  // The machines served here: all, or serve_machine's endpoints.
  const NodeId* served = sh.servers.data();
  size_t served_count = sh.servers.size();
  if (options.serve_machine >= 0) {
    served += options.serve_machine * per_machine;
    served_count = per_machine;
  }
  if (options.on_servers_ready && placement.servers_here) {
    LOCUS_RETURN_IF_ERROR(options.on_servers_ready(*runtime, std::span<const NodeId>(served, served_count)));
  }
  if (!placement.servers_here) setup = runtime->setup_env(first_client);
  // The run starts (Shared::run_start) now in simulated time, which stands
  // still until the actors run, and on OS threads once the local clients
  // have connected.
  if (runtime->simulated() || client_nodes.empty()) {
    sh.run_start.store(setup.clock->now(), std::memory_order_release);
  } else {
    sh.clients_to_start = static_cast<uint32_t>(client_nodes.size());
  }
  // The fault timer and the crash and restart actors.
  const auto spawn_faults = [&]() -> Status {
    if (faults == nullptr) return Status();
    // Loading and connecting run clean; faults start with the measured run.
    const NodeId at = placement.servers_here ? served[0] : first_client;
    const Nanos warmup = to_ns(s.run.warmup_s);
    LOCUS_RETURN_IF_ERROR(runtime->spawn(at, "faults", ActorKind::kObserver, [faults, &sh, warmup](Env& env) {
      const Nanos run_start = sh.wait_for_start(env);
      if (run_start == Shared::kNotStarted) return;
      (void)sleep_until(env, run_start + warmup);
      faults->arm();
    }));
    return spawn_crashes_and_restarts(s, *runtime, *driver, at, sh, client_nodes, &restarted);
  };
  // On OS threads an actor begins when its thread is made, in spawn order,
  // and threads made behind busy clients begin late (1.4 s under TSan
  // behind ~40): the fault timer and crash actors go before the clients,
  // waiting for the run's start, so that they act on time. The simulator
  // keeps its order (clients, daemons, faults), which its actors' Randoms
  // are forked by, so its runs replay as before.
  if (!runtime->simulated()) LOCUS_RETURN_IF_ERROR(spawn_faults());
  LOCUS_RETURN_IF_ERROR(spawn_clients());
  if (placement.servers_here) LOCUS_RETURN_IF_ERROR(spawn_daemons(*runtime, *driver, sh));
  if (runtime->simulated()) LOCUS_RETURN_IF_ERROR(spawn_faults());
  if (!placement.clients_here || (options.serve_machine >= 0 && options.stop != nullptr)) {
    // Serving until told to stop: one worker actor keeps the run going
    // (a node with its own clients serves its peers' after they end).
    const std::atomic<bool>* stop = options.stop;
    LOCUS_RETURN_IF_ERROR(runtime->spawn(served[0], "until-stop", ActorKind::kWorker, [stop](Env& env) {
      while (!stop->load(std::memory_order_acquire)) env.clock->sleep_for(10 * kMillisecond);
    }));
  }
  if (options.on_progress && placement.clients_here) {
    const Nanos step = std::max<Nanos>(to_ns(s.run.duration_s) / 100, 1);
    const Nanos duration = to_ns(s.run.duration_s);
    const auto& on_progress = options.on_progress;
    const NodeId at = placement.servers_here ? served[0] : first_client;
    LOCUS_RETURN_IF_ERROR(runtime->spawn(at, "progress", ActorKind::kObserver,
                                         [&sh, &on_progress, step, duration](Env& env) {
                                           const Nanos run_start = sh.wait_for_start(env);
                                           while (run_start != Shared::kNotStarted && !env.stop_requested()) {
                                             env.clock->sleep_for(step);
                                             const Nanos t = env.clock->now() - run_start;
                                             on_progress({std::min(1.0, static_cast<double>(t) / static_cast<double>(duration)),
                                                          sh.ops.load(std::memory_order_relaxed)});
                                             if (t >= duration) break;
                                           }
                                         }));
  }
  LOCUS_RETURN_IF_ERROR(runtime->run());

  ScenarioReport report;
  metrics::RunResult& r = report.result;
  r.name = s.output.name;
  r.backend = std::string(runtime->backend_name());
  r.index = s.index.type;
  r.seed = s.run.seed;
  r.duration_ns = to_ns(s.run.duration_s - s.run.warmup_s);
  uint64_t server_choices = 0, client_choices = 0;
  metrics::OpStats warmup_counters;  // every client's, at its window's start
  for (uint32_t c = 0; c < outcomes.size(); ++c) {
    const ClientOutcome& o = outcomes[c];
    // A client that never connected could not run; one whose operations all
    // failed (a dead server, injected faults) is counted in failed_ops.
    if (!o.error.is_ok() && !o.connected && !sh.crashed[c].load()) {
      return Status(o.error.code(), "a client could not run: " + o.error.message());
    }
    r.stats.merge(o.stats);
    warmup_counters.merge(o.warmup_counters);
    if (r.first_failure.empty() && !o.error.is_ok()) r.first_failure = o.error.to_string();
    server_choices += o.server_choices;
    client_choices += o.client_choices;
  }
  // A restarted client may find its servers dead (faults.crash_servers):
  // its failure is a failed operation of the run, not the run's. It counts
  // as restarted once a call of it was answered.
  uint32_t restarts_served = 0;  // restarted clients that had a call answered
  for (const ClientOutcome& o : restarted) {
    r.stats.merge(o.stats);
    warmup_counters.merge(o.warmup_counters);
    if (r.first_failure.empty() && !o.error.is_ok()) r.first_failure = o.error.to_string();
    server_choices += o.server_choices;
    client_choices += o.client_choices;
    restarts_served += o.stats.total_ops() > o.stats.total_failed() ? 1 : 0;
  }
  if (placement.clients_here && r.stats.total_ops() == 0) {
    return Status(StatusCode::kTimeout,
                  fmt::format("no operation finished between run.warmup_s ({:g} s) and run.duration_s ({:g} s) of {}",
                              s.run.warmup_s, s.run.duration_s, runtime->backend_name()) +
                      (runtime->simulated()
                           ? " time"
                           : " wall time: lengthen the run (--set "
                             "run.duration_s=2 --set run.warmup_s=0.5)"));
  }
  if (server_choices + client_choices > 0) {
    r.extra["server_share"] = static_cast<double>(server_choices) / static_cast<double>(server_choices + client_choices);
  }
  r.extra["servers"] = s.platform.servers;
  r.extra["clients"] = s.run.clients;
  if (placement.clients_here) {
    // Over the measured window: the counters less what the warm-up did.
    metrics::OpStats measured = r.stats;
    for (const auto& c : warmup_counters.counters()) measured.add(measured.counter(c.name), -c.value);
    driver->report_mechanism(measured, r.extra);
  }
  if (placement.servers_here) {
    driver->report_servers(r.extra);
    uint64_t rejected = 0, requests = 0, send_failures = 0;
    for (const auto& rpc : rpcs) {
      rejected += rpc->stats().rejected();
      requests += rpc->stats().requests;
      send_failures += rpc->stats().send_failures;
    }
    r.extra["rpc_rejected"] = static_cast<double>(rejected);
    // Responses that could not be delivered (a dead client, or one that
    // never reads its responses).
    r.extra["rpc_send_failures"] = static_cast<double>(send_failures);
    if (!placement.clients_here) r.extra["rpc_requests"] = static_cast<double>(requests);
  }
  r.resources = runtime->resource_usage();
  metrics::set_power(r, runtime->host_power());
  if (faults != nullptr) {
    report_faults(faults->stats(), r.extra);
    uint32_t crashed = 0;
    for (uint32_t c = 0; c < clients; ++c) crashed += sh.crashed[c].load() ? 1 : 0;
    r.extra["faults.crashed_clients"] = crashed;
    if (s.faults.restart_after_ns > 0) r.extra["faults.restarted_clients"] = restarts_served;
    if (s.faults.crash_servers > 0) {
      r.extra["faults.crashed_servers"] = sh.crashed_servers.load();
      r.extra["faults.ok_after_server_crash"] = static_cast<double>(sh.ok_after_server_crash.load());
      if (s.faults.server_outage_ns > 0) r.extra["faults.revived_servers"] = sh.revived_servers.load();
      if (s.faults.restart_servers) {
        r.extra["faults.restarted_servers"] = sh.restarted_servers.load();
        r.extra["faults.failed_restarts"] = sh.failed_restarts.load();
      }
    }
  }
  if (sh.history) LOCUS_RETURN_IF_ERROR(check_run(s, *driver, sh, r.extra));
  report.total_ops = sh.ops.load();
  report.timeseries = sh.timeseries.windows(s.run.duration_s, [&s](Nanos t) {
    Nanos unused = 0;
    return active_clients(s, t, &unused);
  });
  return report;
}

}  // namespace locus::runner
