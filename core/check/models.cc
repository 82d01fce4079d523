// The sequential models' steps and partitions. Each step checks a recorded
// result against the state and returns the next state; an Outcome::kUnknown
// operation is legal whatever it returned and still takes effect.
#include "core/check/models.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace locus::check {
namespace {

uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ULL;
}

bool known(const Operation& op) { return op.outcome != Outcome::kUnknown; }

// The first position in a vector sorted by .first not below `key`.
template <class V, class K>
auto lower(V& v, const K& key) {
  return std::lower_bound(v.begin(), v.end(), key, [](const auto& e, const K& k) { return e.first < k; });
}

// The state with `key` set to `value`, in a vector sorted by key.
template <class State, class K, class V>
Step<State> assigned(const State& s, const K& key, const V& value) {
  State next = s;
  auto at = lower(next, key);
  if (at != next.end() && at->first == key)
    at->second = value;
  else
    next.insert(at, {key, value});
  return Step<State>::to(std::move(next));
}

// A delete of `key`: legal when its outcome says rightly whether it was there.
template <class State, class K>
Step<State> deleted(const State& s, const K& key, const Operation& op) {
  auto it = lower(s, key);
  const bool found = it != s.end() && it->first == key;
  if (known(op) && found != (op.outcome == Outcome::kOk)) return Step<State>::illegal();
  if (!found) return Step<State>::unchanged();
  State next = s;
  next.erase(next.begin() + (it - s.begin()));
  return Step<State>::to(std::move(next));
}

// The sorted result a search or lookup returned.
std::vector<uint64_t> sorted_ids(const Operation& op) {
  std::vector<uint64_t> ids = op.result_ids;
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

std::vector<std::vector<size_t>> partition_by_key(const History& history) {
  std::unordered_map<std::string, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < history.size(); ++i) {
    auto [it, fresh] = group_of.try_emplace(history[i].key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

void drop_unobserved_writes(const History& history, std::vector<size_t>& ops, OpKind write) {
  std::set<std::pair<std::string_view, uint64_t>> values_read;
  std::set<std::string_view> keys_seen;  // scanned, or a delete may have found them
  for (size_t i : ops) {
    const Operation& op = history[i];
    if (op.kind == OpKind::kDelete && op.outcome != Outcome::kNotFound) keys_seen.insert(op.key);
    if (op.kind == OpKind::kGet && op.outcome == Outcome::kOk) values_read.emplace(op.key, op.result_value);
    for (uint64_t id : op.result_ids) values_read.emplace(op.key, id);
    for (const std::string& key : op.result_keys) keys_seen.insert(key);
  }
  std::erase_if(ops, [&](size_t i) {
    const Operation& op = history[i];
    return op.kind == write && op.outcome == Outcome::kUnknown && op.pending() && !keys_seen.contains(op.key) &&
           !values_read.contains({op.key, op.value});
  });
}

std::vector<std::vector<size_t>> no_partition(const History& history) {
  std::vector<size_t> all(history.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return {std::move(all)};
}

KvModel::Result KvModel::step(const State& s, const Operation& op) const {
  auto it = lower(s, op.key);
  const bool found = it != s.end() && it->first == op.key;
  switch (op.kind) {
    case OpKind::kGet:
      if (op.outcome == Outcome::kOk && !(found && it->second == op.result_value)) return Result::illegal();
      if (op.outcome == Outcome::kNotFound && found) return Result::illegal();
      return Result::unchanged();
    case OpKind::kPut:
      return assigned(s, op.key, op.value);
    case OpKind::kDelete:
      return deleted(s, op.key, op);
    default:
      return Result::illegal();
  }
}

uint64_t KvModel::hash(const State& s) const {
  uint64_t h = s.size();
  for (const auto& [key, value] : s) h = mix(mix(h, std::hash<std::string>()(key)), value);
  return h;
}

SortedMapModel::Result SortedMapModel::step(const State& s, const Operation& op) const {
  if (op.kind != OpKind::kScan) return KvModel().step(s, op);
  if (!known(op)) return Result::unchanged();
  std::vector<std::string> expected;
  for (auto it = lower(s, op.key); it != s.end(); ++it) {
    if (op.bounded && it->first >= op.end_key) break;
    if (op.limit != 0 && expected.size() == op.limit) break;
    expected.push_back(it->first);
  }
  if (expected != op.result_keys) return Result::illegal();
  return Result::unchanged();
}

std::vector<std::vector<size_t>> SortedMapModel::partition(const History& history) const {
  // Each operation's key range [lo, hi] (hi absent: unbounded); a scan with
  // no answer reads nothing and stands alone.
  struct Range {
    std::string lo;
    std::optional<std::string> hi;
    size_t index;
  };
  std::vector<Range> ranges;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (op.kind != OpKind::kScan) {
      ranges.push_back({op.key, op.key, i});
    } else if (!known(op)) {
      groups.push_back({i});
    } else if (op.limit != 0 && op.result_keys.size() == op.limit) {
      ranges.push_back({op.key, op.result_keys.back(), i});
    } else {
      ranges.push_back({op.key, op.bounded ? std::optional(op.end_key) : std::nullopt, i});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  std::optional<std::string> reach;  // the furthest hi of the current group
  bool unbounded = false;
  for (size_t r = 0; r < ranges.size(); ++r) {
    const Range& range = ranges[r];
    const bool joins = r > 0 && (unbounded || range.lo <= *reach);
    if (!joins) {
      groups.emplace_back();
      unbounded = false;
      reach.reset();
    }
    groups.back().push_back(range.index);
    if (!range.hi)
      unbounded = true;
    else if (!reach || *reach < *range.hi)
      reach = range.hi;
  }
  return groups;
}

namespace {
uint64_t entry_hash(uint64_t id, const Rect& r) {
  uint64_t h = mix(0, id);
  for (double d : {r.x_min, r.y_min, r.x_max, r.y_max}) h = mix(h, std::bit_cast<uint64_t>(d));
  return h;
}
}  // namespace

RectSetModel::Result RectSetModel::step(const State& s, const Operation& op) const {
  switch (op.kind) {
    case OpKind::kInsert: {
      State next{s.rects.set(op.value, op.rect), s.hash + entry_hash(op.value, op.rect)};
      if (const Rect* old = s.rects.find(op.value)) next.hash -= entry_hash(op.value, *old);
      return Result::to(std::move(next));
    }
    case OpKind::kDelete: {
      const Rect* old = s.rects.find(op.value);
      if (known(op) && (old != nullptr) != (op.outcome == Outcome::kOk)) return Result::illegal();
      if (old == nullptr) return Result::unchanged();
      return Result::to(State{s.rects.erase(op.value), s.hash - entry_hash(op.value, *old)});
    }
    case OpKind::kSearch: {
      if (!known(op)) return Result::unchanged();
      std::vector<uint64_t> expected;
      s.rects.for_each([&](uint64_t id, const Rect& rect) {
        if (rect.intersects(op.rect)) expected.push_back(id);
      });
      if (expected != sorted_ids(op)) return Result::illegal();
      return Result::unchanged();
    }
    default:
      return Result::illegal();
  }
}

MultimapModel::Result MultimapModel::step(const State& s, const Operation& op) const {
  const std::pair<std::string, uint64_t> pair{op.key, op.value};
  switch (op.kind) {
    case OpKind::kInsert: {
      State next = s;
      next.insert(std::upper_bound(next.begin(), next.end(), pair), pair);
      return Result::to(std::move(next));
    }
    case OpKind::kDelete: {
      auto it = std::lower_bound(s.begin(), s.end(), pair);
      const bool found = it != s.end() && *it == pair;
      if (known(op) && found != (op.outcome == Outcome::kOk)) return Result::illegal();
      State next = s;
      if (found) next.erase(next.begin() + (it - s.begin()));
      return Result::to(std::move(next));
    }
    case OpKind::kGet:
    case OpKind::kLookup: {
      if (!known(op)) return Result::unchanged();
      std::vector<uint64_t> expected;
      for (auto it = lower(s, op.key); it != s.end() && it->first == op.key; ++it) expected.push_back(it->second);
      // Not found and an empty result say the same.
      if (expected != (op.outcome == Outcome::kNotFound ? std::vector<uint64_t>{} : sorted_ids(op)))
        return Result::illegal();
      return Result::unchanged();
    }
    case OpKind::kScan: {
      if (!known(op)) return Result::unchanged();
      if (op.result_ids.size() != op.result_keys.size()) return Result::illegal();
      size_t n = 0;
      for (auto it = lower(s, op.key); it != s.end(); ++it, ++n) {
        if (op.bounded && it->first >= op.end_key) break;
        if (op.limit != 0 && n == op.limit) break;
        if (n == op.result_keys.size() || it->first != op.result_keys[n] || it->second != op.result_ids[n])
          return Result::illegal();
      }
      if (n != op.result_keys.size()) return Result::illegal();
      return Result::unchanged();
    }
    default:
      return Result::illegal();
  }
}

std::vector<std::vector<size_t>> MultimapModel::partition(const History& h) const {
  const bool scans = std::any_of(h.begin(), h.end(), [](const Operation& op) { return op.kind == OpKind::kScan; });
  // A point operation is the range [key, key]: the sorted map's grouping
  // of connected ranges is the right one for scans over pairs too.
  return scans ? SortedMapModel().partition(h) : partition_by_key(h);
}

}  // namespace locus::check
