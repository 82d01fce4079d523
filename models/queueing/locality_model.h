// The locality model: what a client population gets from a set of servers
// when each request is either shipped to a server's CPU (server-side, RPC)
// or carried out with one-sided READs (client-side), in a given proportion.
//
// A server is three queueing stations: its CPU (k cores sharing one FCFS
// queue, service time s per server-side operation), its NIC's READ engine
// and its NIC's verb-messaging engine. A server-side operation visits the
// CPU once and the verb engine for `messages_per_server_op` messages and
// spends one network round trip; a client-side operation makes m READs in
// r round trips (r = m when each READ waits for the previous one, fewer
// when a round issues several together), each READ a visit to the READ
// engine, and may spend client CPU time. Clients form a closed population
// with optional think time, solved by exact MVA.
//
// Per-server shares. By default requests spread evenly over the servers.
// A design whose placement loads servers unevenly (Cell's meganodes, the
// NAM index's root on one memory server) gives each server's share of the
// server-side work and of the READs; the network then has one station set
// (CPU, READ engine, verb engine) per server, servers with equal shares
// folded into one set of copies. Exact MVA needs 2^(distinct servers)
// sweeps for multi-server CPUs, so past kMaxExactServerClasses distinct
// servers predictions use the approximate MVA (closed_network.h).
//
// NIC partial independence (calibration.md: ~80% of peak READ rate while
// verbs run at ~95% of theirs). The two engines are separate stations, so
// alone each reaches its peak; jointly the NIC is held to the linear limit
//   u_read + u_verb <= f_read + f_verb   (u = fraction of each peak rate),
// the line through the measured point with equal weights. Where an
// operation mix would cross that line both engines are slowed by the same
// factor phi >= 1, chosen so the binding constraint becomes the engines'
// own. f_read + f_verb = 2 means fully independent, 1 fully shared.
//
// p (server_side_share) is the fraction of operations done server-side.
// Sanity anchors (one server, one core, 6.3 us, 1.44 M READs/s, m = 5):
// p = 1 saturates at 158.7 K ops/s, p = 0 at 288 K, p = 0.355 at 446.7 K.
//
// p99: each path (RPC, traversal) is its fixed part (round trips, service
// times) plus its waits, whose moments come from the queue lengths exact
// MVA gives an arriving request, with fixed service times (service_scv 0)
// and the waits of one request's visits to the same NIC engine taken as
// fully correlated (it meets the same queue m times); the two paths mix in
// proportion p. See latency_tail.h. Measured against a simulation of the
// same system with fixed service times (locality_simulation_test):
// throughput and mean latency within 10%, p99 from -14% to +39% (mostly
// conservative), except with two saturated, balanced bottlenecks where
// product form spreads the queues far more than fixed service does and p99
// comes out about twice too high.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "models/queueing/closed_network.h"

namespace locus::models {

struct LocalityPlatform {
  int servers = 1;
  int cores_per_server = 1;
  double server_op_service_time_us = 6.3;   // server CPU per server-side op, messaging included
  double nic_read_rate_ops_per_s = 1.44e6;  // peak one-sided READs per NIC (node-sized)
  double nic_verb_rate_msgs_per_s = 1.5e6;  // peak verb messages per NIC (Cell: 750 K two-way)
  double nic_read_share_with_verbs = 0.80;  // f_read: READ share of peak alongside ...
  double nic_verb_share_with_reads = 0.95;  // ... f_verb: verb share of peak
  // Links as stations: the time a READ's response takes on a link (the
  // server's outgoing, the client host's incoming), 0 to leave links out
  // (their latency then sits in network_rtt_us). The client hosts' links
  // are shared by the clients on each host (client_hosts of them, clients
  // spread evenly); 0 hosts: every client its own.
  double link_us_per_read = 0;
  int client_hosts = 0;
  // An RPC's response's serialisation on a link, for designs whose
  // responses are large (NessieSD's values): it queues at the client
  // host's incoming link (cut-through holds the server's outgoing one at
  // the same time, so one station stands for both); 0: the RPC leaves the
  // links out (their time in the RPC's round trip).
  double link_us_per_rpc = 0;
  // Polling server threads that run the server-side handlers (NessieSD's),
  // each holding a core whether or not requests come; 0: the handlers
  // share all cores_per_server, busy only while they run. The CPU station
  // has min(server_threads, cores_per_server) servers when set.
  int server_threads = 0;
  // Variability of the CPU and NIC service times for the p99 estimate
  // (squared coefficient of variation): 0 for fixed costs, as calibrated.
  double service_scv = 0.0;
};

// Each server's share of the server-side work and of the READs (each
// `servers` entries summing to 1); empty means an even spread.
struct ServerShares {
  std::vector<double> work;
  std::vector<double> read;
};
// A design's placement at a given server count (the planner varies it).
using ServerSharesFor = std::function<ServerShares(int servers)>;

struct LocalityWorkload {
  int clients = 1;                 // closed population, one op outstanding each
  double think_time_us = 0;        // between a reply and the next request
  double network_rtt_us = 3.0;     // per READ and per RPC, excluding NIC service
  double reads_per_client_op = 5;  // m: READs of one client-side operation
  // r: network round trips of one client-side operation, when its READs go
  // out in multi-issue rounds (a tree level's READs together); 0 means one
  // per READ. The client pays r network delays, the READ engine serves all m.
  double round_trips_per_client_op = 0;
  double messages_per_server_op = 2;  // verb messages at the server NIC per RPC
  // One-sided READs a server-side operation makes after its RPC, one round
  // trip each (the NAM hybrid's leaf READ after the inner levels' RPC).
  double reads_per_server_op = 0;
  double client_cpu_us_per_client_op = 0;  // client processing of one client-side op
  // The RPC's network round trip when its bytes differ from a READ's (a
  // request and response of their own sizes); negative: network_rtt_us.
  double rpc_network_rtt_us = -1;
};

struct LocalityInput {
  LocalityPlatform platform;
  LocalityWorkload workload;
  ServerShares shares;         // for platform.servers; empty: even
  ServerSharesFor shares_for;  // optional: shares at another server count

  Status validate() const;
  // r, resolving 0 to one round trip per READ.
  double client_round_trips() const;
  // The RPC's round trip, resolving a negative rpc_network_rtt_us.
  double rpc_round_trip_us() const;
  // Servers of the CPU station: the polling threads, else every core.
  int cpu_servers() const;
  // Cores busy at a server whose CPU station is `utilisation` busy: the
  // polling threads whatever the load, else the cores at that utilisation.
  double busy_cores(double utilisation) const;
};

struct LocalityPrediction {
  double server_side_share = 0;  // p
  double throughput_ops_per_s = 0;
  double mean_latency_us = 0;         // think time excluded
  double p99_latency_us = 0;          // see latency_tail.h for the method
  double server_side_latency_us = 0;  // mean of an RPC and its READs (whether or not used)
  double client_side_latency_us = 0;  // mean of a READ traversal (whether or not used)
  // At the busiest server (every server when the spread is even).
  double cpu_utilisation = 0;       // per core
  double nic_read_utilisation = 0;  // fraction of the peak READ rate, per NIC
  double nic_verb_utilisation = 0;  // fraction of the peak verb rate, per NIC
  double nic_slowdown = 1;          // phi, 1 unless the joint NIC limit binds (the largest)
  // The busiest station ("server cpu", "nic read", "nic verbs", engines
  // counted at their slowed rate), or "clients" when none is half busy.
  std::string bottleneck;
};

// Station order in locality_network(): three delays, then per server
// class (servers of equal shares) its CPU, READ engine and verb engine,
// and its outgoing link when links are stations (then last, the client
// hosts' links).
enum LocalityStation : int {
  kNetworkDelay = 0,
  kClientCpuDelay,
  kThinkDelay,
  kServerCpu,  // of the first server class; class j at kServerCpu + 3 j
  kNicRead,
  kNicVerbs,
  kLocalityStationCount,  // with one server class
};
int stations_per_server_class(const LocalityInput& input);
constexpr int kMaxExactServerClasses = 12;

// Servers with equal shares, folded: `count` servers, each taking `work`
// of the server-side work and `read` of the READs.
struct ServerClass {
  int count = 1;
  double work = 1;
  double read = 1;
};
std::vector<ServerClass> server_classes(const LocalityInput& input);
// The input at another server count, its shares recomputed by shares_for
// (an even spread when it has none).
LocalityInput with_servers(const LocalityInput& input, int servers);

// The closed network for split p; exposed so tests can hand it to the CTMC.
ClosedNetwork locality_network(const LocalityInput& input, double server_side_share);
// phi for split p (1 when the joint NIC limit does not bind), at a server
// taking `work` of the server-side work and `read` of the READs (an even
// server when both are equal).
double nic_slowdown(const LocalityInput& input, double server_side_share, double work = 1, double read = 1);

// Reads a prediction for `clients` off a sweep of locality_network(input, p);
// works for exact and approximate sweeps. p99 is skipped (left 0) unless asked.
LocalityPrediction prediction_from_sweep(const LocalityInput& input, double server_side_share, const MvaSweep& sweep,
                                         int clients, bool with_p99);

// Exact MVA of locality_network(input, p) to `clients`, or the approximate
// MVA past kMaxExactServerClasses distinct servers.
StatusOr<MvaSweep> solve_locality(const LocalityInput& input, double server_side_share, int clients);

// Exact prediction for a fixed split 0 <= p <= 1.
StatusOr<LocalityPrediction> predict_split(const LocalityInput& input, double server_side_share);

// Upper bound on throughput as clients grow without limit, for split p.
double saturation_throughput_ops_per_s(const LocalityInput& input, double server_side_share);
// The split maximising saturation_throughput (where the bottlenecks balance).
double balanced_split(const LocalityInput& input);

// Every policy the selectors can reach, for the input's population.
struct LocalityReport {
  LocalityPrediction server_only;              // p = 1
  LocalityPrediction client_only;              // p = 0
  LocalityPrediction optimal;                  // p* maximising throughput (= minimising mean latency)
  LocalityPrediction jsq_equilibrium;          // where Cell's rule (1) is indifferent
  double balanced_split = 0;                   // p* as the population grows without bound
  double saturation_throughput_ops_per_s = 0;  // at balanced_split
};
StatusOr<LocalityReport> predict_policies(const LocalityInput& input);

// p* for the input's population, by exact MVA: a grid then golden section.
StatusOr<double> optimal_split(const LocalityInput& input);
// The split where Cell's JSQ rule is indifferent: l_s - RTT = m (l_r - RTT),
// with l_s the RPC latency, l_r the latency of one READ and RTT the unloaded
// READ latency. 0 or 1 when one side is always preferred. Under heavy load
// it approaches balanced_split; under light load it leans client-side,
// because the rule compares queueing, not the m - 1 extra round trips.
StatusOr<double> jsq_equilibrium_split(const LocalityInput& input);

}  // namespace locus::models
