// HostRoutesZone (sim_zone.h): routes from per-host links, made on demand.
#include "backends/simgrid/sim_zone.h"

#include <simgrid/kernel/routing/NetPoint.hpp>

namespace locus::simgrid_backend {

namespace routing = simgrid::kernel::routing;

HostRoutesZone::Hop HostRoutesZone::hop(const simgrid::s4u::Link* l) { return {l->get_impl(), l->get_latency()}; }

void HostRoutesZone::add_host(const simgrid::s4u::Host* host, const simgrid::s4u::SplitDuplexLink* pcie,
                              const simgrid::s4u::SplitDuplexLink* link, uint32_t rack) {
  const unsigned long id = host->get_netpoint()->id();
  if (hosts_.size() <= id) hosts_.resize(id + 1);
  HostHops& h = hosts_[id];
  h.pcie_up = hop(pcie->get_link_up());
  h.link_up = hop(link->get_link_up());
  h.link_down = hop(link->get_link_down());
  h.pcie_down = hop(pcie->get_link_down());
  h.rack = rack;
  h.known = true;
}

void HostRoutesZone::add_uplink(uint32_t rack, const simgrid::s4u::SplitDuplexLink* uplink) {
  if (uplinks_.size() <= rack) uplinks_.resize(rack + 1);
  uplinks_[rack] = {hop(uplink->get_link_up()), hop(uplink->get_link_down())};
}

void HostRoutesZone::set_loopback(const simgrid::s4u::Link* loopback) {
  loopback_ = loopback == nullptr ? Hop{} : hop(loopback);
}

void HostRoutesZone::append(const Hop& h, routing::Route* into, double* latency) {
  into->link_list_.push_back(h.link);
  if (latency != nullptr) *latency += h.latency_s;
}

void HostRoutesZone::get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst, routing::Route* into,
                                     double* latency) {
  // A host to itself: the loopback, as SimGrid's full zone gives it.
  if (src == dst) {
    if (loopback_.link != nullptr) append(loopback_, into, latency);
    return;
  }
  const unsigned long s = src->id(), d = dst->id();
  if (s >= hosts_.size() || d >= hosts_.size() || !hosts_[s].known || !hosts_[d].known) return;  // no route
  const HostHops& a = hosts_[s];
  const HostHops& b = hosts_[d];
  append(a.pcie_up, into, latency);
  append(a.link_up, into, latency);
  if (!uplinks_.empty() && a.rack != b.rack) {
    append(uplinks_[a.rack].up, into, latency);
    append(uplinks_[b.rack].down, into, latency);
  }
  append(b.link_down, into, latency);
  append(b.pcie_down, into, latency);
}

}  // namespace locus::simgrid_backend
