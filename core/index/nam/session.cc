// A NAM client session (session.h), recording lookups, inserts and deletes for the
// linearizability checker's multimap model.
#include "core/index/nam/session.h"

#include <limits>

#include "core/check/history.h"

namespace locus::nam {

Status NamSession::lookup(std::string_view key, uint64_t k) {
  size_t t = 0;
  if (recording_.on()) {
    check::Operation op;
    op.kind = check::OpKind::kLookup;
    op.key.assign(key);
    t = recording_.history->invoke(std::move(op), recording_.clock->now());
  }
  payloads_.clear();
  Status s = client_->lookup(k, &payloads_);
  if (s.is_ok() && payloads_.empty()) ++get_misses_;
  if (recording_.on()) {
    if (!s.is_ok()) {
      recording_.history->discard(t);
    } else {
      recording_.history->op(t).result_ids = payloads_;
      recording_.history->respond(t, payloads_.empty() ? check::Outcome::kNotFound : check::Outcome::kOk,
                                  recording_.clock->now());
    }
  }
  return s;
}

size_t NamSession::invoke_pair(check::OpKind kind, std::string_view key, uint64_t payload) {
  if (!recording_.on()) return 0;
  check::Operation op;
  op.kind = kind;
  op.key.assign(key);
  op.value = payload;
  return recording_.history->invoke(std::move(op), recording_.clock->now());
}

Status NamSession::insert(std::string_view key, uint64_t k, uint64_t payload) {
  const size_t t = invoke_pair(check::OpKind::kInsert, key, payload);
  Status s = client_->insert({k, payload});
  // A failed insert may have taken effect: it stays pending.
  if (recording_.on() && s.is_ok()) recording_.history->respond(t, check::Outcome::kOk, recording_.clock->now());
  return s;
}

// A YCSB delete removes the key: every payload a lookup finds, each pair by
// its delete bit (recorded as the multimap's delete of that pair).
Status NamSession::remove_key(std::string_view key, uint64_t k) {
  LOCUS_RETURN_IF_ERROR(lookup(key, k));
  const std::vector<uint64_t> found = payloads_;
  for (uint64_t payload : found) {
    const size_t t = invoke_pair(check::OpKind::kDelete, key, payload);
    auto removed = client_->remove({k, payload});
    // A failed delete may have taken effect: it stays pending.
    if (!removed.is_ok()) return removed.status();
    if (*removed) ++deleted_pairs_;
    if (recording_.on()) {
      recording_.history->respond(t, *removed ? check::Outcome::kOk : check::Outcome::kNotFound,
                                  recording_.clock->now());
    }
  }
  return Status();
}

Status NamSession::execute(const workload::Op& op, std::string_view key, std::string_view value,
                           std::string_view* measured_as) {
  using workload::OpKind;
  *measured_as = workload::op_kind_name(op.kind);
  ++ops_;
  if (gc_clock_ != nullptr && gc_clock_->now() >= next_gc_ns_) {
    // The pass is this client's time, as a compute-server thread's
    // (its latency lands on the operation that follows it).
    if (!client_->collect_garbage().is_ok()) ++gc_failures_;
    next_gc_ns_ = gc_clock_->now() + gc_interval_ns_;
  }
  LOCUS_ASSIGN_OR_RETURN(uint64_t number, key_number(key));
  const uint64_t k = keys_->key_of(number);
  std::string skewed_name;
  if (keys_->skewed() && recording_.on()) {
    // Two workload keys may share an index key: the history names the
    // latter (the key is used for the history only).
    skewed_name = index_key_name(k);
    key = skewed_name;
  }
  switch (op.kind) {
    case OpKind::kRead:
      return lookup(key, k);
    case OpKind::kUpdate:
    case OpKind::kInsert:
      return insert(key, k, check::value_digest(value));
    case OpKind::kReadModifyWrite:
      LOCUS_RETURN_IF_ERROR(lookup(key, k));
      return insert(key, k, check::value_digest(value));
    case OpKind::kDelete:
      return remove_key(key, k);
    case OpKind::kScan: {
      pairs_.clear();
      Status s = client_->range({k, 0}, std::numeric_limits<uint64_t>::max(), op.scan_length, &pairs_);
      scanned_pairs_ += pairs_.size();
      return s;
    }
  }
  return internal_error("nam: unknown operation");
}

void NamSession::report(metrics::OpStats& stats) const {
  const TreeStats t = client_->tree_stats();
  const RemoteStats r = client_->remote_stats();
  const EpochStats e = client_->epoch_stats();
  design::add_counters(stats, {{"get_misses", get_misses_},
                               {"nam.ops", ops_},
                               {"nam.page_reads", r.reads},
                               {"nam.scanned_pairs", scanned_pairs_},
                               {"nam.deleted_pairs", deleted_pairs_},
                               {"nam.restarts", t.restarts},
                               {"nam.splits", t.splits},
                               {"nam.moved_right", t.moved_right},
                               {"nam.head_prefetches", t.head_prefetches},
                               {"nam.prefetch_hits", t.prefetch_hits},
                               {"nam.stale_head_reads", t.stale_head_reads},
                               {"nam.head_rebuilds", t.head_rebuilds},
                               {"nam.gc_passes", t.gc_passes},
                               {"nam.gc_entries_collected", t.entries_collected},
                               {"nam.gc_merges", t.merges},
                               {"nam.gc_pages_freed", t.pages_freed},
                               {"nam.gc_pages_reused", t.pages_reused},
                               {"nam.gc_slots_broken", e.slots_broken},
                               {"nam.epoch_announces", e.announces},
                               {"nam.epoch_rejoins", e.rejoins},
                               {"nam.gc_failures", gc_failures_}});
  if (mailboxes_ != nullptr) {
    const messaging::MailboxStats& m = mailboxes_->stats();
    const messaging::MessagingClientStats c = mailboxes_->client_stats();
    design::add_counters(stats, {{"nam.mailbox_calls", m.calls},
                                 {"nam.mailbox_reconnects", m.reconnects},
                                 {"nam.mailbox_reconnect_failures", m.reconnect_failures},
                                 {"nam.mailbox_reconnects_deferred", m.reconnects_deferred},
                                 {"nam.mailbox_stale_responses", c.stale_responses},
                                 {"nam.mailbox_space_waits", c.space_waits}});
  }
  // Leased locks (remote_access.h): only runs where a lease ran out add these.
  if (r.broken_locks + r.lease_give_ups + r.fenced > 0) {
    design::add_counters(stats, {{"nam.broken_locks", r.broken_locks},
                                 {"nam.lease_give_ups", r.lease_give_ups},
                                 {"nam.fences", r.fences},
                                 {"nam.fenced", r.fenced}});
  }
}

}  // namespace locus::nam
