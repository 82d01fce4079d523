// Linearizability checking: does a concurrent History have a sequential
// order, consistent with real time (an operation that returned before
// another was invoked comes first), in which a sequential Model gives every
// operation the result it returned?
//
// The search is Wing and Gong's as Lowe improved it and Porcupine uses it:
// the call and return entries in time order form a doubly linked list; the
// depth-first search tries the calls before the first return one by one,
// "lifts" a call (and its return) out of the list when the model accepts
// it and backtracks ("unlifts") when it reaches a return it cannot pass.
// A cache of (set of linearized operations, model state) prunes states
// already explored: two paths that linearized the same operations into the
// same state have the same future. A model that can split a history into
// independent sub-histories (P-compositionality: a map's keys do not
// interact) has each checked on its own, smallest first, so the failure
// reported is the smallest failing partition. A step and time budget turn
// a search that would run too long into kUnknown.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/check/history.h"
#include "core/common/time.h"

namespace locus::check {

enum class Verdict : uint8_t { kLinearizable, kNotLinearizable, kUnknown };
std::string_view to_string(Verdict v);

struct CheckOptions {
  // A verdict that must not depend on the machine's speed (a test) sets
  // the time budget to 0 and bounds the search by steps alone.
  Nanos time_budget_ns = 60 * kSecond;  // wall clock, whole check (0: no limit)
  uint64_t step_budget = 0;             // model steps, whole check (0: no limit)
};

struct CheckResult {
  Verdict verdict = Verdict::kLinearizable;
  size_t partitions = 0;  // independent sub-histories the model split the history into
  uint64_t steps = 0;     // model steps taken
  // When not linearizable: the smallest failing partition (indices into the
  // history, ordered by invocation) and the longest linearization of a part of it
  // the search found, in linearization order.
  std::vector<size_t> failing_ops;
  std::vector<size_t> longest_linearized;

  bool linearizable() const { return verdict == Verdict::kLinearizable; }
  // The verdict, and for a failure the operations involved, readably.
  std::string report(const History& history) const;
};

// What a model's step decided: whether the operation's recorded result is
// legal in the state, and the state after it (absent: unchanged, as after
// any read, which spares a copy).
template <class State>
struct Step {
  bool legal = false;
  std::optional<State> next;

  static Step illegal() { return {}; }
  static Step unchanged() { return {true, std::nullopt}; }
  static Step to(State s) { return {true, std::move(s)}; }
};

// A sequential specification. `State` is a value; step() judges one
// operation in a state (any result is legal for an Outcome::kUnknown
// operation). partition() returns groups of history indices that can be
// checked independently (one group of every index when nothing can be
// split). A model may also have prune(history, partition), which removes
// operations that cannot change the verdict (a write that timed out and
// that nothing observed): each such write doubles the states the search
// may have to visit.
template <class M>
concept Model = requires(const M& m, const typename M::State& s, const Operation& op, const History& h) {
  { m.init() } -> std::convertible_to<typename M::State>;
  { m.step(s, op) } -> std::same_as<Step<typename M::State>>;
  { m.hash(s) } -> std::convertible_to<uint64_t>;
  { s == s } -> std::convertible_to<bool>;
  { m.partition(h) } -> std::same_as<std::vector<std::vector<size_t>>>;
};

namespace detail {

// One partition's call and return entries, sorted by time (a call before a
// return at equal times: such operations overlap), as a linked list over
// indices. Node 2n is the head sentinel; -1 ends the list.
struct EntryList {
  std::vector<int32_t> next, prev;
  std::vector<int32_t> match;  // a call's return node; -1 for a return
  std::vector<int32_t> local;  // the operation's index within the partition
  int32_t head = 0;

  static EntryList build(const History& history, const std::vector<size_t>& ops);
  bool is_call(int32_t node) const { return match[node] >= 0; }
  void lift(int32_t call);
  void unlift(int32_t call);
};

// The set of linearized operations with an incrementally kept hash.
class Linearized {
 public:
  explicit Linearized(size_t n) : words_((n + 63) / 64, 0) {}
  void flip(int32_t i);
  uint64_t hash() const { return hash_; }
  // The set as the cache keeps it: how many operations from the first are
  // all in, then the members past those. Operations are numbered by
  // invocation and those that returned long ago are all in, so this is
  // short where a copy of the bits would grow with the partition.
  std::vector<uint32_t> compact() const;

 private:
  std::vector<uint64_t> words_;
  uint64_t hash_ = 0;
};

// Steps taken and the deadline, over a whole check.
class Budget {
 public:
  explicit Budget(const CheckOptions& options);
  bool take_step();  // false once the budget is spent
  uint64_t steps() const { return steps_; }

 private:
  uint64_t steps_ = 0;
  uint64_t step_limit_;
  int64_t deadline_ns_;
};

// Drops reads with no answer (they constrain nothing and, being free to go
// anywhere, would only multiply the search), sorts each partition by
// invocation and the partitions smallest first, and drops empty ones.
void order_partitions(std::vector<std::vector<size_t>>& partitions, const History& history);

}  // namespace detail

// Checks one partition (`ops`: history indices). On kNotLinearizable,
// `longest` gets the longest linearization found, as history indices.
template <Model M>
Verdict check_partition(const M& model, const History& history, const std::vector<size_t>& ops,
                        detail::Budget& budget, std::vector<size_t>& longest) {
  using State = typename M::State;
  // States are shared: a read leaves the state as it was, and the stack and
  // the cache then hold the one copy.
  struct Shared {
    std::shared_ptr<const State> state;
    uint64_t hash;
  };
  struct Cached {
    std::vector<uint32_t> linearized;
    std::shared_ptr<const State> state;
  };
  struct Call {
    int32_t node;
    Shared before;
  };
  detail::EntryList list = detail::EntryList::build(history, ops);
  detail::Linearized linearized(ops.size());
  std::unordered_map<uint64_t, std::vector<Cached>> cache;
  std::vector<Call> calls;
  Shared state{std::make_shared<const State>(model.init()), 0};
  state.hash = model.hash(*state.state);
  auto note_longest = [&] {
    if (calls.size() <= longest.size()) return;
    longest.clear();
    for (const Call& c : calls) longest.push_back(ops[list.local[c.node]]);
  };
  int32_t entry = list.next[list.head];
  while (list.next[list.head] != -1) {
    if (list.is_call(entry)) {
      if (!budget.take_step()) return Verdict::kUnknown;
      Step<State> step = model.step(*state.state, history[ops[list.local[entry]]]);
      bool advanced = false;
      if (step.legal) {
        Shared after = state;
        if (step.next) {
          after.state = std::make_shared<const State>(std::move(*step.next));
          after.hash = model.hash(*after.state);
        }
        linearized.flip(list.local[entry]);
        auto& bucket = cache[linearized.hash() ^ after.hash];
        std::vector<uint32_t> members = linearized.compact();
        bool seen = false;
        for (const Cached& c : bucket)
          seen = seen || (c.linearized == members && (c.state == after.state || *c.state == *after.state));
        if (!seen) {
          bucket.push_back({std::move(members), after.state});
          calls.push_back({entry, std::move(state)});
          state = std::move(after);
          list.lift(entry);
          entry = list.next[list.head];
          advanced = true;
        } else {
          linearized.flip(list.local[entry]);
        }
      }
      if (!advanced) entry = list.next[entry];
    } else {
      // A return whose call is not linearized: undo the last choice.
      if (calls.empty()) return Verdict::kNotLinearizable;
      note_longest();
      Call top = std::move(calls.back());
      calls.pop_back();
      state = std::move(top.before);
      linearized.flip(list.local[top.node]);
      list.unlift(top.node);
      entry = list.next[top.node];
    }
  }
  return Verdict::kLinearizable;
}

// Checks the whole history, partition by partition, smallest first; stops
// at the first failing partition.
template <Model M>
CheckResult check_history(const M& model, const History& history, const CheckOptions& options = {}) {
  CheckResult result;
  std::vector<std::vector<size_t>> partitions = model.partition(history);
  if constexpr (requires(std::vector<size_t>& p) { model.prune(history, p); })
    for (auto& p : partitions) model.prune(history, p);
  detail::order_partitions(partitions, history);
  result.partitions = partitions.size();
  detail::Budget budget(options);
  for (const auto& part : partitions) {
    std::vector<size_t> longest;
    const Verdict v = check_partition(model, history, part, budget, longest);
    if (v == Verdict::kNotLinearizable) {
      result.verdict = v;
      result.failing_ops = part;
      result.longest_linearized = std::move(longest);
      break;
    }
    if (v == Verdict::kUnknown) {
      result.verdict = v;
      break;
    }
  }
  result.steps = budget.steps();
  return result;
}

}  // namespace locus::check
