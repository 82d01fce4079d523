// Runtime: how a backend creates endpoints and runs actors. A loopback
// actor is an OS thread; a SimGrid actor is a simulated process. Core code
// only sees the Env each actor is handed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/metrics/resource_usage.h"
#include "core/transport/env.h"

namespace locus {

enum class ActorKind {
  kWorker,  // run() waits for it to return
  kDaemon,  // a server loop: must return soon after env.stop_requested()
  // A daemon that only sleeps and looks (a progress reporter, a fault
  // timer): it charges no CPU, so a simulating backend does not count it
  // against its host's cores (counted, it made a 28-core Catfish server
  // with 28 workers a contended host, its CPU simulated the slow way).
  kObserver,
  // A daemon whose real counterpart busy-polls (a HERD-style server
  // thread): it keeps a core busy while it waits, which a simulating
  // backend models (CPU contention, power); elsewhere a daemon.
  kPollingDaemon,
  // A worker whose real counterpart busy-polls for its completions (a
  // client polling watermark bits, [platform] polling_clients): a
  // simulating backend keeps a core busy for it throughout; elsewhere a
  // worker.
  kPollingWorker,
};

// run() waits for workers, polling or not.
inline bool is_worker(ActorKind kind) { return kind == ActorKind::kWorker || kind == ActorKind::kPollingWorker; }
// What a simulating backend keeps a core busy for.
inline bool busy_polls(ActorKind kind) {
  return kind == ActorKind::kPollingDaemon || kind == ActorKind::kPollingWorker;
}

struct NodeOptions {
  std::string name;       // for messages: "server0", "client3"
  bool is_server = false;
  // Simulating backends: put this endpoint on that node's machine (its
  // cores, NIC, links), as another thread of one server process would be.
  // Other backends give every endpoint its own queue pair and ignore it.
  NodeId host_of = kInvalidNode;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string_view backend_name() const = 0;
  // Whether time is simulated (SimGrid): actors are coroutines of one OS
  // thread that never run at once, so several may share an RpcServer, and
  // the clock stands still while set-up code runs. Else actors are OS
  // threads and the clock is the wall clock.
  virtual bool simulated() const { return false; }

  // Creates an endpoint with its own Transport and returns its id.
  virtual StatusOr<NodeId> add_node(const NodeOptions& options) = 0;
  // Schedules fn to run as an actor on `node`, with an Env whose Random is
  // forked from the run's seed by actor order (so runs are reproducible).
  virtual Status spawn(NodeId node, std::string name, ActorKind kind,
                       std::function<void(Env&)> fn) = 0;
  // Runs until every worker has returned, then stops the daemons.
  virtual Status run() = 0;
  // Set-up failed before run(): actors already spawned run with
  // stop_requested() true and return (they must check it first). Call it
  // while what they use still exists.
  virtual void abandon() {}
  // Env for set-up code outside any actor (registering regions, loading).
  virtual Env setup_env(NodeId node) = 0;
  // Fault injection: the node stops answering, as if its host died. Requests
  // to it complete with kRetryExceeded once a real queue pair's transport
  // retries would have run out (RcRetry, rc_retry.h; ~0.54 s by default);
  // its own actors see kFlushed.
  virtual Status crash_node(NodeId node) = 0;
  // Fault injection: a crashed node answers again, with its memory and
  // registrations, as a host whose network came back (not a restarted
  // process, which would have lost its memory). Connections that broke
  // stay broken: peers see errors on them and connect again.
  virtual Status revive_node(NodeId node) = 0;

  // Utilisation of each modelled resource over the last run(); empty on
  // backends that model nothing (loopback, verbs).
  virtual std::vector<ResourceUsage> resource_usage() const { return {}; }
  // Each host's average power and energy over the last run(); empty where
  // nothing models power (loopback, verbs, a platform without [platform.power]).
  virtual std::vector<HostPower> host_power() const { return {}; }
};

}  // namespace locus
