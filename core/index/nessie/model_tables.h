// What Nessie's model (model.cc) counts on the tables the driver builds:
// the one-sided operations of a get and of a put on the client path,
// averaged over every loaded record (the model's workload is uniform).
// The ITEs are placed as Loader places them (same keys, hash functions,
// geometry and cuckoo walk), and each operation is walked as
// NessieClient does it (client_datapath.cc).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/index/nessie/config.h"
#include "core/scenario/scenario.h"

namespace locus::nessie {

// One-sided operations of a mean operation, and what they cost at the
// server NIC (its RDMA engine serves READ, WRITE and CAS at their curves)
// and on the links (payload out of the server, into it).
struct OpCounts {
  double ops = 0;            // READs + WRITEs + CASes, each its own round trip
  double payload_bytes = 0;  // READ and WRITE lengths, a CAS's 8 + 16 B
  double service_us = 0;     // at the target NIC
  double out_bytes = 0;      // payload from the server: READ data, CAS results
  double in_bytes = 0;       // payload to the server: WRITE data, CAS operands
};
// (1 - share) of `a` plus share of `b`.
OpCounts mix(const OpCounts& a, const OpCounts& b, double share);
// The mean of `counts` weighted by `weights` (summing to more than 0).
OpCounts weighted(std::span<const OpCounts> counts, std::span<const double> weights);

struct TableCosts {
  // A get and a put (update) of a loaded record, a delete of one (its
  // tombstone, section 4.2.4), and an insert of a new key among the loaded
  // ones (inserts_migrating of them find every candidate taken: their
  // migrations are not counted).
  OpCounts get, put, remove, insert;
  // A get and a delete of a loaded key deleted before (its ITE cleared):
  // every candidate read, and read again by the reverse pass.
  OpCounts get_miss, remove_miss;
  double inserts_migrating = 0;
  double value_bytes = 0;     // a record's value (workload.fieldcount x fieldlength)
  double mean_key_bytes = 0;  // over the loaded keys
  std::vector<std::string> derivation;
};

// The costs on the tables of `config` (its mode picks decoupled or
// coupled tables) for scenario `s`'s records and platform.
StatusOr<TableCosts> table_costs(const scenario::Scenario& s, const NessieConfig& config);

}  // namespace locus::nessie
