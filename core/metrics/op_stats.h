// OpStats: what one client saw during a run, per operation kind.
//
// For every operation name ("READ", "INSERT", "get", ...) a latency
// histogram of all attempts that finished (ok or failed, as YCSB measures
// them) and counts of successes, failures and retries; plus free-form
// named counters ("cas_conflicts", "server_side_choices", ...).
//
// Names are resolved once, at setup, into small integer ids; the hot path
// (record, add) indexes a vector and never allocates or locks. Each client
// thread owns an OpStats and the run merges them, by name, at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/time.h"
#include "core/metrics/latency_histogram.h"

namespace locus::metrics {

struct OpSummary {
  std::string name;
  LatencyHistogram latency;
  uint64_t ok = 0;
  uint64_t failed = 0;
  uint64_t retries = 0;

  uint64_t count() const { return ok + failed; }
};

struct NamedCounter {
  std::string name;
  int64_t value = 0;
};

class OpStats {
 public:
  using OpId = uint32_t;
  using CounterId = uint32_t;

  // Setup: the id for `name`, adding it (in first-use order) if new.
  OpId op(std::string_view name);
  CounterId counter(std::string_view name);

  // Hot path.
  void record(OpId id, Nanos latency_ns, bool ok = true) {
    OpSummary& s = ops_[id];
    s.latency.record(latency_ns);
    if (ok) ++s.ok;
    else ++s.failed;
  }
  void add_retries(OpId id, uint64_t retries = 1) { ops_[id].retries += retries; }
  void add(CounterId id, int64_t delta = 1) { counters_[id].value += delta; }

  // Adds everything `other` recorded; operations and counters are matched
  // by name and new names appended.
  void merge(const OpStats& other);
  // Clears the numbers, keeping names (and so ids) valid.
  void reset();

  const std::vector<OpSummary>& ops() const { return ops_; }
  const std::vector<NamedCounter>& counters() const { return counters_; }
  // nullptr / 0 when the name was never registered.
  const OpSummary* find_op(std::string_view name) const;
  int64_t counter_value(std::string_view name) const;

  // Sums over all operations.
  uint64_t total_ops() const;
  uint64_t total_failed() const;
  uint64_t total_retries() const;

 private:
  std::vector<OpSummary> ops_;
  std::vector<NamedCounter> counters_;
};

}  // namespace locus::metrics
