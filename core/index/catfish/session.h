// CatfishSession: a Catfish client's YCSB operations (core/design/
// client_session.h), opened by the driver (driver.cc).
//
// YCSB operations become spatial ones. A key number stands for a place
// (workload::place_at_key: its hash picks an anchor point in the unit
// square). Reads and scans are searches ("SEARCH") with a query rectangle
// of the session's query scale at the key's place; inserts and updates
// insert a data-sized rectangle there ("INSERT"), each under a new id;
// read-modify-writes do both ("SEARCH-INSERT"). So the workload's
// requestdistribution decides the spatial skew. Keys and values
// themselves are not used.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/design/client_session.h"
#include "core/index/catfish/catfish_client.h"
#include "core/workload/spatial.h"

namespace locus::catfish {

// A history operation of `kind` (search or insert) on `rect`, id `id`.
check::Operation rect_operation(check::OpKind kind, const catfish::Rect& rect, uint64_t id);

class CatfishSession final : public design::SelectorSession {
 public:
  // `client` asks `sel`; inserted rectangles get ids first_id, first_id+1,
  // ... (above the loaded ones, apart from other clients'); the
  // rectangles are drawn from `rng`.
  CatfishSession(std::unique_ptr<selector::Selector> sel, std::unique_ptr<catfish::CatfishClient> client,
                 workload::QueryScale scale, uint64_t first_id, Random& rng);

  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* measured_as) override;
  // The client's counters as "catfish.<name>".
  void report(metrics::OpStats& stats) const override;
  bool can_record() const override { return true; }

  const catfish::CatfishClientStats& client_stats() const { return client_->stats(); }
  const catfish::OffloadStats& offload_stats() const { return client_->offload_stats(); }

 private:
  Status search(uint64_t keynum);
  Status insert(uint64_t keynum);

  std::unique_ptr<catfish::CatfishClient> client_;
  const workload::SpatialGenerator generator_;
  const workload::QueryScale scale_;
  uint64_t next_id_;
  Random& rng_;
  std::vector<catfish::Hit> hits_;
};

}  // namespace locus::catfish
