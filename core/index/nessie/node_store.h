// NodeStore: the server side of NessieSD and NessieHY (paper section 5):
// one node's server thread doing gets, puts and deletes on its own
// partially coupled tables (every candidate ITE of a key it owns is in its
// index table and names a DTE of its data table), with CPU loads and
// stores instead of verbs. Only the node's server threads change the
// tables, one operation at a time (a short lock: an operation never
// waits; the CPU it is charged runs outside it, on the thread's core); in NessieHY clients read the same tables by
// RDMA READ at any time (client-driven gets), which is why a change keeps
// Nessie's rules for readers: a DTE is written whole before an ITE names
// it and is never changed while named; a replaced or deleted DTE is reused
// only after the expiry period (a reader's attempt fails by then); an ITE
// changes by one aligned 8-byte store, and a key that moves to another
// candidate (a migration) is stored at its destination before its source
// is overwritten, so a reader finds it, or finds an ITE changed and
// retries. Filter bits are kept; NessieHY's gets use them as Nessie's do.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/status.h"
#include "core/index/nessie/node.h"
#include "core/transport/env.h"

namespace locus::nessie {

struct StoreStats {
  uint64_t gets = 0;
  uint64_t puts = 0;
  uint64_t deletes = 0;
  uint64_t migrations = 0;  // keys moved to another candidate to free one
  uint64_t full = 0;        // puts refused: no candidate could be freed
  uint64_t dte_waits = 0;   // puts refused: no data entry free or expired
  uint64_t reused = 0;      // replaced or deleted DTEs reused after their expiry
};

class NodeStore {
 public:
  // Entries from geometry.slice_first(0) on (after the loaded records')
  // are the store's to use; loaded ones are reused once replaced.
  NodeStore(NessieNode& node, uint32_t max_migrate_depth);

  // The value, copied into *value under the store's lock (once the lock
  // is released, another server thread may replace the key and, after the
  // expiry period, reuse its data entry), or NOT_FOUND.
  Status get(std::string_view key, std::string* value);
  // ABORTED when no DTE is free (replaced ones wait out the expiry
  // period: retry later), RESOURCE_EXHAUSTED when no candidate can be
  // freed; the key is unchanged then.
  Status put(std::string_view key, std::string_view value, Nanos now_ns);
  Status remove(std::string_view key, Nanos now_ns);

  // Read once the server threads have stopped.
  const StoreStats& stats() const { return stats_; }

 private:
  // The work of get, put and remove, under mu_.
  Status get_locked(std::string_view key, std::string* value);
  Status put_locked(std::string_view key, std::string_view value, Nanos now_ns);
  Status remove_locked(std::string_view key, Nanos now_ns);
  // The way whose ITE names a DTE of `key`, or -1.
  int find(std::string_view key, const KeyHash& kh);
  std::string_view key_of(uint64_t ite);
  uint64_t load_ite(uint64_t index);
  void store_ite(uint64_t index, uint64_t value);
  // Frees a candidate of kh by moving keys along a path of up to depth
  // displacements to an empty ITE; the way freed, or -1.
  int make_room(const KeyHash& kh);
  bool find_path(uint64_t index, uint32_t depth, std::vector<uint64_t>* path);
  StatusOr<uint64_t> allocate(Nanos now_ns);
  void retire(uint64_t ite, Nanos now_ns);

  NessieNode& node_;
  Geometry g_;
  uint32_t max_depth_;
  uint64_t next_fresh_;  // the next never-used entry
  struct Retired {
    uint64_t entry;
    Nanos free_at_ns;
  };
  // Retired entries in expiry order (retired at ever later times), a
  // circular queue sized once: the data path does not allocate.
  std::vector<Retired> retired_;
  size_t retired_head_ = 0;
  size_t retired_count_ = 0;
  std::vector<uint64_t> path_;  // reserved for max_depth + 1 entries
  ShortMutex mu_;
  StoreStats stats_;
};

}  // namespace locus::nessie
