// NessieSession: see session.h.
#include "core/index/nessie/session.h"

#include <string>
#include <vector>

namespace locus::nessie {

Status NessieSession::execute(const workload::Op& op, std::string_view key, std::string_view value,
                              std::string_view* as) {
  return design::execute_key_value(
      *client_, op, key, value, as,
      [](std::string_view, uint32_t, std::vector<std::string>*) { return unimplemented("nessie has no scans"); },
      recording_, &get_misses_);
}

void NessieSession::report(metrics::OpStats& stats) const {
  const ClientStats& s = client_->stats();
  design::add_counters(stats, {{"get_misses", get_misses_},
                               {"nessie.attempts", s.attempts},
                               {"nessie.conflicts", s.conflicts},
                               {"nessie.expired", s.expired},
                               {"nessie.reverse_changes", s.reverse_changes},
                               {"nessie.cas_failures", s.cas_failures},
                               {"nessie.previous_versions", s.previous_versions},
                               {"nessie.migrations", s.migrations},
                               {"nessie.migration_aborts", s.migration_aborts},
                               {"nessie.undone", s.undone},
                               {"nessie.restore_failures", s.restore_failures},
                               {"nessie.staged", s.staged},
                               {"nessie.reclaimed", s.reclaimed},
                               {"nessie.slice_waits", s.slice_waits},
                               {"nessie.ite_reads", s.ite_reads},
                               {"nessie.dte_reads", s.dte_reads},
                               {"nessie.cache_hits", s.cache_hits},
                               {"nessie.cas_resolved", s.cas_resolved},
                               {"nessie.stage_failures", s.stage_failures},
                               {"nessie.reclaim_scans", s.reclaim_scans},
                               {"nessie.server_requests", s.server_requests},
                               {"nessie.ring_resets", s.ring_resets},
                               {"nessie.rdma_ops", s.rdma_ops},
                               {"nessie.local_ops", s.local_ops},
                               {"nessie.local_requests", s.local_requests}});
  // Only a client that took over a slice given back (a later run against
  // the same nodes) has any.
  if (s.adopted > 0) design::add_counters(stats, {{"nessie.adopted", s.adopted}});
}

}  // namespace locus::nessie
