// ResourceUsage: how busy one modelled resource was over a run, as a
// simulating backend measures it (Runtime::resource_usage) and results
// report it (RunResult::resources): a NIC's service budget, a server's
// cores, a link direction, a PCIe bus.
#pragma once

#include <string>

namespace locus {

struct ResourceUsage {
  std::string name;  // "server3.nic.rdma", "server3.cpu", "server3.link.out"
  std::string kind;  // "nic", "cpu", "link", "pcie"
  double utilization = 0;  // busy fraction of capacity, 0..1
};

}  // namespace locus
