// History: what concurrent clients did, as the linearizability checker
// (linearizability.h) reads it. One Operation per client call: what was
// asked (kind, key or query, argument), what came back, and when it was
// invoked and answered, in ns of the run's clock. A call that failed or
// timed out with unknown effect keeps response_ns = kNeverNs and outcome
// kUnknown: like Porcupine and Knossos, the checker may then linearize it
// anywhere after its invocation or not at all (at the end, where nothing
// can observe it), and accepts any result.
//
// The recorder is cheap on the data path: each client appends to its own
// ClientHistory with no lock (a client is one actor or thread); only
// handing out a client's buffer takes a ShortMutex, and merge() runs once
// the clients are done. The caller supplies times, so any Clock (real or
// SimGrid's) serves.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/time.h"

namespace locus::check {

// The response time of an operation that never returned.
constexpr Nanos kNeverNs = std::numeric_limits<Nanos>::max();

enum class OpKind : uint8_t {
  kGet,     // map: key -> value or not found; multimap: see kLookup
  kPut,     // map: key := value (insert or replace); always kOk
  kDelete,  // map: remove key; multimap: remove one (key, value); rects: remove id = value
  kScan,    // sorted map: keys >= key (and < end_key if bounded), at most limit of them
  kInsert,  // multimap: add (key, value); rects: add id = value with rect
  kSearch,  // rects: ids of the rectangles intersecting rect
  kLookup,  // multimap: every value under key
};

enum class Outcome : uint8_t {
  kOk,        // done / found
  kNotFound,  // get or lookup found nothing; delete found nothing to delete
  kUnknown,   // no answer: any result is acceptable
};

// A closed axis-aligned rectangle; touching rectangles intersect (as Catfish's).
struct Rect {
  double x_min = 0, y_min = 0, x_max = 0, y_max = 0;
  bool intersects(const Rect& o) const {
    return x_min <= o.x_max && o.x_min <= x_max && y_min <= o.y_max && o.y_min <= y_max;
  }
  bool operator==(const Rect&) const = default;
};

struct Operation {
  uint32_t client = 0;
  OpKind kind = OpKind::kGet;
  std::string key;      // the key; a scan's first key; a multimap's key
  std::string end_key;  // a bounded scan's end (exclusive)
  bool bounded = false;  // whether end_key applies
  uint32_t limit = 0;    // a scan returns at most this many keys (0: no limit)
  uint64_t value = 0;    // put: the value (or a digest of it); payload; rectangle id
  Rect rect;             // a rectangle to insert, or a search's query
  Outcome outcome = Outcome::kUnknown;
  uint64_t result_value = 0;             // a get's value
  std::vector<std::string> result_keys;  // a scan's keys, ascending
  std::vector<uint64_t> result_ids;      // a search's ids or a lookup's values (any order)
  Nanos invoke_ns = 0;
  Nanos response_ns = kNeverNs;

  bool pending() const { return response_ns == kNeverNs; }
};

using History = std::vector<Operation>;

// The 64-bit digest a recorded value is kept as (CRC-64 of its bytes):
// histories of large records stay small, and two different values that a
// get could confuse collide with probability 2^-64.
uint64_t value_digest(std::string_view bytes);

// Gives the first n operations of `history`, a load done before the run's
// clock started, one after another in their order, ending at -1: loaded
// records that all overlapped could be linearized in any order, and a
// check that fails in a partition holding k of them would try every
// subset of the k (the search ran out of memory on a Catfish history of
// 500 loaded rectangles; 2026-11-29).
void sequence_load(History& history, size_t n);

// "c3 put(k7, 42) -> ok  [100, 250]", for reports.
std::string describe(const Operation& op);

// One client's operations, appended by that client only (no lock).
class ClientHistory {
 public:
  explicit ClientHistory(uint32_t client) : client_(client) { ops_.reserve(1024); }

  // Records a call started at now_ns; fill in the result through op(ticket)
  // and then respond(), or leave it pending if the effect is unknown.
  size_t invoke(Operation op, Nanos now_ns);
  Operation& op(size_t ticket) { return ops_[ticket]; }
  void respond(size_t ticket, Outcome outcome, Nanos now_ns);
  // A call that failed with certainly no effect (refused before it was
  // sent): dropped from the history.
  void discard(size_t ticket) { discarded_.push_back(ticket); }

  uint32_t client() const { return client_; }
  const std::vector<Operation>& ops() const { return ops_; }
  const std::vector<size_t>& discarded() const { return discarded_; }

 private:
  uint32_t client_;
  std::vector<Operation> ops_;
  std::vector<size_t> discarded_;
};

// Every client's history, merged after the run.
class HistoryRecorder {
 public:
  // The buffer of client `client`, made on first use; its address is stable.
  ClientHistory& client(uint32_t client);
  // Every recorded operation, ordered by invocation; calls still without an
  // answer stay pending. Call after the clients stop.
  History merge() const;

 private:
  mutable ShortMutex mu_;
  std::vector<std::unique_ptr<ClientHistory>> clients_;
};

}  // namespace locus::check
