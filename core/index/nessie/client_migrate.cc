// NessieClient::migrate (paper section 4.2.3): frees a put's candidate
// ITE by moving the entry it names to another of that key's candidates,
// recursively when that one is taken too; when the chain through one
// taken candidate reaches index.max_migrate_depth, the next candidate's
// chain is tried (a cuckoo insertion's search, at most ways^depth ITE
// reads). See client.h.
#include <cstring>
#include <string>
#include <utility>

#include "core/index/nessie/client.h"

namespace locus::nessie {

Status NessieClient::migrate(Slot source, uint64_t source_ite, uint32_t depth, bool* chain_exhausted) {
  if (chain_exhausted != nullptr) *chain_exhausted = false;
  if (depth > options_.max_migrate_depth) {
    if (chain_exhausted != nullptr) *chain_exhausted = true;
    return resource_exhausted("nessie put: every candidate index entry is taken and a chain of " +
                              std::to_string(depth) +
                              " migrations (index.max_migrate_depth) frees none: raise "
                              "index.index_entries or lower index.load_factor");
  }
  if (options_.test_hook) options_.test_hook("migrate.start");
  // The source's key, kept at this level while deeper migrations run.
  std::byte* meta = meta_at(depth + 1);
  LOCUS_RETURN_IF_ERROR(read_dte(source_ite, 0, g_.meta_bytes(), meta));
  const DteHeader sh = header_at(meta);
  if (sh.key_bytes > g_.key_bytes || sh.value_bytes > g_.value_bytes) {
    LOCUS_RETURN_IF_ERROR(check_deadline());
    return corruption("nessie migrate: a data entry with impossible lengths");
  }
  if (!sh.valid()) {
    ++stats_.migration_aborts;
    return conflict("the migration's source is in progress");
  }
  const std::string_view moved(reinterpret_cast<const char*>(meta + kDteHeaderBytes), sh.key_bytes);
  const KeyHash kh = hash_key(moved, g_);
  chain_[depth] = source;
  auto in_chain = [&](Slot slot) {
    for (uint32_t d = 0; d <= depth; ++d) {
      if (chain_[d] == slot) return true;
    }
    return false;
  };

  // The destination: the first empty candidate other than the source,
  // else the first other one, in way order, that is not the source of a
  // migration this one serves (that would go round in a circle) and that
  // a migration of its own frees. Only a chain that reaches the depth
  // limit moves on to the next candidate: any other failure ends the
  // attempt (a deeper chain that ran out of room changed nothing).
  int dest = -1;
  uint64_t dest_ite = 0;
  uint32_t taken_count = 0;
  uint32_t taken[kMaxWays];
  uint64_t taken_ite[kMaxWays];
  for (uint32_t w = 0; w < g_.ways && dest < 0; ++w) {
    if (kh.repeat[w] || in_chain(kh.slot[w])) continue;
    uint64_t ite;
    LOCUS_RETURN_IF_ERROR(read_ite(kh.slot[w], &ite));
    if (Geometry::empty(ite)) {
      dest = static_cast<int>(w);
      dest_ite = ite;
    } else {
      taken[taken_count] = w;
      taken_ite[taken_count++] = ite;
    }
  }
  if (dest < 0) {
    Status exhausted = resource_exhausted(
        "nessie migrate: every candidate of a key to move is taken by this chain of migrations: raise "
        "index.index_entries or lower index.load_factor");
    for (uint32_t i = 0; i < taken_count && dest < 0; ++i) {
      bool deeper_exhausted = false;
      Status freed = migrate(kh.slot[taken[i]], taken_ite[i], depth + 1, &deeper_exhausted);
      if (freed.is_ok()) {
        dest = static_cast<int>(taken[i]);
      } else if (deeper_exhausted) {
        exhausted = std::move(freed);
      } else {
        return freed;
      }
    }
    if (dest < 0) {
      if (chain_exhausted != nullptr) *chain_exhausted = true;
      return exhausted;
    }
    LOCUS_RETURN_IF_ERROR(read_ite(kh.slot[dest], &dest_ite));
    if (!Geometry::empty(dest_ite)) {
      ++stats_.migration_aborts;
      return conflict("the freed destination was taken");
    }
  }

  // Copy the source's DTE to a new invalid one, with no previous version:
  // the destination was empty, and the source may be deleted or replaced
  // before the migration's CAS on it fails, so a get that took the source
  // as the copy's previous version could answer a value already gone
  // (the concurrency test's history showed one).
  LOCUS_ASSIGN_OR_RETURN(const uint64_t entry, allocate_dte());
  const uint32_t bytes = g_.meta_bytes() + sh.value_bytes;
  Status copied = read_dte(source_ite, 0, bytes, entry_);
  if (copied.is_ok()) copied = check_deadline();
  if (copied.is_ok()) {
    DteHeader h = header_at(entry_);
    h.state = kDteWatermark;
    h.recycle = 0;
    h.prev = 0;
    std::memcpy(entry_, &h, sizeof h);
    copied = write_dte(entry, 0, bytes, entry_);
  }
  if (!copied.is_ok()) {
    unpublish(entry);
    return copied;
  }
  const uint64_t copy = my_ite(entry, kh.filter);
  if (options_.test_hook) options_.test_hook("migrate.copied");
  bool applied = false;
  Status s = check_deadline();
  if (s.is_ok()) s = cas_known(kh.slot[dest], dest_ite, copy, copy, &applied);
  if (!s.is_ok() && s.code() != StatusCode::kAborted) {
    publish(entry);  // the destination may name it: never reused
    return s;
  }
  if (!applied) {
    unpublish(entry);
    ++stats_.migration_aborts;
    return s.is_ok() ? conflict("the migration's destination changed") : s;
  }
  publish(entry);
  if (options_.test_hook) options_.test_hook("migrate.destination_swapped");
  // The source is cleared only by its own CAS, never because the
  // destination's swapped: an attempt that ran out of time here clears the
  // destination again (a stale `applied` once made the copy valid beside
  // a source that a delete had already cleared, so the deleted value came
  // back).
  bool source_cleared = false;
  s = check_deadline();
  if (s.is_ok()) s = cas_known(source, source_ite, Geometry::cleared(source_ite), 0, &source_cleared);
  if (!s.is_ok() && s.code() != StatusCode::kAborted) {
    // Unknown: the copy stays, invalid; operations on the key that meet
    // it give way (Nessie has no recovery for a migration cut short).
    return s;
  }
  if (!source_cleared) {
    // Section 4.3.1: clear the destination again; if that fails, someone
    // else already did.
    ++stats_.migration_aborts;
    if (cas_known(kh.slot[dest], copy, Geometry::cleared(copy), copy, &applied).is_ok() && applied) stage(copy);
    return s.is_ok() ? conflict("the migration's source changed") : s;
  }
  LOCUS_RETURN_IF_ERROR(make_valid(copy));
  ++stats_.migrations;
  stage(source_ite);
  return Status();
}

}  // namespace locus::nessie
