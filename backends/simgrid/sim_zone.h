// HostRoutesZone: the SimGrid network zone of a locus platform, whose
// routes are computed when asked from each host's own links instead of
// stored per pair. Every route is the source's PCIe and link up, under
// the two-level topology the two racks' uplinks when the racks differ,
// then the destination's link and PCIe down: the same links, in the same
// order and with their latencies summed in the same order, as the full
// zone (one stored route per pair of hosts) it replaces. That zone held a
// hosts x hosts table and a route per server-host pair: at 1024 servers
// and 48,000 client hosts, tens of GiB before the first request.
#pragma once

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace locus::simgrid_backend {

class HostRoutesZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  using Link = simgrid::kernel::resource::StandardLinkImpl;

  explicit HostRoutesZone(const std::string& name) : NetZoneImpl(name) {}

  // `host` (created in this zone) reaches the network through `pcie` then
  // `link`; under two levels, `rack` is its rack (else 0).
  void add_host(const simgrid::s4u::Host* host, const simgrid::s4u::SplitDuplexLink* pcie,
                const simgrid::s4u::SplitDuplexLink* link, uint32_t rack);
  // Rack `rack`'s uplink, for routes between racks (two levels only).
  void add_uplink(uint32_t rack, const simgrid::s4u::SplitDuplexLink* uplink);
  // The link a host's messages to itself take (SimGrid's loopback), if any.
  void set_loopback(const simgrid::s4u::Link* loopback);

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  // One direction of a split-duplex link, with its latency.
  struct Hop {
    Link* link = nullptr;
    double latency_s = 0;
  };
  struct HostHops {
    Hop pcie_up, link_up, link_down, pcie_down;
    uint32_t rack = 0;
    bool known = false;
  };
  struct UplinkHops {
    Hop up, down;
  };
  static Hop hop(const simgrid::s4u::Link* l);
  static void append(const Hop& h, simgrid::kernel::routing::Route* into, double* latency);

  std::vector<HostHops> hosts_;      // by netpoint id
  std::vector<UplinkHops> uplinks_;  // by rack
  Hop loopback_;
};

}  // namespace locus::simgrid_backend
