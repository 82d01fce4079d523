// The non-template parts of the checker: building a partition's entry list,
// lifting entries out of it and back, the hashed set of linearized
// operations, the budget, and the report.
#include "core/check/linearizability.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>

#include <fmt/format.h>

namespace locus::check {
namespace {

// splitmix64's finalizer: one well-spread 64-bit value per operation, so the
// hash of a set is the XOR of its members' values (Zobrist hashing) and a
// flip updates it in O(1).
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kLinearizable: return "linearizable";
    case Verdict::kNotLinearizable: return "not linearizable";
    case Verdict::kUnknown: return "unknown (budget spent)";
  }
  return "?";
}

namespace detail {

EntryList EntryList::build(const History& history, const std::vector<size_t>& ops) {
  struct Event {
    Nanos time_ns;
    bool is_return;
    int32_t local;
  };
  std::vector<Event> events;
  events.reserve(2 * ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = history[ops[i]];
    events.push_back({op.invoke_ns, false, static_cast<int32_t>(i)});
    events.push_back({op.response_ns, true, static_cast<int32_t>(i)});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
    return !a.is_return && b.is_return;
  });
  EntryList list;
  const auto n = static_cast<int32_t>(events.size());
  list.head = n;
  list.next.resize(n + 1);
  list.prev.resize(n + 1);
  list.match.assign(n + 1, -1);
  list.local.assign(n + 1, -1);
  std::vector<int32_t> return_node(ops.size());
  for (int32_t i = 0; i < n; ++i) {
    list.local[i] = events[i].local;
    if (events[i].is_return) return_node[events[i].local] = i;
  }
  for (int32_t i = 0; i < n; ++i)
    if (!events[i].is_return) list.match[i] = return_node[events[i].local];
  // Sentinel, then the entries in order.
  list.prev[n] = -1;
  list.next[n] = n > 0 ? 0 : -1;
  for (int32_t i = 0; i < n; ++i) {
    list.prev[i] = i == 0 ? n : i - 1;
    list.next[i] = i + 1 < n ? i + 1 : -1;
  }
  return list;
}

// A call is never last (its return follows it), so only the return's
// successor can be the end of the list.
void EntryList::lift(int32_t call) {
  next[prev[call]] = next[call];
  prev[next[call]] = prev[call];
  const int32_t ret = match[call];
  next[prev[ret]] = next[ret];
  if (next[ret] != -1) prev[next[ret]] = prev[ret];
}

void EntryList::unlift(int32_t call) {
  const int32_t ret = match[call];
  next[prev[ret]] = ret;
  if (next[ret] != -1) prev[next[ret]] = ret;
  next[prev[call]] = call;
  prev[next[call]] = call;
}

void Linearized::flip(int32_t i) {
  words_[i / 64] ^= uint64_t{1} << (i % 64);
  hash_ ^= mix(static_cast<uint64_t>(i));
}

std::vector<uint32_t> Linearized::compact() const {
  size_t w = 0;
  while (w < words_.size() && words_[w] == ~uint64_t{0}) ++w;
  std::vector<uint32_t> out{static_cast<uint32_t>(64 * w)};
  for (; w < words_.size(); ++w)
    for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1)
      out.push_back(static_cast<uint32_t>(64 * w + static_cast<size_t>(std::countr_zero(bits))));
  return out;
}

Budget::Budget(const CheckOptions& options)
    : step_limit_(options.step_budget == 0 ? std::numeric_limits<uint64_t>::max() : options.step_budget),
      deadline_ns_(options.time_budget_ns == 0 ? std::numeric_limits<int64_t>::max()
                                               : steady_now_ns() + options.time_budget_ns) {}

bool Budget::take_step() {
  if (steps_ >= step_limit_) return false;
  ++steps_;
  // Reading the clock costs about as much as a step: look every 1024.
  return (steps_ & 1023) != 0 || steady_now_ns() < deadline_ns_;
}

void order_partitions(std::vector<std::vector<size_t>>& partitions, const History& history) {
  for (auto& p : partitions)
    std::erase_if(p, [&](size_t i) {
      const Operation& op = history[i];
      const bool reads = op.kind == OpKind::kGet || op.kind == OpKind::kScan || op.kind == OpKind::kSearch ||
                         op.kind == OpKind::kLookup;
      return reads && op.outcome == Outcome::kUnknown;
    });
  std::erase_if(partitions, [](const std::vector<size_t>& p) { return p.empty(); });
  for (auto& p : partitions)
    std::sort(p.begin(), p.end(), [&](size_t a, size_t b) {
      return std::pair(history[a].invoke_ns, a) < std::pair(history[b].invoke_ns, b);
    });
  std::stable_sort(partitions.begin(), partitions.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
}

}  // namespace detail

std::string CheckResult::report(const History& history) const {
  std::string out = fmt::format("{} ({} partitions, {} steps)", to_string(verdict), partitions, steps);
  if (verdict != Verdict::kNotLinearizable) return out;
  out += fmt::format("\nsmallest failing partition, {} operations", failing_ops.size());
  // Where the longest linearization stopped, first: a long partition's
  // listing is cut in a CI log, and these few lines hold the violation.
  // The candidates are the operations it left out that could have come
  // next: invoked before the first of their responses.
  std::vector<bool> placed(history.size(), false);
  for (size_t i : longest_linearized) placed[i] = true;
  Nanos first_response = std::numeric_limits<Nanos>::max();
  for (size_t i : failing_ops)
    if (!placed[i]) first_response = std::min(first_response, history[i].response_ns);
  const size_t tail = std::min<size_t>(longest_linearized.size(), 5);
  out += fmt::format("\nthe search stopped after {} of them; its last {}:", longest_linearized.size(), tail);
  for (size_t k = longest_linearized.size() - tail; k < longest_linearized.size(); ++k)
    out += fmt::format("\n  #{} {}", longest_linearized[k], describe(history[longest_linearized[k]]));
  out += "\nnone of these could come next:";
  for (size_t i : failing_ops)
    if (!placed[i] && history[i].invoke_ns <= first_response)
      out += fmt::format("\n  #{} {}", i, describe(history[i]));
  out += "\nthe whole partition:";
  for (size_t i : failing_ops) out += fmt::format("\n  #{} {}", i, describe(history[i]));
  out += fmt::format("\nlongest linearization found ({} of them), in order:", longest_linearized.size());
  for (size_t i : longest_linearized) out += fmt::format("\n  #{} {}", i, describe(history[i]));
  return out;
}

}  // namespace locus::check
