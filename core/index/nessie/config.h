// Nessie's [index] keys (read in design.cc). Defaults are either the
// Nessie testbed's figures (shared/calibration.md, "Nessie testbed"; the
// paper is shared/papers/nessie-kv-tpds17.txt) or protocol parameters,
// each said to be one where it is declared.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/torn_read.h"
#include "core/scenario/index_config.h"

namespace locus::nessie {

struct NessieConfig final : scenario::IndexConfig {
  // client (Nessie: every operation by one-sided READ, CAS and WRITE),
  // server (NessieSD: every operation by the key's node, HERD-style
  // request rings) or hybrid (NessieHY: gets as Nessie's, puts and
  // deletes as NessieSD's). Paper section 5; see requests.h.
  std::string mode = "client";
  // Cuckoo hash functions over all nodes' index tables: 3 (calibration.md,
  // Nessie testbed: "3 cuckoo hash functions").
  uint32_t ways = 3;
  // Index entries per loaded record: 0.4 (calibration.md, Nessie testbed:
  // "Index table load factor 0.4"). Sizes the index tables when
  // index_entries is 0.
  double load_factor = 0.4;
  // Key-hash bits kept in each index entry to skip other keys' data
  // entries: 7 (calibration.md, Nessie testbed: "7 filter bits").
  uint32_t filter_bits = 7;
  // Index entries per node; 0: workload.recordcount / load_factor over the nodes.
  uint64_t index_entries = 0;
  // The largest key a data entry holds: 128 B (calibration.md, Nessie
  // testbed: "Keys 128 B"; the paper's keys and values are fixed-size).
  uint32_t key_bytes = 128;
  // The largest value a data entry holds; 0: workload.fieldcount x fieldlength.
  uint32_t value_bytes = 0;
  // Protocol parameter: data entries each client session owns for its puts
  // and migrations. A put's value stays in its entry until another put
  // replaces it, so the sessions' entries must hold every record's value
  // between them (make_driver refuses fewer), plus, per session, its puts
  // over one expiry period (section 4.3.1), or puts wait for entries to
  // expire.
  uint32_t client_data_entries = 4096;
  // How long a replaced data entry stays untouched before reuse, and the
  // longest an operation may run before it fails and retries: 1 s, the
  // period section 4.3.1 of the paper argues for.
  double expiry_ms = 1000;
  // Protocol parameter: how far apart the nodes' clocks may be (the paper
  // uses NTP). 0: the backends here (loopback, SimGrid) share one clock;
  // set it for machines whose clocks are synchronised only loosely.
  double clock_skew_us = 0;
  // Protocol parameter: how deep a chain of migrations (section 4.2.3) may
  // go before the put fails, asking for larger index tables.
  uint32_t max_migrate_depth = 4;
  // Protocol parameter: attempts of one operation (conflicts, expired
  // attempts) before it fails; bounds a livelock, not from the paper.
  uint32_t max_attempts = 1000;
  // Exponential back-off between attempts (section 4.3.2), from the base
  // doubling to the cap; defaults are the shared torn-read policy's.
  double backoff_base_us = static_cast<double>(TornReadPolicy{}.backoff_base_ns) / 1e3;
  double backoff_max_us = static_cast<double>(TornReadPolicy{}.backoff_max_ns) / 1e3;
  // Section 4.3.2 "multiple reads": gets read a data entry's key and
  // metadata first, and its value only when the key matches.
  bool multiple_reads = false;
  // The local DTE cache (sections 4.1.3, 4.3.1), as a fraction of the
  // records per node: 0.5% (calibration.md, Nessie testbed: "cache holds
  // 0.5% of the keys per node"). The paper's cache is one per node,
  // shared by its workers; here each client session has one of that size.
  // 0: no cache.
  double cache_fraction = 0.005;
  // NessieSD and NessieHY: server worker threads per node, each polling its
  // share of the node's request rings on an endpoint of its own. 0: the
  // testbed's tuning (calibration.md, Nessie testbed: "server-driven
  // variant tuned to 3 server + 9 client workers (< 1 KB values) or 2 + 10
  // (>= 1 KB)"): 3 below 1 KB values, else 2.
  uint32_t server_threads = 0;
};

}  // namespace locus::nessie
