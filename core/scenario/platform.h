// PlatformSpec: the hardware a simulated run models, as the [platform]
// section of a scenario file describes it: servers and their cores, NIC
// service rates by operation kind and size, PCIe, links and topology, and
// the CPU cost of server handlers. Plain data, read by the SimGrid backend
// and by the analytic models; defaults are the Pilaf testbed's figures
// (shared/calibration.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

#include "core/common/time.h"
#include "core/transport/rc_retry.h"

namespace locus::scenario {

// Operations per second at a message size; a curve interpolates service
// time (1/rate) linearly between points and extrapolates past the last
// point at that point's bandwidth.
struct RatePoint {
  uint32_t bytes = 0;
  double ops_per_s = 0;
};

struct RateCurve {
  std::vector<RatePoint> points;  // sorted by bytes, at least one

  Nanos service_ns(uint32_t bytes) const;
  double ops_per_s(uint32_t bytes) const { return 1e9 / static_cast<double>(service_ns(bytes)); }
};

enum class NicModel { kFcfs, kProcessorSharing };

// Defaults: the Pilaf testbed's ConnectX-2 (shared/calibration.md, as
// scenarios/pilaf/get-rdma.toml gives and explains them), except `write`
// and `atomic`, which the calibration gives for no NIC: those two are the
// Pilaf READ curve and a 2 M/s stand-in, from no source, used by no
// shipped scenario (every design that WRITEs or CASes gives its own, and
// apps/scenario_sources checks it does).
struct NicSpec {
  NicModel model = NicModel::kFcfs;
  RateCurve read{{{16, 2.449e6}, {1024, 1.496e6}, {4096, 0.472e6}}};
  RateCurve write{{{16, 2.449e6}, {1024, 1.496e6}, {4096, 0.472e6}}};
  RateCurve atomic{{{8, 2.0e6}}};
  RateCurve send{{{16, 0.7e6}, {1024, 0.668e6}, {4096, 0.464e6}}};  // verb messages sent
  RateCurve recv{{{16, 1.5e6}, {1024, 1.5e6}, {4096, 0.464e6}}};    // verb messages received
  // How far RDMA and verb messaging run independently: the fraction of
  // peak each keeps while the other runs at its peak (1.0 = independent).
  double rdma_share_with_verbs = 0.80;
  double verbs_share_with_rdma = 0.95;
  // The address-translation cache: a READ whose page translation is not
  // in the NIC's cache costs a fetch of it over PCIe. With the cache
  // reaching atc_reach_bytes of registered memory and READs spread over
  // the S bytes a NIC has registered for remote reads, a READ misses with
  // probability max(0, 1 - reach / S) and then costs atc_miss_ns more.
  // atc_miss_ns is fitted to read_by_region, READ rates of one size
  // measured over regions of different sizes (the Cell testbed's 1 KB
  // READs: 1.44 M/s over 64 MB, 1.04 M/s over 1 GB), and the `read` curve
  // holds at read_region_bytes of registered memory. atc_reach_bytes = 0
  // leaves the cache out (READ rates whatever the registered size).
  uint64_t atc_reach_bytes = 0;
  std::vector<std::pair<uint64_t, double>> read_by_region;  // (registered bytes, ops/s)
  uint64_t read_region_bytes = 0;
  double atc_miss_ns = 0;  // fitted (fit_atc)
  // The queue-pair state cache: a request on a queue pair whose context
  // is not in the NIC's memory costs a fetch of it over PCIe. With Q queue
  // pairs on a NIC and room for qp_cache_entries, requests spread over
  // them miss with probability max(0, 1 - entries / Q), each costing
  // qp_miss_ns more of the target NIC's service. The calibration says only
  // that state beyond "a few thousand connections" overflows, so the size
  // has no default (0 leaves the cache out); the miss cost defaults to the
  // fitted address-translation miss (the same kind of fetch over PCIe).
  uint32_t qp_cache_entries = 0;
  double qp_miss_ns = 0;
  // The queue pairs' ACK timeout and transport retries (the verbs
  // backend's defaults): how long a request to a dead node takes to fail
  // on SimGrid and loopback. On verbs the cluster file's [verbs] sets them.
  uint8_t ack_timeout = RcRetry{}.ack_timeout;
  uint8_t retry_count = RcRetry{}.retry_count;

  double atc_miss_fraction(uint64_t registered_bytes) const;
  // What a READ costs over `registered_bytes` beyond the `read` curve (at
  // read_region_bytes); negative below it (fewer misses), in ns.
  double atc_extra_ns(uint64_t registered_bytes) const;
  // What a request costs beyond its curve on a NIC holding `qps` queue
  // pairs, in ns (0 without the cache or while they fit).
  double qp_extra_ns(uint64_t qps) const;
  // Fits atc_miss_ns; an error says why the points do not fit.
  Status fit_atc();
  // RcRetry::retry_exceeded_after of ack_timeout and retry_count.
  Nanos retry_exceeded_after() const;
};

struct LinkSpec {  // PlatformSpec gives each link's defaults and their sources
  double bandwidth_gbps = 20.0;
  double latency_us = 0.689;
};

enum class Topology { kStar, kTwoLevel };

// A handler's CPU cost in us as a function of the bytes its request and
// response carried (Cpu::charge_work's `bytes`): points (bytes, us) sorted
// by bytes; the first point's cost below it, linear between points and on
// along the last two beyond them (a copy or a checksum grows with the
// bytes); one point is a constant.
struct CostCurve {
  std::vector<std::pair<uint64_t, double>> points;
  double us_at(uint64_t bytes) const;
};

// The client's own work per operation (drawing it, building its key and
// record: core/runner/ycsb_loop.h), charged by every design's clients.
inline constexpr const char* kClientOpWork = "client.op";

struct CpuSpec {
  // Costs of named work (Cpu::charge_work) by name: server handlers
  // ("pilaf.put") and client steps ("pilaf.client_crc"). Server handlers
  // not listed cost default_handler_us; client work not listed costs
  // nothing ("client.op": client_op_us, also 0 by default). Measured by `locus
  // calibrate`, or taken from a paper where its testbed's figure is known.
  std::map<std::string, CostCurve, std::less<>> handler_cost_us;  // looked up by string_view on hot paths
  // No default: no figure is true of every handler (it was 2.0 us, from no
  // source). Unset, a server handler the scenario does not cost fails the
  // simulated run naming it (backends/simgrid, SimCpu::charge_work); the
  // models charge such a handler nothing.
  std::optional<double> default_handler_us;
  // "measured": charge the handler's native time times measured_factor
  // instead (not deterministic: native times vary run to run).
  bool measured = false;
  double measured_factor = 1.0;
  // The client's work per operation ("client.op") where handler_cost_us
  // does not cost it. 0 by default, as other unmeasured client work: a
  // figure here is the scenario's to source (`locus calibrate` measures
  // "client.op"; every shipped scenario names it in handler_cost_us).
  double client_op_us = 0;
};

// Each host's electrical power as a function of its busy cores, for the
// SimGrid host energy plugin: idle_w with no core busy, and busy_w_per_core
// more for each core busy (linear, as the plugin's Idle:Epsilon:AllCores
// profile with Epsilon = Idle). No figure is a default: shared/calibration.md
// and the papers give none, so a scenario that wants power reported gives
// both, with their source ([platform.power]; `given` says it did).
struct PowerSpec {
  bool given = false;
  double idle_w = 0;
  double busy_w_per_core = 0;
  double all_cores_w(uint32_t cores) const { return idle_w + busy_w_per_core * cores; }
};

// Each server's disk, for the operation logs (core/log) on the simulator
// (backends/simgrid/sim_disk.h): a sync (fdatasync) costs sync_us plus the
// bytes written since the file's last sync at write_mb_per_s, and reading a
// log back costs read_mb_per_s. No figure is a default (the papers and
// shared/calibration.md give none): `locus bench --micro log` measures all
// three on a disk and prints them as this table. Without it, logs cost no
// simulated time.
struct DiskSpec {
  bool given = false;
  double sync_us = 0;
  double write_mb_per_s = 0;
  double read_mb_per_s = 0;
};

enum class CpuScheduler { kFluid, kCfs };

struct PlatformSpec {
  uint32_t servers = 1;
  uint32_t cores_per_server = 1;
  uint32_t client_hosts = 0;  // 0: one host per client
  uint32_t cores_per_client_host = 1;
  Topology topology = Topology::kStar;
  uint32_t hosts_per_rack = 16;  // two-level only
  // Messages of at most this many bytes (one MTU) are simulated packet-
  // level: serialised first-come-first-served on each link of their route
  // plus the link latencies, with no flow in SimGrid's CM02 bandwidth
  // sharing; longer ones are CM02 flows. 0: every message is a flow.
  uint32_t packet_bytes = 4096;
  // The Pilaf testbed's 20 Gbps InfiniBand and ConnectX-2's PCIe 2.0 x8,
  // with its measured round trips (calibration.md) fitted with all fixed
  // latency in the links (docs/results.md, "Pilaf's latency fitted"; they
  // were 0.5 us and 0.25 us from no source until 2026-11-27).
  LinkSpec host_link{20.0, 0.689};
  // No source: no testbed has racks. A two-level scenario gives its own
  // (apps/scenario_sources checks it does).
  LinkSpec rack_uplink{80.0, 0.5};  // two-level only
  LinkSpec pcie{32.0, 0.0};
  NicSpec nic;
  CpuSpec cpu;
  PowerSpec power;
  DiskSpec disk;
  // CPU-bound background work on every host (servers and client hosts):
  // this many hogs per host, each an endless execution competing for the
  // host's cores with the run's own work (other tenants of a shared node).
  uint32_t background_load = 0;
  // How a host's cores are shared once its always-runnable threads (hogs,
  // polling server threads) outnumber them: fluid (SimGrid's processor
  // sharing, every thread a fraction of a core all the time) or cfs
  // (Linux CFS's time slices and wake-up preemption:
  // backends/simgrid/sim_sched.h, which cites the kernel source).
  CpuScheduler cpu_scheduler = CpuScheduler::kFluid;
  // Whether client workers busy-poll for their completions, as a polling
  // server thread does (Nessie's clients poll watermark bits, paper
  // section 4.1): each holds a core of its host from its start to its end,
  // busy for power and counted among the always-runnable threads that
  // cpu_scheduler divides; off, a client blocks while it waits.
  bool polling_clients = false;
};

}  // namespace locus::scenario
