// OpStats: name registration and merging (both off the hot path).
#include "core/metrics/op_stats.h"

namespace locus::metrics {

namespace {

// Linear search: a run has a handful of operation names and counters, and
// these lookups happen at setup and merge time only.
template <typename T>
size_t index_of(const std::vector<T>& items, std::string_view name) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return i;
  }
  return items.size();
}

}  // namespace

OpStats::OpId OpStats::op(std::string_view name) {
  const size_t i = index_of(ops_, name);
  if (i == ops_.size()) {
    ops_.emplace_back();
    ops_.back().name = std::string(name);
  }
  return static_cast<OpId>(i);
}

OpStats::CounterId OpStats::counter(std::string_view name) {
  const size_t i = index_of(counters_, name);
  if (i == counters_.size()) counters_.push_back(NamedCounter{std::string(name), 0});
  return static_cast<CounterId>(i);
}

void OpStats::merge(const OpStats& other) {
  for (const OpSummary& theirs : other.ops_) {
    OpSummary& mine = ops_[op(theirs.name)];
    mine.latency.merge(theirs.latency);
    mine.ok += theirs.ok;
    mine.failed += theirs.failed;
    mine.retries += theirs.retries;
  }
  for (const NamedCounter& theirs : other.counters_) counters_[counter(theirs.name)].value += theirs.value;
}

void OpStats::reset() {
  for (OpSummary& s : ops_) {
    s.latency.reset();
    s.ok = s.failed = s.retries = 0;
  }
  for (NamedCounter& c : counters_) c.value = 0;
}

const OpSummary* OpStats::find_op(std::string_view name) const {
  const size_t i = index_of(ops_, name);
  return i == ops_.size() ? nullptr : &ops_[i];
}

int64_t OpStats::counter_value(std::string_view name) const {
  const size_t i = index_of(counters_, name);
  return i == counters_.size() ? 0 : counters_[i].value;
}

uint64_t OpStats::total_ops() const {
  uint64_t n = 0;
  for (const OpSummary& s : ops_) n += s.count();
  return n;
}

uint64_t OpStats::total_failed() const {
  uint64_t n = 0;
  for (const OpSummary& s : ops_) n += s.failed;
  return n;
}

uint64_t OpStats::total_retries() const {
  uint64_t n = 0;
  for (const OpSummary& s : ops_) n += s.retries;
  return n;
}

}  // namespace locus::metrics
