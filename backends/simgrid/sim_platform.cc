// World construction: the SimGrid engine, its configuration and the
// platform (hosts, links, PCIe, routes) built from a PlatformSpec.
#include <fmt/format.h>
#include <malloc.h>
#include <xbt/log.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "backends/simgrid/sim_energy.h"
#include "backends/simgrid/sim_world.h"
#include "backends/simgrid/sim_zone.h"
#include "core/common/aligned_buffer.h"

namespace locus::simgrid_backend {
namespace {

double bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }

PacketLink packet_link(const scenario::LinkSpec& spec) {
  PacketLink l;
  l.bytes_per_s = l.flow_bytes_per_s = bytes_per_s(spec.bandwidth_gbps);
  l.latency_s = spec.latency_us * 1e-6;
  return l;
}

// Mappings the process has besides the actors' stacks (its libraries,
// heap arenas, the run's own threads), a generous allowance.
constexpr uint64_t kMappingsBesideStacks = 4096;

// The kernel's limit on a process's memory mappings; 0 if unknown.
uint64_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  uint64_t limit = 0;
  return (in >> limit) ? limit : 0;
}

// glibc's allocator, set for a run of tens of thousands of actors.
// SimGrid takes each actor's 256 KiB stack from malloc (calloc when guard
// pages are off), and with glibc's defaults a 1024-server run (64,384
// actors, guard pages off) grew its heap by about 110 KiB per actor while
// the actors were created and started, 7 GiB of its 13.3 GiB peak
// (/proc/PID/smaps, 2026-11-27), where an idle actor touches a few KiB of
// its stack. With a fixed mmap threshold of 4 MiB and no top padding
// (first measured as GLIBC_TUNABLES glibc.malloc.mmap_threshold and
// top_pad) the heap grew by what the actors touch: glibc's dynamic
// threshold rises to the size of each large block set-up frees (up to 32
// MiB), so set-up's temporaries stay in the heap, and a calloc'd chunk
// that reuses heap memory is cleared (written) where a fresh one is not.
// The fixed threshold is above a stack so that stacks stay in the heap:
// at glibc's initial 128 KiB each would be a mapping of its own, and
// 64,384 of them pass vm.max_map_count. Process-wide, set once, as
// SimGrid's configuration is; it changes where memory comes from, never
// what a run computes.
void configure_malloc_for_stacks() {
  constexpr int kMmapThresholdBytes = 4 << 20;  // above a stack, guard page and malloc's header
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  (void)mallopt(M_TOP_PAD, 0);
}

}  // namespace

void NicQueues::configure(double rdma_share_with_verbs, double verbs_share_with_rdma) {
  // At both peaks at once, RDMA keeps rdma_share of its rate and verb
  // sending keeps verbs_share of its own: each send costs the RDMA budget
  // (1 - rdma_share) / verbs_share of its service time, and each RDMA
  // operation costs the send budget (1 - verbs_share) / rdma_share.
  send_cost_on_rdma_ = (1.0 - rdma_share_with_verbs) / std::max(verbs_share_with_rdma, 1e-9);
  rdma_cost_on_send_ = (1.0 - verbs_share_with_rdma) / std::max(rdma_share_with_verbs, 1e-9);
}

NicQueues::Slot NicQueues::reserve(Budget b, double now_s, double service_s) {
  const double start = std::max(now_s, free_s_[b]);
  free_s_[b] = start + service_s;
  busy_s_[b] += service_s;
  if (b == kRdma) free_s_[kSend] = std::max(now_s, free_s_[kSend]) + service_s * rdma_cost_on_send_;
  if (b == kSend) free_s_[kRdma] = std::max(now_s, free_s_[kRdma]) + service_s * send_cost_on_rdma_;
  return {start, free_s_[b]};
}

World::World(const scenario::PlatformSpec& platform, const SimOptions& options)
    : platform_(platform), options_(options) {
  int argc = 1;
  char arg0[] = "locus";
  char* argv[] = {arg0, nullptr};
  engine_ = std::make_unique<sg4::Engine>(&argc, argv);
  track_engine_clock();
  // SimGrid's configuration outlives an engine and refuses to be set
  // again, so the first engine of the process sets it for all of them.
  static bool configured = false;
  if (!configured) {
    configured = true;
    xbt_log_control_set("root.thresh:warning");  // no per-setting INFO lines
    // A pure bandwidth-sharing model: no TCP factors, no reverse-path ACK
    // traffic, and a solver precise enough for sub-microsecond services.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("surf/precision:1e-12");
    // maxmin/precision stays at its default: tightening it to 1e-9 makes
    // SimGrid 3.32's LMM solver crash (do_solve) on some Pilaf scenarios.
    // Timing precision is what sub-microsecond services need.
    sg4::Engine::set_config("contexts/stack-size:256");
    configure_malloc_for_stacks();
    AlignedBuffer::set_huge_pages(false);
    if (const uint64_t limit = max_map_count();
        options_.expected_actors > 0 && limit > 0 && 2 * options_.expected_actors + kMappingsBesideStacks > limit) {
      // A guard page splits each stack's mapping in two: without guards a
      // stack overflow is no longer caught, but the run can start.
      sg4::Engine::set_config("contexts/guard-size:0");
      fmt::print(stderr,
                 "locus: {} actors need {} memory mappings with stack guard pages, more than vm.max_map_count "
                 "({}); guard pages off for this process (raise the limit with sysctl to keep them)\n",
                 options_.expected_actors, 2 * options_.expected_actors, limit);
    }

    sg4::Engine::set_config("network/loopback-lat:0");
  }
  if (platform_.power.given) enable_host_energy();
  build_platform();
  start_s_ = engine_clock_s();
  // Running ahead asks the engine for its next timer through an inline
  // function of SimGrid's headers; it must see the library's own timers.
  simgrid::kernel::timer::Timer* probe = simgrid::kernel::timer::Timer::set(start_s_ + 1e6, [] {});
  run_ahead_ = options_.run_ahead && simgrid::kernel::timer::Timer::next() >= 0;
  probe->remove();
}

World::~World() {
  if (options_.events_run_ahead != nullptr) *options_.events_run_ahead = events_run_ahead_;
  if (options_.run_ahead_hazards != nullptr) *options_.run_ahead_hazards = run_ahead_hazards_;
  // Kernel timers outlive the engine: cancel those still pending, which
  // point into this world.
  if (events_timer_ != nullptr) events_timer_->remove();
  if (shares_timer_ != nullptr) shares_timer_->remove();
  shares_timer_ = nullptr;
  tearing_down_ = true;  // no new timer from here (request_share)
  for (auto& n : nodes_) {
    if (n->timeout_timer != nullptr) n->timeout_timer->remove();
  }
}

void World::build_platform() {
  const scenario::PlatformSpec& p = platform_;
  const bool two_level = p.topology == scenario::Topology::kTwoLevel;
  // Routes are made per request from each host's links (sim_zone.h):
  // nothing is stored per pair of hosts.
  auto* routes = new HostRoutesZone("locus");  // SimGrid's engine owns its zones
  sg4::NetZone* zone = routes->get_iface();
  routes->set_loopback(sg4::Engine::get_instance()->link_by_name_or_null("__loopback__"));
  uint32_t hosts = 0;
  auto add_host = [&](const std::string& name, uint32_t cores) {
    sg4::Host* h = zone->create_host(name, 1e9);  // 1 flop = 1 ns of work
    h->set_core_count(static_cast<int>(cores));
    if (p.power.given) set_power_profile(*h, p.power, cores);
    h->seal();
    sg4::SplitDuplexLink* link =
        zone->create_split_duplex_link(name + ".link", bytes_per_s(p.host_link.bandwidth_gbps));
    link->set_latency(p.host_link.latency_us * 1e-6);
    link->seal();
    sg4::SplitDuplexLink* pcie = zone->create_split_duplex_link(name + ".pcie", bytes_per_s(p.pcie.bandwidth_gbps));
    pcie->set_latency(p.pcie.latency_us * 1e-6);
    pcie->seal();
    links_.push_back(link);
    links_.push_back(pcie);
    const uint32_t rack = two_level ? hosts / std::max<uint32_t>(p.hosts_per_rack, 1) : 0;
    routes->add_host(h, pcie, link, rack);
    ++hosts;
    // The same links for the packet-level model: pcie up/down, link up/down.
    const PacketLink pcie_dir = packet_link(p.pcie);
    const PacketLink link_dir = packet_link(p.host_link);
    packet_links_.insert(packet_links_.end(), {pcie_dir, pcie_dir, link_dir, link_dir});
    PacketLink* dirs = &packet_links_[packet_links_.size() - 4];
    dirs[0].flow_link = pcie->get_link_up();
    dirs[1].flow_link = pcie->get_link_down();
    dirs[2].flow_link = link->get_link_up();
    dirs[3].flow_link = link->get_link_down();
    return h;
  };
  for (uint32_t s = 0; s < p.servers; ++s)
    server_hosts_.push_back(add_host("server" + std::to_string(s), p.cores_per_server));
  for (uint32_t c = 0; c < p.client_hosts; ++c)
    client_hosts_.push_back(add_host("chost" + std::to_string(c), p.cores_per_client_host));

  if (two_level) {
    const uint32_t racks = hosts == 0 ? 0 : (hosts - 1) / std::max<uint32_t>(p.hosts_per_rack, 1) + 1;
    racks_ = racks;
    const PacketLink up_dir = packet_link(p.rack_uplink);
    for (uint32_t r = 0; r < racks; ++r) {
      sg4::SplitDuplexLink* up = zone->create_split_duplex_link("rack" + std::to_string(r) + ".uplink",
                                                                bytes_per_s(p.rack_uplink.bandwidth_gbps));
      up->set_latency(p.rack_uplink.latency_us * 1e-6);
      up->seal();
      packet_links_.insert(packet_links_.end(), {up_dir, up_dir});
      packet_links_[packet_links_.size() - 2].flow_link = up->get_link_up();
      packet_links_.back().flow_link = up->get_link_down();
      routes->add_uplink(r, up);
      links_.push_back(up);
    }
  }
  if (p.nic.model == scenario::NicModel::kProcessorSharing) {
    for (sg4::Host* h : server_hosts_) zone->create_host(h->get_name() + ".nic", 1e9)->seal();
    for (sg4::Host* h : client_hosts_) zone->create_host(h->get_name() + ".nic", 1e9)->seal();
  }
  zone->seal();
  // The lookahead rule (World::may_run_ahead): a packet from one host to
  // another crosses both PCIe buses and both host links at least. Under
  // two levels, a rack holding servers and clients would let a client's
  // packet share an uplink with a server's response: the rule is off then.
  host_woken_s_.assign(hosts, -1.0);
  const bool racks_apart = !two_level || server_hosts_.size() % std::max<uint32_t>(p.hosts_per_rack, 1) == 0;
  lookahead_s_ = racks_apart ? 2 * (p.pcie.latency_us + p.host_link.latency_us) * 1e-6 : 0.0;
}

}  // namespace locus::simgrid_backend
