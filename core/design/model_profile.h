// What a design tells the analytic models (models/queueing, `locus model`,
// `locus plan`) about one scenario: the work of one operation on each path,
// as counts and sizes, with the CPU costs taken from the scenario's own
// [platform.cpu] table. A design brings this with it (its folder's
// model.cc, registered with the design); the command line turns it into the
// locality model's input with the platform's NIC rates and links, so the
// design says what an operation does and never how the platform serves it.
//
// Every figure must come from the same sources as the simulator: the
// design's keys and structure (node sizes, tree heights, cached levels),
// the scenario's calibrated or measured handler costs. `derivation` says,
// line by line, how each figure was obtained; `locus model` prints it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario/scenario.h"

namespace locus::design {

// Each server's share of the server-side work and of the READs (entries
// per server, each list summing to 1), from where the design places its
// data; `derivation` says how.
struct ServerShares {
  std::vector<double> work;
  std::vector<double> read;
  std::string derivation;
};

struct ModelProfile {
  // Client-side path: one operation done with one-sided READs.
  double reads_per_client_op = 0;          // mean READs (every READ visits the server NIC's READ engine)
  double read_bytes = 0;                   // mean bytes per READ
  double round_trips_per_client_op = 0;    // network round trips in sequence (< READs when READs are issued together)
  double client_cpu_us_per_client_op = 0;  // the client's own processing of one client-side operation
  // Bytes a server registers for remote READs: what its NIC's READs
  // spread over, so what the address-translation cache must cover
  // ([platform.nic] atc_*). 0: not known, READs at the `read` curve's rate.
  double remote_read_bytes = 0;
  // Server-side path: one operation shipped to the server's CPU.
  double server_cpu_us_per_server_op = 0;  // handler cost, messaging included, at the operation's bytes
  double rpc_request_bytes = 0;
  double rpc_response_bytes = 0;
  double messages_per_server_op = 1;  // verb messages at the server NIC per RPC
  // Designs whose server operations differ in size (Pilaf's gets and
  // puts): the mean service of an RPC's send (its response) and receive
  // (its request) at the server NIC, averaged over the operations, since
  // the rate curves are not linear in bytes; 0: the send and recv curves at
  // rpc_response_bytes and rpc_request_bytes.
  double nic_send_service_us = 0;
  double nic_recv_service_us = 0;
  // One-sided READs of read_bytes a server-side operation makes after its
  // RPC (a hybrid design's leaf READ), one round trip each.
  double reads_per_server_op = 0;
  // Work of a client between operations (drawing a key), whichever path.
  double client_op_us = 0;
  // Designs whose client path mixes one-sided READs, WRITEs and CASes
  // (Nessie): the mean service of one at the server NIC's RDMA engine,
  // which serves all three; 0: the read curve at read_bytes.
  double nic_rdma_service_us = 0;
  // The payload bytes a client-path operation moves, on average, in the
  // busier direction of the links (a READ's response, a WRITE's request);
  // negative: read_bytes (READs only).
  double link_payload_bytes = -1;
  // Whether the RPC's response queues at the client host's link (a
  // design whose responses are large: NessieSD's values); otherwise its
  // serialisation is only in the RPC's round trip.
  bool rpc_response_on_links = false;
  // Polling server threads per server that run every server-side handler,
  // each a busy core whatever the load (NessieSD); 0: the handlers share
  // the server's cores, busy only while they run.
  uint32_t server_threads = 0;
  // The share of operations the scenario's own configuration sends to the
  // server (a static design or a fixed-ratio selector); empty when an
  // adaptive selector decides at run time.
  std::optional<double> scenario_server_share;
  // The shares at a server count (the scenario's, or another the planner
  // tries), computed from the same keys and structure the driver builds;
  // unset when the design spreads its load evenly.
  std::function<StatusOr<ServerShares>(uint32_t servers)> server_shares;
  std::vector<std::string> derivation;
  // Set when the profile's figures depend on the throughput itself
  // (Nessie: a key deleted earlier in the run makes a later get or delete
  // of it a miss, and how many are deleted by then depends on the rate):
  // the profile at `ops_per_s`. `locus model` and the model tests predict
  // at the scenario's split, ask again at that throughput and predict
  // again until it settles (cli::settled_profile); this profile itself is
  // the one at no throughput (nothing deleted yet).
  std::function<StatusOr<ModelProfile>(double ops_per_s)> at_throughput;
  // Set when the design has only an analytic bound for this workload, no
  // queueing prediction (the NAM index's range scans: the paper's Table 2):
  // why not. `locus model` prints the derivation and this; everything that
  // needs the profile's figures (the locality model, `locus plan`) refuses
  // the scenario with it.
  std::string bound_only;
};

// A design's model: its profile for a scenario of that design, or an error
// naming the key or feature the model does not cover.
using ModelProfiler = std::function<StatusOr<ModelProfile>(const scenario::Scenario&)>;

// The scenario's cost of the named handler at `bytes` moved (request plus
// response), or the platform's default handler cost when the table does
// not name it: exactly what the simulator charges.
double handler_cost_us(const scenario::CpuSpec& cpu, const std::string& handler, double bytes);

// What a client spends on one operation of its own (drawing the key and
// building it): the scenario's "client.op" at the key's bytes, else
// client_op_us, as the simulator charges it.
double client_op_cost_us(const scenario::Scenario& s);

}  // namespace locus::design
