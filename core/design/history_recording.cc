// Recording a key-value session's calls: see history_recording.h.
#include "core/design/history_recording.h"

#include <utility>

namespace locus::design {

size_t KvRecorder::invoke(check::OpKind kind, std::string_view key, uint64_t value, uint32_t limit) {
  if (!r_.on()) return kOff;
  check::Operation op;
  op.kind = kind;
  op.key.assign(key);
  op.value = value;
  op.limit = limit;
  return r_.history->invoke(std::move(op), r_.clock->now());
}

void KvRecorder::got(size_t ticket, const StatusOr<std::string_view>& answer) {
  if (ticket == kOff) return;
  if (answer.is_ok()) {
    r_.history->op(ticket).result_value = check::value_digest(*answer);
    r_.history->respond(ticket, check::Outcome::kOk, r_.clock->now());
  } else if (answer.status().code() == StatusCode::kNotFound) {
    r_.history->respond(ticket, check::Outcome::kNotFound, r_.clock->now());
  } else {
    r_.history->discard(ticket);
  }
}

void KvRecorder::put_done(size_t ticket, const Status& status) {
  if (ticket != kOff && status.is_ok()) r_.history->respond(ticket, check::Outcome::kOk, r_.clock->now());
}

void KvRecorder::removed(size_t ticket, const Status& status) {
  if (ticket == kOff) return;
  if (status.is_ok()) r_.history->respond(ticket, check::Outcome::kOk, r_.clock->now());
  if (status.code() == StatusCode::kNotFound) r_.history->respond(ticket, check::Outcome::kNotFound, r_.clock->now());
}

void KvRecorder::scanned(size_t ticket, const Status& status, std::vector<std::string> keys) {
  if (ticket == kOff) return;
  if (!status.is_ok()) return r_.history->discard(ticket);
  r_.history->op(ticket).result_keys = std::move(keys);
  r_.history->respond(ticket, check::Outcome::kOk, r_.clock->now());
}

}  // namespace locus::design
