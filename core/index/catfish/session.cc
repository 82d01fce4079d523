// Catfish's client session: see catfish_session.h.
#include "core/index/catfish/session.h"

namespace locus::catfish {
namespace {

// Answers up to here reuse the session's hit buffer without growing it.
constexpr size_t kReservedHits = 4096;

// A data or query box at the key's place.
catfish::Rect at_key(const workload::SpatialBox& box, uint64_t keynum) {
  const workload::SpatialBox p = workload::place_at_key(box, keynum);
  return {p.x_min, p.y_min, p.x_max, p.y_max};
}

}  // namespace

CatfishSession::CatfishSession(std::unique_ptr<selector::Selector> sel, std::unique_ptr<catfish::CatfishClient> client,
                               workload::QueryScale scale, uint64_t first_id, Random& rng)
    : design::SelectorSession(std::move(sel)), client_(std::move(client)), scale_(scale), next_id_(first_id), rng_(rng) {
  hits_.reserve(kReservedHits);
}

Status CatfishSession::execute(const workload::Op& op, std::string_view, std::string_view, std::string_view* as) {
  using workload::OpKind;
  switch (op.kind) {
    case OpKind::kRead:
    case OpKind::kScan: *as = "SEARCH"; return search(op.keynum);
    case OpKind::kInsert:
    case OpKind::kUpdate: *as = "INSERT"; return insert(op.keynum);
    case OpKind::kReadModifyWrite: {
      *as = "SEARCH-INSERT";
      LOCUS_RETURN_IF_ERROR(search(op.keynum));
      return insert(op.keynum);
    }
  }
  return internal_error("unknown operation");
}

Status CatfishSession::search(uint64_t keynum) {
  Status s = client_->search(at_key(generator_.query(rng_, scale_), keynum), &hits_);
  return s;
}

Status CatfishSession::insert(uint64_t keynum) {
  return client_->insert(at_key(generator_.data(rng_), keynum), next_id_++);
}

void CatfishSession::report(metrics::OpStats& stats) const {
  const catfish::CatfishClientStats& c = client_->stats();
  const catfish::OffloadStats& o = client_->offload_stats();
  design::add_counters(stats, {{"catfish.server_searches", c.server_searches},
                       {"catfish.client_searches", c.client_searches},
                       {"catfish.fallbacks", c.fallbacks},
                       {"catfish.inserts", c.inserts},
                       {"catfish.hits", c.hits},
                       {"catfish.node_reads", o.node_reads},
                       {"catfish.read_batches", o.batches},
                       {"catfish.torn_reads", o.torn_reads},
                       {"catfish.restarts", o.restarts}});
}

}  // namespace locus::catfish
