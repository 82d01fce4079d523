// Recording what a client session does, for the linearizability checker
// ([check] in a scenario; core/check). The runner hands a session a
// Recording (the client's own ClientHistory and its clock); the session
// records each call it makes on the index, as the index answered it. A
// call that failed before it could have had an effect is dropped; one whose
// effect is unknown (a put that failed or timed out) stays pending, so the
// checker may place it anywhere after its start or nowhere.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/check/history.h"
#include "core/common/status.h"
#include "core/transport/env.h"

namespace locus::design {

struct Recording {
  check::ClientHistory* history = nullptr;
  Clock* clock = nullptr;
  bool on() const { return history != nullptr; }
};

// Records the calls of a key-value index: gets, puts and scans.
class KvRecorder {
 public:
  static constexpr size_t kOff = static_cast<size_t>(-1);

  explicit KvRecorder(const Recording& r) : r_(r) {}

  size_t get(std::string_view key) { return invoke(check::OpKind::kGet, key, 0, 0); }
  size_t put(std::string_view key, std::string_view value) {
    return r_.on() ? invoke(check::OpKind::kPut, key, check::value_digest(value), 0) : kOff;
  }
  size_t scan(std::string_view from, uint32_t limit) { return invoke(check::OpKind::kScan, from, 0, limit); }
  size_t remove(std::string_view key) { return invoke(check::OpKind::kDelete, key, 0, 0); }

  // A get's answer: a value, NOT_FOUND, or an error (no effect: dropped).
  void got(size_t ticket, const StatusOr<std::string_view>& answer);
  // A put's: done, or unknown (left pending).
  void put_done(size_t ticket, const Status& status);
  // A delete's: done, NOT_FOUND (nothing to delete), or unknown (pending).
  void removed(size_t ticket, const Status& status);
  // A scan's keys, ascending; an error drops it.
  void scanned(size_t ticket, const Status& status, std::vector<std::string> keys);

 private:
  size_t invoke(check::OpKind kind, std::string_view key, uint64_t value, uint32_t limit);

  Recording r_;
};

}  // namespace locus::design
