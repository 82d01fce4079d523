// IndexDriver: what the runner (core/runner) needs from a design: set its
// servers up (handlers, load, daemon actors beside them) and open a client
// session (client_session.h) that turns YCSB operations into the design's
// own calls. One implementation per design, in its folder (driver.cc);
// `locus sim`, `locus run` on loopback or verbs and `locus serve` all
// deploy through it.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/check/history.h"
#include "core/check/linearizability.h"
#include "core/design/client_session.h"
#include "core/design/memory_math.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/scenario/scenario.h"
#include "core/transport/endpoint.h"
#include "core/workload/workload.h"

namespace locus::design {

// Where this process's share of a run is: every server and client in it
// (the simulator, loopback), or one side of a deployment split across
// processes (verbs: `locus serve` runs the servers, `locus run` the
// clients, which reach the servers only through the transport).
struct Placement {
  bool servers_here = true;
  bool clients_here = true;
};

// One endpoint of a server machine. A design whose server runs several
// threads with queue pairs of their own (Catfish's messaging worker per
// core) has several; they share the machine's cores and NIC. With
// rpc_workers the runner serves the endpoint's RpcServer with worker
// actors; without, the design's own daemons take its completions.
struct EndpointSpec {
  std::string suffix;  // appended to "server<i>" for the endpoint's name
  bool rpc_workers = true;
};

// A daemon actor a server endpoint needs besides its RPC workers (Cell's
// split worker, Catfish's messaging workers). With own_node it runs on an
// endpoint of its own (so its RPC client does not share the server's
// receive queue) on the server's machine: its CPU time, NIC and link use
// count against that server, as where the serving process runs it.
struct DaemonSpec {
  std::string name;
  bool own_node = false;
  std::function<void(Env&)> body;  // must return soon after env.stop_requested()
  // Its real counterpart busy-polls for work (ActorKind::kPollingDaemon).
  bool polls = false;
};

// What part of a run takes in memory, and the settings that drive it (for
// a refusal that names them).
struct MemoryEstimate {
  uint64_t bytes = 0;
  std::string driven_by;
};

class IndexDriver {
 public:
  virtual ~IndexDriver() = default;
  // The endpoints of each server machine, in order; server endpoint k of
  // machine m is number m * server_endpoints().size() + k everywhere below.
  virtual std::vector<EndpointSpec> server_endpoints() const { return {EndpointSpec{}}; }
  // Creates server endpoint `endpoint`'s state on its node and registers
  // its handlers. Only where the servers are placed.
  virtual Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) = 0;
  // Loads the workload's records (after every server endpoint is set up).
  virtual Status load(const workload::WorkloadSpec& spec, Random& rng) = 0;
  // Opens a session for one client actor; `servers` are the server
  // endpoints' nodes, in order (on verbs with the servers elsewhere, the
  // cluster file's entries).
  virtual StatusOr<std::unique_ptr<ClientSession>> connect(Env& env, Endpoint& endpoint, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) = 0;
  // run.clients_on_servers: the same for a client placed on server
  // machine `machine`, beside its endpoints (in this process where the
  // servers are placed). A design whose clients take shortcuts to their
  // own machine's state overrides it; the rest open an ordinary session.
  virtual StatusOr<std::unique_ptr<ClientSession>> connect_on_server(Env& env, Endpoint& endpoint,
                                                                     rpc::RpcClient& rpc,
                                                                     std::span<const NodeId> servers,
                                                                     uint32_t machine) {
    (void)machine;
    return connect(env, endpoint, rpc, servers);
  }
  // Numbers for the results from the servers (counters, store sizes).
  // Only where the servers are placed.
  virtual void report_servers(std::map<std::string, double>& extra) const = 0;
  // Ratios over the clients' counters (`clients`, every session's summed)
  // that show how the design did its work: READs per operation, cache hit
  // rates, probes per get, for checking the mechanism against the papers'
  // text. Only where the clients are placed. `clients`: their counters
  // over the measured window (after run.warmup_s), operations as recorded.
  virtual void report_mechanism(const metrics::OpStats& clients, std::map<std::string, double>& extra) const {
    (void)clients;
    (void)extra;
  }
  // Daemons for server endpoint `endpoint`, spawned after load() and the clients.
  virtual std::vector<DaemonSpec> server_daemons(uint32_t endpoint) {
    (void)endpoint;
    return {};
  }
  // Server endpoint `endpoint` restarts as a new process would: its memory
  // is lost and its state rebuilt from its log (faults.restart_servers).
  // Only designs that log can.
  virtual Status restart_server(uint32_t endpoint) {
    return unimplemented("server endpoint " + std::to_string(endpoint) +
                         ": this design keeps no log, so its servers cannot restart");
  }
  // `locus serve --node K` (RunOptions::serve_machine): whether each server
  // machine can be served by a process of its own, every process running
  // the same load and keeping only its machine's memory live. A design
  // whose clients learn every server's registrations from one server, or
  // whose servers change each other's memory in-process, cannot.
  virtual Status check_one_machine_per_process() const { return Status(); }

  // Server machine `machine`'s endpoints were just crashed
  // (faults.crash_servers), on the fault actor's `env`: a design whose
  // survivors take over a dead server's data starts that here.
  virtual Status server_machine_crashed(Env& env, uint32_t machine) {
    (void)env, (void)machine;
    return Status();
  }
  // True while the servers must go on serving after stop was requested
  // (a daemon is mid-way through work that needs them).
  virtual bool keep_serving() const { return false; }
  // The RPC message limit (header included) of servers and clients, so
  // each receive buffer holds the largest request or response. Every
  // server posts up to a thousand of them, which a large platform pays
  // for in memory: a design that knows its messages' size says so.
  virtual uint32_t rpc_message_bytes() const { return kDefaultRpcMessageBytes; }

  // Memory, estimated before anything is allocated from the design's own
  // sizes: every server's state (where the servers run here), and one
  // client's. The runner refuses a run whose total exceeds what the
  // machine has (RunOptions::max_memory_bytes). 0: not estimated.
  virtual MemoryEstimate server_memory() const { return {}; }
  virtual MemoryEstimate client_memory() const { return {}; }

  // [check] (linearizability): the operations that gave the index its
  // state before the run, i.e. the records load() stored, drawn again from
  // `rng`, a copy of the Random load() was given, as completed calls
  // before any client's, in the order load() stored them (the runner
  // gives them one after another, check::sequence_load); and the verdict on a history against the
  // design's sequential model (check/models.h). A design without them
  // cannot be checked.
  virtual Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const {
    (void)spec, (void)rng, (void)out;
    return unimplemented("this design cannot record its load for a linearizability check");
  }
  virtual StatusOr<check::CheckResult> check_history(const check::History& history,
                                                     const check::CheckOptions& options) const {
    (void)history, (void)options;
    return unimplemented("this design has no sequential model for a linearizability check");
  }

  static constexpr uint32_t kDefaultRpcMessageBytes = 4096;
  // A limit that holds a record of max_kv_bytes with room for a design's
  // own fields, and at least a page.
  static uint32_t rpc_message_bytes_for(uint32_t max_kv_bytes) {
    return std::max<uint32_t>(kDefaultRpcMessageBytes, max_kv_bytes + 1024);
  }
};

}  // namespace locus::design
