// Nessie's analytic model (design::ModelProfile), paper sections 4 and 5.
// The figures come from the tables the driver builds: the model places
// the scenario's records' index entries (ITEs) the way Loader does (the
// same keys, hash functions, geometry and cuckoo walk, model_tables.cc)
// and counts, for every record, the one-sided operations a get and a put
// of it make in NessieClient (client_datapath.cc): which candidates are
// read before the key's own, the data entries (DTEs) read for filter
// matches of other keys, the put's forward and reverse passes, its DTE
// WRITE, CAS, valid-bit and recycle-word WRITEs. The workload is uniform,
// so each record counts once.
//
// Paths. Client-side: one-sided READs, WRITEs and CASes, each its own
// round trip, served by the server NIC's one RDMA engine (READ, WRITE and
// atomic curves each at its bytes). Server-side: NessieSD's RPC, a request
// WRITE into the key's owner's ring, the server thread's handler at the
// scenario's "nessie.server.get/put" cost, a response WRITE. Client mode
// runs client-only, server mode server-only (its client-only row answers
// "and Nessie?" on Nessie's decoupled tables), hybrid sends its puts to
// the server (the scenario split is the put share).
//
// CPU contention ([platform] background_load = K hogs a host, shared
// fluidly, docs/simulator.md): a server thread holds a core's share among
// its host's K hogs and polling threads, a client's work among K hogs
// and itself.
//
// Not covered (refused by name): scans, read-modify-writes,
// non-uniform requests, run.clients_on_servers (the local shortcuts),
// cpu_scheduler = "cfs" on oversubscribed hosts (time slices).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/design/model_profile.h"
#include "core/index/nessie/config.h"
#include "core/index/nessie/model_tables.h"
#include "core/index/nessie/requests.h"
#include "core/rpc/ring_buffer.h"

namespace locus::nessie {
namespace {

// A ring message's key-length prefix (requests.h: u32 key bytes, key, value).
constexpr double kKeyLengthBytes = 4;

// The speed of one busy actor among `others` always-running ones on a
// host of `cores` cores, shared equally (SimGrid's fluid sharing).
double share_of_core(double cores, double others) { return std::min(1.0, cores / std::max(1.0, others + 1)); }


// The mean share of the loaded keys deleted before an operation of the
// measured window, when the run deletes `deletes_per_s` of `records`
// uniformly from its start: the share deleted by time t is
// 1 - exp(-D t / N), averaged over [warmup, warmup + duration].
double mean_deleted(double deletes_per_s, double records, double warmup_s, double duration_s) {
  const double k = deletes_per_s / records;
  if (!(k > 0) || !(duration_s > 0)) return 0;
  if (k * duration_s < 1e-9) return 1 - std::exp(-k * warmup_s);
  return 1 - (std::exp(-k * warmup_s) - std::exp(-k * (warmup_s + duration_s))) / (k * duration_s);
}

// The profile with `deleted` of the loaded keys gone: that share of the
// client path's gets and deletes miss.
StatusOr<design::ModelProfile> profile_at(const scenario::Scenario& s, const NessieConfig* c, const TableCosts& t,
                                          double deleted) {
  const workload::WorkloadSpec& w = s.workload;
  if (w.scanproportion > 0 || w.readmodifywriteproportion > 0) {
    return invalid_argument(
        "workload.scanproportion / readmodifywriteproportion: the nessie model covers gets (readproportion), "
        "updates (updateproportion), inserts (insertproportion) and deletes (deleteproportion)");
  }
  if (w.requestdistribution != workload::RequestDistribution::kUniform) {
    return invalid_argument("workload.requestdistribution: the nessie model counts every record once (uniform)");
  }
  if (s.run.clients_on_servers) {
    return invalid_argument("run.clients_on_servers: the nessie model does not cover the local shortcuts");
  }
  const double gets = w.readproportion, puts = w.updateproportion, inserts = w.insertproportion,
               deletes = w.deleteproportion;
  const double all = gets + puts + inserts + deletes;
  if (!(all > 0)) return invalid_argument("workload: no gets, updates, inserts or deletes to model");
  // Writes: updates and inserts are puts (an insert's value travels as an
  // update's), deletes carry the key only.
  const double put_share = (puts + inserts) / all, delete_share = deletes / all, write_share = put_share + delete_share;
  const bool server = c->mode == "server", hybrid = c->mode == "hybrid";

  const scenario::PlatformSpec& p = s.platform;

  // Contention: background_load hogs on every host.
  const double hogs = p.background_load;
  const double value = t.value_bytes, key = t.mean_key_bytes;
  uint32_t threads = 0;
  if (server || hybrid) {
    threads = c->server_threads != 0 ? c->server_threads : t.value_bytes < 1024 ? 3 : 2;
    threads = std::min<uint32_t>(threads, s.run.clients);
  }
  // Under cpu_scheduler = "cfs" an oversubscribed host's threads run in
  // time slices (docs/simulator.md, "Time slices"): a polling thread sees
  // requests only in its slice, a woken client preempts hogs. Neither is
  // a share of a core, so the model answers only for fluid sharing.
  if (p.cpu_scheduler == scenario::CpuScheduler::kCfs &&
      (hogs + threads > p.cores_per_server || hogs + 1 > p.cores_per_client_host)) {
    return invalid_argument(fmt::format(
        "platform.cpu_scheduler: \"cfs\" time slices on hosts oversubscribed by background_load = {} are not in "
        "the nessie model, which shares cores fluidly: simulate, or model the fluid case with --set "
        "platform.cpu_scheduler=\"fluid\"",
        p.background_load));
  }
  const double server_speed = threads > 0 ? share_of_core(p.cores_per_server, hogs + threads - 1) : 1.0;
  const double client_speed = share_of_core(p.cores_per_client_host, hogs);

  design::ModelProfile m;
  // Client path: hybrid runs only its gets there.
  const double client_put_share = hybrid ? 0.0 : put_share;
  const OpCounts kinds[] = {mix(t.get, t.get_miss, deleted), t.put, t.insert, mix(t.remove, t.remove_miss, deleted)};
  const double client_weights[] = {gets, puts, inserts, deletes};
  const double get_only[] = {1, 0, 0, 0};
  const OpCounts client = weighted(kinds, hybrid ? std::span<const double>(get_only) : client_weights);
  m.reads_per_client_op = client.ops;
  m.round_trips_per_client_op = client.ops;  // each waits for the one before
  m.read_bytes = client.payload_bytes / client.ops;
  m.nic_rdma_service_us = client.service_us / client.ops;
  m.link_payload_bytes = std::max(client.out_bytes, client.in_bytes) / client.ops;
  m.client_op_us = design::client_op_cost_us(s) / client_speed;

  // Server path: the RPC (requests.cc: payload u32 key length, key, value;
  // the handler charged at payload plus answer bytes).
  // Hybrid sends only its writes there.
  const double server_put_share = hybrid ? put_share / write_share : put_share;
  const double server_delete_share = hybrid ? delete_share / write_share : delete_share;
  const double server_get_share = 1 - server_put_share - server_delete_share;
  const double get_us = design::handler_cost_us(p.cpu, kServerGetWork, kKeyLengthBytes + key + value);
  const double put_us = design::handler_cost_us(p.cpu, kServerPutWork, kKeyLengthBytes + key + value);
  const double delete_us = design::handler_cost_us(p.cpu, kServerDeleteWork, kKeyLengthBytes + key);
  m.server_cpu_us_per_server_op =
      (server_get_share * get_us + server_put_share * put_us + server_delete_share * delete_us) / server_speed;
  m.rpc_request_bytes = ring::kMessageOverheadBytes + kKeyLengthBytes + key + server_put_share * value;
  m.rpc_response_bytes = ring::kMessageOverheadBytes + server_get_share * value;
  m.messages_per_server_op = 1;  // the request WRITE at the owner's NIC; the response lands at the client's
  m.rpc_response_on_links = true;
  m.server_threads = threads;
  m.scenario_server_share = server ? 1.0 : hybrid ? write_share : 0.0;

  m.derivation = t.derivation;
  m.derivation.push_back(fmt::format(
      "client path ({}): {:.3f} one-sided ops an op ({:.3f} of them puts, {:.3f} deletes), each its own round trip, "
      "{:.1f} B payload, {:.4f} us at the server NIC's RDMA engine; links: {:.1f} B out, {:.1f} B in an op",
      server ? "Nessie's decoupled tables, the what-if row" : c->mode, client.ops, client_put_share,
      hybrid ? 0.0 : delete_share, m.read_bytes, m.nic_rdma_service_us, client.out_bytes, client.in_bytes));
  m.derivation.push_back(fmt::format(
      "server path: {} RPC of {:.0f} B + {:.0f} B ({:.3f} puts, {:.3f} deletes): nessie.server.get {:.3f} us, "
      "nessie.server.put {:.3f} us at {:.0f} B, nessie.server.delete {:.3f} us at {:.0f} B; {} polling threads a node",
      server   ? "every op an"
      : hybrid ? "each write an"
               : "(not used) an",
      m.rpc_request_bytes, m.rpc_response_bytes, server_put_share, server_delete_share, get_us, put_us,
      kKeyLengthBytes + key + value, delete_us, kKeyLengthBytes + key, threads));
  m.derivation.push_back(fmt::format(
      "contention: background_load {} hogs a host: a server thread runs at {:.3f} of a core ({} cores, {} threads), "
      "a client's work at {:.3f} ({} cores a client host): {:.3f} us a server op, client.op {:.3f} us",
      p.background_load, server_speed, p.cores_per_server, threads, client_speed, p.cores_per_client_host,
      m.server_cpu_us_per_server_op, m.client_op_us));
  m.derivation.push_back(
      fmt::format("split: index.mode = {} sends {:.3f} of operations to the server; reclaim scans of a client's slice "
                  "(after index.client_data_entries = {} puts of its own) and retries are not modelled",
                  c->mode, *m.scenario_server_share, c->client_data_entries));
  if (deletes > 0) {
    m.derivation.push_back(fmt::format(
        "deletes: over the measured window {:.4f} of the {} loaded keys are gone on average (deleted uniformly from "
        "the run's start at the throughput predicted, settled): that share of the client path's gets and deletes "
        "miss; the server path's misses are charged as hits",
        deleted, w.effective_insertcount()));
  }
  return m;
}

}  // namespace

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<NessieConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a nessie scenario");
  // The client path's tables: the scenario's own, or Nessie's decoupled
  // ones for server mode's "and Nessie?" row.
  NessieConfig client_tables = *c;
  if (c->mode == "server") client_tables.mode = "client";
  const workload::WorkloadSpec& w = s.workload;
  LOCUS_ASSIGN_OR_RETURN(TableCosts tables, table_costs(s, client_tables));
  auto t = std::make_shared<const TableCosts>(std::move(tables));
  LOCUS_ASSIGN_OR_RETURN(design::ModelProfile m, profile_at(s, c, *t, 0));
  const double all = w.readproportion + w.updateproportion + w.insertproportion + w.deleteproportion;
  if (w.deleteproportion > 0) {
    m.at_throughput = [s, c, t, share = w.deleteproportion / all](double ops_per_s) {
      const double deleted = mean_deleted(ops_per_s * share, static_cast<double>(s.workload.effective_insertcount()),
                                          s.run.warmup_s, s.run.duration_s - s.run.warmup_s);
      return profile_at(s, c, *t, deleted);
    };
  }
  return m;
}

}  // namespace locus::nessie
