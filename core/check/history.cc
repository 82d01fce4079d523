// The recorder's bookkeeping and the readable form of one operation.
#include "core/check/history.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/crc64.h"

namespace locus::check {

uint64_t value_digest(std::string_view bytes) { return crc64(bytes.data(), bytes.size()); }

void sequence_load(History& history, size_t n) {
  for (size_t i = 0; i < n && i < history.size(); ++i) {
    history[i].invoke_ns = -2 * static_cast<Nanos>(n - i);
    history[i].response_ns = history[i].invoke_ns + 1;
  }
}

namespace {

std::string describe_call(const Operation& op) {
  switch (op.kind) {
    case OpKind::kGet: return fmt::format("get({})", op.key);
    case OpKind::kPut: return fmt::format("put({}, {})", op.key, op.value);
    case OpKind::kDelete:
      return op.key.empty() ? fmt::format("delete(id {})", op.value) : fmt::format("delete({}, {})", op.key, op.value);
    case OpKind::kScan:
      return fmt::format("scan({}{}{}, limit {})", op.key, op.bounded ? " .. " : "", op.bounded ? op.end_key : "",
                         op.limit);
    case OpKind::kInsert:
      return op.key.empty() ? fmt::format("insert(id {}, [{},{} {},{}])", op.value, op.rect.x_min, op.rect.y_min,
                                          op.rect.x_max, op.rect.y_max)
                            : fmt::format("insert({}, {})", op.key, op.value);
    case OpKind::kSearch:
      return fmt::format("search([{},{} {},{}])", op.rect.x_min, op.rect.y_min, op.rect.x_max, op.rect.y_max);
    case OpKind::kLookup: return fmt::format("lookup({})", op.key);
  }
  return "?";
}

std::string describe_result(const Operation& op) {
  if (op.outcome == Outcome::kUnknown) return "?";
  if (op.outcome == Outcome::kNotFound) return "not found";
  switch (op.kind) {
    case OpKind::kGet: return fmt::format("{}", op.result_value);
    case OpKind::kScan: {
      if (op.result_ids.size() != op.result_keys.size()) return fmt::format("{{{}}}", fmt::join(op.result_keys, ", "));
      // A multimap's scan: each key with the payload it came with.
      std::string pairs;
      for (size_t i = 0; i < op.result_keys.size(); ++i) {
        pairs += fmt::format("{}{}:{}", i == 0 ? "" : ", ", op.result_keys[i], op.result_ids[i]);
      }
      return "{" + pairs + "}";
    }
    case OpKind::kSearch:
    case OpKind::kLookup: return fmt::format("{{{}}}", fmt::join(op.result_ids, ", "));
    default: return "ok";
  }
}

}  // namespace

std::string describe(const Operation& op) {
  const std::string end = op.pending() ? "inf)" : fmt::format("{}]", op.response_ns);
  return fmt::format("c{} {} -> {}  [{}, {}", op.client, describe_call(op), describe_result(op), op.invoke_ns, end);
}

size_t ClientHistory::invoke(Operation op, Nanos now_ns) {
  op.client = client_;
  op.invoke_ns = now_ns;
  op.response_ns = kNeverNs;
  op.outcome = Outcome::kUnknown;
  ops_.push_back(std::move(op));
  return ops_.size() - 1;
}

void ClientHistory::respond(size_t ticket, Outcome outcome, Nanos now_ns) {
  ops_[ticket].outcome = outcome;
  ops_[ticket].response_ns = now_ns;
}

ClientHistory& HistoryRecorder::client(uint32_t client) {
  std::lock_guard lock(mu_);
  for (auto& c : clients_)
    if (c->client() == client) return *c;
  clients_.push_back(std::make_unique<ClientHistory>(client));
  return *clients_.back();
}

History HistoryRecorder::merge() const {
  std::lock_guard lock(mu_);
  History out;
  for (const auto& c : clients_) {
    std::vector<bool> dropped(c->ops().size(), false);
    for (size_t t : c->discarded()) dropped[t] = true;
    for (size_t i = 0; i < c->ops().size(); ++i)
      if (!dropped[i]) out.push_back(c->ops()[i]);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Operation& a, const Operation& b) { return a.invoke_ns < b.invoke_ns; });
  return out;
}

}  // namespace locus::check
