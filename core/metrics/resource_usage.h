// ResourceUsage: how busy one modelled resource was over a run, as a
// simulating backend measures it (Runtime::resource_usage) and results
// report it (RunResult::resources): a NIC's service budget, a server's
// cores, a link direction, a PCIe bus; and a host's power (HostPower).
#pragma once

#include <string>

namespace locus {

struct ResourceUsage {
  std::string name;  // "server3.nic.rdma", "server3.cpu", "server3.link.out"
  std::string kind;  // "nic", "cpu", "link", "pcie"
  double utilization = 0;  // busy fraction of capacity, 0..1
};

// One host's electrical power over a run, as a simulating backend with a
// power profile measures it (Runtime::host_power, the SimGrid host energy
// plugin): its energy and that over the run's simulated time.
struct HostPower {
  std::string name;  // "server0", "chost2"
  double average_w = 0;
  double energy_j = 0;
};

}  // namespace locus
