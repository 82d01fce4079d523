// ClientSession: one client's connection to a design, turning YCSB
// operations into the design's own calls. Written once per design (its
// folder's session.h, or inside its driver.cc) and driven by the runner's
// one YCSB loop (core/runner/ycsb_loop.h) through index_driver.h.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/design/history_recording.h"
#include "core/metrics/op_stats.h"
#include "core/selector/selector.h"
#include "core/workload/workload.h"

namespace locus::design {

class ClientSession {
 public:
  virtual ~ClientSession() = default;
  // Carries out one operation on `key` (`value`: the record an update,
  // insert or read-modify-write writes; empty for reads and scans);
  // returns its status (NOT_FOUND on a read is an answer, not a failure)
  // and the name it is measured under: a string that outlives the session
  // (a literal), as the loop keeps it to find the operation's id again.
  virtual Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                         std::string_view* measured_as) = 0;
  // Adds the session's own counters (retries, ...) to `stats`.
  virtual void report(metrics::OpStats& stats) const = 0;
  // The client has ended, against servers that go on serving (a `locus
  // run` against `locus serve`): gives back what the servers hold for it
  // (Nessie's data-table slice and request rings), so that a later run's
  // clients can have it. No calls after it.
  virtual Status close() { return Status(); }
  // Sessions with a per-step selector: its choices so far (cumulative), so
  // the runner can report the server-side share per run and per window.
  virtual bool selector_choices(uint64_t* server, uint64_t* client) const {
    (void)server, (void)client;
    return false;
  }
  // [check]: sessions that can record their calls (history_recording.h)
  // say so, and record into `r` from then on.
  virtual bool can_record() const { return false; }
  void record_into(const Recording& r) { recording_ = r; }

 protected:
  Recording recording_;
};

// A session whose index client asks a per-step selector (Cell, Catfish).
// The selector is the base's, so it outlives the client a derived session
// holds.
class SelectorSession : public ClientSession {
 public:
  explicit SelectorSession(std::unique_ptr<selector::Selector> sel) : selector_(std::move(sel)) {}

  bool selector_choices(uint64_t* server, uint64_t* client) const override {
    *server = selector_->stats().server_choices;
    *client = selector_->stats().client_choices;
    return true;
  }
  const selector::SelectorStats& selector_stats() const { return selector_->stats(); }

 private:
  std::unique_ptr<selector::Selector> selector_;
};

// The op switch of a key-value index (Pilaf, Cell), under YCSB's names:
// reads are gets (NOT_FOUND is an answer, not a failure),
// updates and inserts puts of the whole record (a key-value store replaces
// the whole value), read-modify-writes a get then a put, and scans
// `scan(key, length, keys)` (`keys`: where to put the keys found when
// recording, else null). `store` has get(key) -> StatusOr<string_view>
// and put(key, value) -> Status; deletes are remove(key) -> Status (NOT_FOUND
// an answer), for a store that has it (its design sets IndexType::deletes).
// Each call is recorded when `recording` is on.
// `misses` (if given) counts the gets answered NOT_FOUND, which a session
// reports as "get_misses" (the verbs tier checks loaded records are found).
template <typename Store, typename Scan>
Status execute_key_value(Store& store, const workload::Op& op, std::string_view key, std::string_view value,
                         std::string_view* measured_as, const Scan& scan, const Recording& recording = {},
                         uint64_t* misses = nullptr) {
  using workload::OpKind;
  KvRecorder rec(recording);
  auto get = [&]() -> Status {
    const size_t t = rec.get(key);
    auto answer = store.get(key);
    rec.got(t, answer);
    if (answer.status().code() == StatusCode::kNotFound && misses != nullptr) ++*misses;
    return answer.status().code() == StatusCode::kNotFound ? Status() : answer.status();
  };
  auto put = [&]() -> Status {
    const size_t t = rec.put(key, value);
    Status s = store.put(key, value);
    rec.put_done(t, s);
    return s;
  };
  *measured_as = workload::op_kind_name(op.kind);
  switch (op.kind) {
    case OpKind::kRead: return get();
    case OpKind::kUpdate:
    case OpKind::kInsert: return put();
    case OpKind::kScan: {
      const size_t t = rec.scan(key, op.scan_length);
      std::vector<std::string> keys;
      Status s = scan(key, op.scan_length, recording.on() ? &keys : nullptr);
      rec.scanned(t, s, std::move(keys));
      return s;
    }
    case OpKind::kReadModifyWrite: {
      LOCUS_RETURN_IF_ERROR(get());
      return put();
    }
    case OpKind::kDelete: {
      if constexpr (requires {
                      { store.remove(key) } -> std::same_as<Status>;
                    }) {
        const size_t t = rec.remove(key);
        Status s = store.remove(key);
        rec.removed(t, s);
        return s.code() == StatusCode::kNotFound ? Status() : s;
      } else {
        return unimplemented("this design cannot delete (workload.deleteproportion)");
      }
    }
  }
  return internal_error("unknown operation");
}

// Adds each (name, value) to `stats` as a counter: for report().
inline void add_counters(metrics::OpStats& stats,
                         std::initializer_list<std::pair<std::string_view, uint64_t>> counters) {
  for (const auto& [name, value] : counters) stats.add(stats.counter(name), static_cast<int64_t>(value));
}

// For IndexDriver::report_mechanism: extra[name] = counter `num` / counter
// `den` of `stats`, left out when `den` is 0 (nothing to divide by: the
// run made no such operation).
inline void add_ratio(std::map<std::string, double>& extra, const std::string& name, const metrics::OpStats& stats,
                      std::string_view num, std::string_view den) {
  const int64_t d = stats.counter_value(den);
  if (d > 0) extra[name] = static_cast<double>(stats.counter_value(num)) / static_cast<double>(d);
}

}  // namespace locus::design
