// Nessie as a design plug-in: its [index] keys and its driver (driver.cc),
// registered under "nessie". index.mode picks the paper's Nessie
// ("client"), NessieSD ("server") or NessieHY ("hybrid"), section 5.
#include "core/design/design.h"

#include "core/index/nessie/client.h"
#include "core/index/nessie/config.h"
#include "core/index/nessie/layout.h"
#include "core/index/nessie/requests.h"

namespace locus::nessie {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);  // model.cc

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto c = std::make_shared<NessieConfig>();
  LOCUS_RETURN_IF_ERROR(keys.text("mode", &c->mode));
  if (c->mode != "client" && c->mode != "server" && c->mode != "hybrid")
    return keys.fail("mode", "\"" + c->mode + "\" is not one of client, server, hybrid");
  LOCUS_RETURN_IF_ERROR(keys.number("ways", &c->ways, 2, kMaxWays));
  LOCUS_RETURN_IF_ERROR(keys.number("load_factor", &c->load_factor, 1e-6, 1));
  LOCUS_RETURN_IF_ERROR(keys.number("filter_bits", &c->filter_bits, 0, 32));
  LOCUS_RETURN_IF_ERROR(keys.number("index_entries", &c->index_entries, 0, 1e15));
  LOCUS_RETURN_IF_ERROR(keys.number("key_bytes", &c->key_bytes, 1, 1 << 16));
  LOCUS_RETURN_IF_ERROR(keys.number("value_bytes", &c->value_bytes, 0, 1 << 26));
  LOCUS_RETURN_IF_ERROR(keys.number("client_data_entries", &c->client_data_entries, 1, 1 << 30));
  LOCUS_RETURN_IF_ERROR(keys.number("expiry_ms", &c->expiry_ms, 1e-3, 3.6e6));
  LOCUS_RETURN_IF_ERROR(keys.number("clock_skew_us", &c->clock_skew_us, 0, 3.6e9));
  LOCUS_RETURN_IF_ERROR(keys.number("max_migrate_depth", &c->max_migrate_depth, 0, 64));
  LOCUS_RETURN_IF_ERROR(keys.number("max_attempts", &c->max_attempts, 1, 1e9));
  LOCUS_RETURN_IF_ERROR(keys.number("backoff_base_us", &c->backoff_base_us, 0, 1e9));
  LOCUS_RETURN_IF_ERROR(keys.number("backoff_max_us", &c->backoff_max_us, 0, 1e9));
  LOCUS_RETURN_IF_ERROR(keys.flag("multiple_reads", &c->multiple_reads));
  LOCUS_RETURN_IF_ERROR(keys.number("cache_fraction", &c->cache_fraction, 0, 1));
  LOCUS_RETURN_IF_ERROR(keys.number("server_threads", &c->server_threads, 0, 64));
  if (c->server_threads != 0 && c->mode == "client")
    return keys.fail("server_threads", "Nessie (index.mode = client) has no server threads");
  if (c->backoff_max_us < c->backoff_base_us)
    return keys.fail("backoff_max_us", "must not be below index.backoff_base_us");
  return std::shared_ptr<const scenario::IndexConfig>(std::move(c));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add({{"nessie",
                        "cuckoo index of 64-bit entries changed only by RDMA CAS, decoupled data tables; "
                        "client-driven gets, puts, deletes and migrations by READ, CAS and WRITE; "
                        "index.mode = server (NessieSD) or hybrid (NessieHY) sends some to the nodes",
                        false,
                        read_keys,
                        {kLayoutWork, kServerGetWork, kServerPutWork, kServerDeleteWork, kLocalReadWork,
                         kLocalWriteWork, kServerLocalResponseWork},
                        /*deletes=*/true},
                       make_driver,
                       model_profile});
}

}  // namespace locus::nessie
