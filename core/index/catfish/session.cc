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

check::Rect to_check(const catfish::Rect& r) { return {r.x_min, r.y_min, r.x_max, r.y_max}; }

}  // namespace

check::Operation rect_operation(check::OpKind kind, const catfish::Rect& rect, uint64_t id) {
  check::Operation op;
  op.kind = kind;
  op.rect = to_check(rect);
  op.value = id;
  return op;
}

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
    case OpKind::kDelete:
      // The loader refuses deletes for catfish (IndexType::deletes).
      *as = "DELETE";
      return unimplemented("catfish: workload.deleteproportion: a delete needs the rectangle and id an insert drew");
  }
  return internal_error("unknown operation");
}

// Recorded ([check]) as a search of the query returning the hits' ids, or
// dropped if it failed (a search changes nothing).
Status CatfishSession::search(uint64_t keynum) {
  const catfish::Rect query = at_key(generator_.query(rng_, scale_), keynum);
  const bool rec = recording_.on();
  const size_t t = rec ? recording_.history->invoke(rect_operation(check::OpKind::kSearch, query, 0),
                                                    recording_.clock->now())
                       : 0;
  Status s = client_->search(query, &hits_);
  if (!rec) return s;
  if (!s.is_ok()) {
    recording_.history->discard(t);
    return s;
  }
  for (const catfish::Hit& h : hits_) recording_.history->op(t).result_ids.push_back(h.id);
  recording_.history->respond(t, check::Outcome::kOk, recording_.clock->now());
  return s;
}

// Recorded as an insert of (id, rectangle); one that failed may have
// happened, so it stays pending.
Status CatfishSession::insert(uint64_t keynum) {
  const catfish::Rect rect = at_key(generator_.data(rng_), keynum);
  const uint64_t id = next_id_++;
  const bool rec = recording_.on();
  const size_t t = rec ? recording_.history->invoke(rect_operation(check::OpKind::kInsert, rect, id),
                                                    recording_.clock->now())
                       : 0;
  Status s = client_->insert(rect, id);
  if (rec && s.is_ok()) recording_.history->respond(t, check::Outcome::kOk, recording_.clock->now());
  return s;
}

void CatfishSession::report(metrics::OpStats& stats) const {
  const catfish::CatfishClientStats& c = client_->stats();
  const catfish::OffloadStats& o = client_->offload_stats();
  design::add_counters(stats, {{"catfish.server_searches", c.server_searches},
                       {"catfish.client_searches", c.client_searches},
                       {"catfish.fallbacks", c.fallbacks},
                       {"catfish.inserts", c.inserts},
                       {"catfish.hits", c.hits},
                       {"catfish.reconnects", c.reconnects},
                       {"catfish.reconnect_failures", c.reconnect_failures},
                       {"catfish.node_reads", o.node_reads},
                       {"catfish.read_batches", o.batches},
                       {"catfish.torn_reads", o.torn_reads},
                       {"catfish.restarts", o.restarts}});
}

}  // namespace locus::catfish
