// NessieClient's operations: get, put, delete and migrate (paper section
// 4.2), each an attempt that the retry loop repeats after a back-off when
// it meets a concurrent operation or runs out of time. See client.h.
#include <cstring>
#include <string>

#include "core/index/nessie/client.h"
#include "core/index/nessie/requests.h"

namespace locus::nessie {
namespace {

const Status& status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const StatusOr<T>& s) {
  return s.status();
}

}  // namespace

template <typename Attempt>
auto NessieClient::with_retries(const char* what, Attempt attempt) -> decltype(attempt()) {
  Env& env = ep_.env();
  Status last;
  for (uint32_t a = 1;; ++a) {
    ++stats_.attempts;
    attempt_start_ = env.clock->now();
    auto r = attempt();
    const Status s = status_of(r);
    if (s.code() != StatusCode::kAborted) return r;
    last = s;
    if (a >= options_.max_attempts) break;
    // Exponential back-off (section 4.3.2), drawn from the upper half of
    // the doubling pause so that clients that collided spread out.
    const Nanos pause = doubling_backoff(a + 1, options_.backoff_base_ns, options_.backoff_max_ns);
    if (pause > 0) {
      const Nanos p = pause / 2 + static_cast<Nanos>(env.random->uniform(static_cast<uint64_t>(pause / 2) + 1));
      stats_.backoff_ns += static_cast<uint64_t>(p);
      env.clock->sleep_for(p);
    }
  }
  return Status(StatusCode::kAborted, std::string(what) + ": gave up after " + std::to_string(options_.max_attempts) +
                                          " attempts (index.max_attempts); the last: " + last.message());
}

StatusOr<std::string_view> NessieClient::get(std::string_view key) {
  ++stats_.gets;
  if (key.size() > g_.key_bytes) {
    return invalid_argument("nessie get: a key of " + std::to_string(key.size()) +
                            " bytes exceeds index.key_bytes = " + std::to_string(g_.key_bytes));
  }
  if (options_.mode == Mode::kServer) return call(hash_key(key, g_).slot[0].node, kRequestGet, key, {});
  return with_retries("nessie get", [&] { return get_once(key); });
}

Status NessieClient::put(std::string_view key, std::string_view value) {
  ++stats_.puts;
  if (key.size() > g_.key_bytes || value.size() > g_.value_bytes) {
    return invalid_argument("nessie put: a key of " + std::to_string(key.size()) + " bytes and a value of " +
                            std::to_string(value.size()) + " exceed index.key_bytes = " + std::to_string(g_.key_bytes) +
                            " or index.value_bytes = " + std::to_string(g_.value_bytes));
  }
  if (options_.mode != Mode::kClient) {
    // The node answers ABORTED while it has no expired data entry to reuse.
    const uint32_t node = hash_key(key, g_).slot[0].node;
    return with_retries("nessie put", [&] { return call(node, kRequestPut, key, value).status(); });
  }
  return with_retries("nessie put", [&] { return write_once(Kind::kPut, key, value); });
}

Status NessieClient::remove(std::string_view key) {
  ++stats_.deletes;
  if (key.size() > g_.key_bytes) {
    return invalid_argument("nessie delete: a key of " + std::to_string(key.size()) +
                            " bytes exceeds index.key_bytes = " + std::to_string(g_.key_bytes));
  }
  if (options_.mode != Mode::kClient) return call(hash_key(key, g_).slot[0].node, kRequestDelete, key, {}).status();
  return with_retries("nessie delete", [&] { return write_once(Kind::kDelete, key, {}); });
}

StatusOr<std::string_view> NessieClient::read_value(std::string_view key, uint64_t ite, bool follow_prev) {
  const uint32_t meta = g_.meta_bytes();
  LOCUS_RETURN_IF_ERROR(read_dte(ite, 0, options_.multiple_reads ? meta : g_.dte_bytes(), entry_));
  const DteHeader h = header_at(entry_);
  if (h.key_bytes > g_.key_bytes || h.value_bytes > g_.value_bytes) {
    // Immutable while named by an ITE: only a recycled entry looks so.
    LOCUS_RETURN_IF_ERROR(check_deadline());
    return corruption("nessie: data entry " + std::to_string(g_.dte_of(ite)) + " of node " +
                      std::to_string(g_.dti_of(ite)) + " has impossible lengths");
  }
  if (std::string_view(reinterpret_cast<const char*>(entry_ + kDteHeaderBytes), h.key_bytes) != key) {
    return not_found("another key");
  }
  if (!h.valid()) {
    // An operation on the key is in progress: its previous version, if
    // it is still a valid entry of the key, is the key's value until then.
    if (!follow_prev || h.prev == 0 || Geometry::empty(h.prev)) return conflict("a put of the key is in progress");
    auto previous = read_value(key, h.prev, false);
    if (!previous.is_ok()) {
      return previous.status().code() == StatusCode::kNotFound ? conflict("a put of the key is in progress")
                                                               : previous.status();
    }
    ++stats_.previous_versions;
    return previous;
  }
  if (options_.multiple_reads && h.value_bytes > 0) {
    LOCUS_RETURN_IF_ERROR(read_dte(ite, meta, h.value_bytes, entry_ + meta));
  }
  return std::string_view(reinterpret_cast<const char*>(entry_ + meta), h.value_bytes);
}

StatusOr<std::string_view> NessieClient::get_once(std::string_view key) {
  Pass p;
  p.kh = hash_key(key, g_);
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (p.kh.repeat[w]) {
      p.seen[w] = Seen::kRepeat;
      continue;
    }
    LOCUS_RETURN_IF_ERROR(read_ite(p.kh.slot[w], &p.ite[w]));
    if (Geometry::empty(p.ite[w]) || g_.filter_of(p.ite[w]) != p.kh.filter) continue;
    if (options_.test_hook) options_.test_hook("get.ite_read");
    // The ITE was read within this attempt: a cached DTE it names is
    // good for another expiry period from the attempt's start.
    const Nanos good_until = attempt_start_ + deadline_ns_;
    if (cache_ != nullptr) {
      if (auto hit = cache_->find(p.ite[w], key, ep_.env().clock->now(), good_until)) {
        ++stats_.cache_hits;
        return *hit;
      }
    }
    const uint64_t before = stats_.previous_versions;
    auto value = read_value(key, p.ite[w], true);
    if (value.status().code() == StatusCode::kNotFound) continue;
    if (!value.is_ok()) return value;
    LOCUS_RETURN_IF_ERROR(check_deadline());
    // Only a valid DTE the ITE names is cached, not a previous version.
    if (cache_ != nullptr && stats_.previous_versions == before) cache_->insert(p.ite[w], key, *value, good_until);
    return value;
  }
  // A miss: a migration may have moved the key into an ITE already read.
  LOCUS_ASSIGN_OR_RETURN(const bool unchanged, reverse_pass(p, p.ite));
  if (!unchanged) return conflict("an index entry changed during a miss");
  LOCUS_RETURN_IF_ERROR(check_deadline());
  return not_found("nessie get: no such key");
}

Status NessieClient::forward_pass(std::string_view key, Pass* p, uint32_t level) {
  p->kh = hash_key(key, g_);
  std::byte* meta = meta_at(level);
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (p->kh.repeat[w]) {
      p->seen[w] = Seen::kRepeat;
      continue;
    }
    LOCUS_RETURN_IF_ERROR(read_ite(p->kh.slot[w], &p->ite[w]));
    if (Geometry::empty(p->ite[w])) {
      p->seen[w] = Seen::kEmpty;
      continue;
    }
    p->seen[w] = Seen::kOther;
    if (g_.filter_of(p->ite[w]) != p->kh.filter) continue;
    LOCUS_RETURN_IF_ERROR(read_dte(p->ite[w], 0, g_.meta_bytes(), meta));
    const DteHeader h = header_at(meta);
    if (h.key_bytes > g_.key_bytes) {
      // Immutable while named by an ITE: only a recycled entry looks so.
      LOCUS_RETURN_IF_ERROR(check_deadline());
      return corruption("nessie: a data entry with an impossible key length");
    }
    if (std::string_view(reinterpret_cast<const char*>(meta + kDteHeaderBytes), h.key_bytes) != key) continue;
    // Section 4.3.2: a put that meets another put of its key gives way.
    if (!h.valid()) return conflict("another operation on the key is in progress");
    p->seen[w] = Seen::kMine;
  }
  return check_deadline();
}

StatusOr<bool> NessieClient::reverse_pass(const Pass& p, const uint64_t* expect) {
  for (uint32_t w = g_.ways; w-- > 0;) {
    if (p.kh.repeat[w]) continue;
    uint64_t now;
    LOCUS_RETURN_IF_ERROR(read_ite(p.kh.slot[w], &now));
    if (now != expect[w]) {
      ++stats_.reverse_changes;
      return false;
    }
  }
  return true;
}

Status NessieClient::write_once(Kind kind, std::string_view key, std::string_view value) {
  Pass p;
  int cand = -1;
  // A migration that freed a candidate lets the put start again at once;
  // a few in a row mean others keep filling the candidates: a conflict.
  for (uint32_t restarts = 0;; ++restarts) {
    LOCUS_RETURN_IF_ERROR(forward_pass(key, &p, 0));
    // The ITE that holds the key, else (a put) the first empty one.
    cand = -1;
    for (uint32_t w = 0; w < g_.ways && cand < 0; ++w) {
      if (p.seen[w] == Seen::kMine) cand = static_cast<int>(w);
    }
    for (uint32_t w = 0; kind == Kind::kPut && w < g_.ways && cand < 0; ++w) {
      if (p.seen[w] == Seen::kEmpty) cand = static_cast<int>(w);
    }
    if (cand >= 0) break;
    if (kind == Kind::kDelete) {
      LOCUS_ASSIGN_OR_RETURN(const bool unchanged, reverse_pass(p, p.ite));
      if (!unchanged) return conflict("an index entry changed during a delete's miss");
      LOCUS_RETURN_IF_ERROR(check_deadline());
      return not_found("nessie delete: no such key");
    }
    if (restarts >= g_.ways) return conflict("the candidates filled again after migrations");
    // Every candidate holds another key: free the first (section 4.2.3).
    LOCUS_RETURN_IF_ERROR(migrate(p.kh.slot[0], p.ite[0], 0));
  }
  const uint32_t c = static_cast<uint32_t>(cand);
  const bool replaces = p.seen[c] == Seen::kMine;
  if (options_.test_hook) options_.test_hook("write.forward_pass_done");

  // The new DTE, invalid, in the client's slice.
  LOCUS_ASSIGN_OR_RETURN(const uint64_t entry, allocate_dte());
  DteHeader h;
  h.state = kDteWatermark;
  h.prev = replaces ? p.ite[c] : 0;
  h.key_bytes = static_cast<uint32_t>(key.size());
  h.value_bytes = static_cast<uint32_t>(value.size());
  std::memcpy(entry_, &h, sizeof h);
  std::memcpy(entry_ + kDteHeaderBytes, key.data(), key.size());
  if (!value.empty()) std::memcpy(entry_ + g_.meta_bytes(), value.data(), value.size());
  Status written = write_dte(entry, 0, g_.meta_bytes() + h.value_bytes, entry_);
  if (!written.is_ok()) {
    unpublish(entry);
    return written;
  }
  const uint64_t mine = my_ite(entry, p.kh.filter);
  // A CAS compares with what the forward pass read: only within the deadline.
  bool applied = false;
  Status swapped = check_deadline();
  if (swapped.is_ok()) swapped = cas_known(p.kh.slot[c], p.ite[c], mine, mine, &applied);
  if (!swapped.is_ok() && swapped.code() != StatusCode::kAborted) {
    publish(entry);  // an ITE may name it: never reused (unless someone stages it)
    return swapped;
  }
  if (!applied) {
    unpublish(entry);  // no ITE ever named it
    return swapped.is_ok() ? conflict("the candidate index entry changed") : swapped;
  }
  publish(entry);

  // Other ITEs of the key are duplicates: clear them.
  uint64_t expect[kMaxWays];
  bool cleared[kMaxWays] = {};
  for (uint32_t w = 0; w < g_.ways; ++w) expect[w] = p.ite[w];
  expect[c] = mine;
  Status failed;
  for (uint32_t w = 0; w < g_.ways && failed.is_ok(); ++w) {
    if (w == c || p.seen[w] != Seen::kMine) continue;
    failed = check_deadline();
    if (failed.is_ok()) failed = cas_known(p.kh.slot[w], p.ite[w], Geometry::cleared(p.ite[w]), 0, &applied);
    if (failed.is_ok() && !applied) failed = conflict("a duplicate index entry changed");
    if (failed.is_ok()) {
      cleared[w] = true;
      expect[w] = Geometry::cleared(p.ite[w]);
    }
  }
  if (failed.is_ok()) {
    auto unchanged = reverse_pass(p, expect);
    if (!unchanged.is_ok())
      failed = unchanged.status();
    else if (!*unchanged)
      failed = conflict("an index entry changed during the put");
  }
  if (failed.is_ok()) failed = check_deadline();
  if (!failed.is_ok()) {
    // Undo: the candidate and the duplicates get back what they held; the
    // new DTE was named by an ITE, so it waits out an expiry period (and
    // is never reused if the candidate may still name it).
    ++stats_.undone;
    if (cas_known(p.kh.slot[c], mine, p.ite[c], mine, &applied).is_ok() && applied) {
      stage(mine);
    } else {
      ++stats_.restore_failures;
    }
    for (uint32_t w = 0; w < g_.ways; ++w) {
      if (!cleared[w]) continue;
      if (!cas_known(p.kh.slot[w], Geometry::cleared(p.ite[w]), p.ite[w], 0, &applied).is_ok() || !applied) {
        ++stats_.restore_failures;
      }
    }
    return failed;
  }

  if (kind == Kind::kPut) {
    // The linearization point: the DTE becomes valid.
    if (options_.test_hook) options_.test_hook("put.before_valid");
    LOCUS_RETURN_IF_ERROR(make_valid(mine));
  } else {
    // A delete's tombstone never becomes valid; clearing its ITE is the
    // linearization point. Nothing else changes an ITE naming an invalid
    // DTE, so this CAS cannot fail to apply.
    LOCUS_RETURN_IF_ERROR(cas_known(p.kh.slot[c], mine, Geometry::cleared(mine), mine, &applied));
    if (!applied) return internal_error("nessie delete: the tombstone's index entry changed under it");
    stage(mine);
  }
  if (replaces) stage(p.ite[c]);
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (cleared[w]) stage(p.ite[w]);
  }
  return Status();
}

}  // namespace locus::nessie
