// What driver.cc derives from Nessie's [index] keys, shared with tests
// that build a Nessie deployment by hand: the tables' geometry and a
// client's options.
#pragma once

#include <cstdint>
#include <string>

#include "core/index/nessie/client.h"
#include "core/index/nessie/config.h"
#include "core/index/nessie/layout.h"

namespace locus::nessie {

// The geometry of `nodes` nodes holding `records` loaded records for
// `clients` clients, with values of up to value_bytes. An error sets
// *bad_key to the key to blame.
StatusOr<Geometry> make_geometry(const NessieConfig& c, uint32_t nodes, uint64_t records, uint32_t clients,
                                 uint32_t value_bytes, std::string* bad_key);
// A client's options; its cache holds index.cache_fraction of the records
// per node (of geometry `g`, loaded with `records`).
ClientOptions client_options(const NessieConfig& c, uint64_t records, uint32_t nodes);

}  // namespace locus::nessie
