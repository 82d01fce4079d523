// Shared set-up of the verbs test tier (tests/verbs): the skip rule and the
// cluster the in-process tests use.
//
// Skip rule: a verbs test executable that finds no usable RDMA device exits
// with status 77 before running anything, which CTest reports as "Skipped"
// (SKIP_RETURN_CODE). Plain `ctest` on a host without RDMA therefore skips
// the tier cleanly; ci/softroce-vm.sh runs it where a device exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/verbs/cluster_config.h"

namespace locus::verbs::testing {

constexpr int kSkipExitCode = 77;

// Exits the process with kSkipExitCode (and a message saying why and how to
// run the tier) when this host has no usable RDMA device. Call it before
// registering any test case (at static initialisation).
void exit_unless_rdma_available(const char* test_name);

// The address servers in this process listen on: $LOCUS_VERBS_ADDRESS, else
// an IPv4 address of an active RoCE port, else 127.0.0.1.
std::string local_address();

// A cluster of `servers` servers on local_address(), each on a free port,
// tuned for tests (short RNR budget, bounded connect time).
ClusterConfig local_cluster(int servers);

// A cluster file's text: one [[server]] per port (all on `address`; "0"
// lets a server in this host pick a free port), tuned for tests. It ends
// in its [verbs] table, so lines appended to it add to that table.
std::string cluster_toml(const std::string& address, const std::vector<std::string>& ports);

// Whether this host's RDMA device promises that an RDMA WRITE's data lands
// in order (ibv_query_qp_data_in_order, as a server endpoint reports it).
bool device_writes_land_in_order();

// Key `keynum` of the records a `locus serve` of a Pilaf or Cell scenario
// loads with workload.standard = `workload` (a-f) and workload.recordcount
// = `records` (the YCSB keys as the workload builds them).
std::string loaded_key(char workload, uint64_t records, uint64_t keynum);

}  // namespace locus::verbs::testing
