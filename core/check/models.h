// Sequential models of locus's indexes for the linearizability checker
// (linearizability.h), one per kind of design:
//   KvModel         a map (Pilaf, Cell, Nessie): get, put, delete
//   SortedMapModel  the same with range scans (Cell)
//   RectSetModel    a set of rectangles by id (Catfish): insert, delete, search
//   MultimapModel   key -> many payloads (the NAM index): insert, delete, lookup
// States are small sorted vectors: the checker copies a state at every step
// and a per-key partition holds one key. An operation a model does not know
// is illegal in it, so a test that records the wrong kind fails loudly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/check/history.h"
#include "core/check/linearizability.h"
#include "core/check/persistent_map.h"

namespace locus::check {

// Groups of history indices by key: the operations on different keys of a
// map or multimap never interact.
std::vector<std::vector<size_t>> partition_by_key(const History& history);
// Removes the timed-out writes (`write`, with no answer) that nothing
// observed: no answered get or lookup of their key returned their value, no
// scan returned their key, and no delete of their key may have found
// something. Such a write can be linearized last, where nothing sees it,
// so with or without it the verdict is the same; and each one left in
// doubles the states the search may visit.
void drop_unobserved_writes(const History& history, std::vector<size_t>& ops, OpKind write);
// One group of every index: for models whose operations span keys.
std::vector<std::vector<size_t>> no_partition(const History& history);

class KvModel {
 public:
  using State = std::vector<std::pair<std::string, uint64_t>>;  // by key
  State init() const { return {}; }
  using Result = Step<State>;
  Result step(const State& s, const Operation& op) const;
  uint64_t hash(const State& s) const;
  std::vector<std::vector<size_t>> partition(const History& h) const { return partition_by_key(h); }
  void prune(const History& h, std::vector<size_t>& ops) const { drop_unobserved_writes(h, ops, OpKind::kPut); }
};

// A scan's result must be the keys the map holds in its range, ascending.
// Partitions are the connected groups of key ranges: a scan's range runs
// from its first key to its last returned key when it returned `limit` of
// them (nothing past it could have mattered), else to its end key or to
// the end of the key space.
class SortedMapModel {
 public:
  using State = KvModel::State;
  State init() const { return {}; }
  using Result = Step<State>;
  Result step(const State& s, const Operation& op) const;
  uint64_t hash(const State& s) const { return KvModel().hash(s); }
  std::vector<std::vector<size_t>> partition(const History& h) const;
  void prune(const History& h, std::vector<size_t>& ops) const { drop_unobserved_writes(h, ops, OpKind::kPut); }
};

// Rectangles by id (Operation::value); search returns the ids of those
// intersecting the query. Not partitioned: one search spans every id, so
// the one partition's states hold every rectangle: they share structure
// (PersistentMap) and carry their hash, so a step costs O(log n) memory
// rather than a copy of the set.
class RectSetModel {
 public:
  struct State {
    PersistentMap<uint64_t, Rect> rects;
    uint64_t hash = 0;  // the sum of every entry's hash
    bool operator==(const State& o) const { return hash == o.hash && rects == o.rects; }
  };
  State init() const { return {}; }
  using Result = Step<State>;
  Result step(const State& s, const Operation& op) const;
  uint64_t hash(const State& s) const { return s.hash; }
  std::vector<std::vector<size_t>> partition(const History& h) const { return no_partition(h); }
  // An insert that timed out and whose id no search returned is left out
  // (every such insert left in doubles the states the one partition has).
  void prune(const History& h, std::vector<size_t>& ops) const { drop_unobserved_writes(h, ops, OpKind::kInsert); }
};

// (key, payload) pairs, duplicates allowed; delete removes one pair and
// lookup (or get) returns every payload under the key. A scan returns the
// pairs (result_keys[i], result_ids[i]) whose key is >= its key (and <
// end_key when bounded), in (key, payload) order, at most `limit` of them:
// exactly the model's pairs in that range at its linearization point, so a
// scan that misses an acknowledged pair or returns a deleted one fails.
// Keys compare as strings: a history whose scans span keys writes them so
// that string order is the index's order (fixed-width digits). Histories
// with scans are partitioned by connected key ranges (SortedMapModel's).
class MultimapModel {
 public:
  using State = std::vector<std::pair<std::string, uint64_t>>;  // sorted pairs
  State init() const { return {}; }
  using Result = Step<State>;
  Result step(const State& s, const Operation& op) const;
  uint64_t hash(const State& s) const { return KvModel().hash(s); }
  std::vector<std::vector<size_t>> partition(const History& h) const;
  void prune(const History& h, std::vector<size_t>& ops) const { drop_unobserved_writes(h, ops, OpKind::kInsert); }
};

}  // namespace locus::check
