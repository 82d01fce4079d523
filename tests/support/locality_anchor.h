// The locality model's anchor platform (calibration.md's Cell figures:
// 6.3 us a server-side operation, 1.44 M READs/s, 1.5 M verb messages/s,
// five READs a client-side operation, a 3 us round trip), shared by the
// model's tests.
#pragma once

#include "models/queueing/locality_model.h"

namespace locus::testing {

inline models::LocalityInput cell_anchor_input(int servers, int cores, int clients) {
  models::LocalityInput in;
  in.platform.servers = servers;
  in.platform.cores_per_server = cores;
  in.platform.server_op_service_time_us = 6.3;
  in.platform.nic_read_rate_ops_per_s = 1.44e6;
  in.platform.nic_verb_rate_msgs_per_s = 1.5e6;
  in.workload.clients = clients;
  in.workload.network_rtt_us = 3.0;
  in.workload.reads_per_client_op = 5;
  in.workload.messages_per_server_op = 2;
  return in;
}

}  // namespace locus::testing
