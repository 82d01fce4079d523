// Endpoint: completion matching; see endpoint.h.
#include "core/transport/endpoint.h"

#include <algorithm>
#include <string>

namespace locus {
namespace {
constexpr size_t kScratch = 32;
}

Endpoint::Endpoint(Env env, Nanos timeout) : env_(env), timeout_(timeout) {
  const TransportLimits lim = env_.transport->limits();
  parked_.reserve(lim.max_send_wr + lim.max_recv_wr + kScratch);
  scratch_.resize(kScratch);
  // No more requests than the send queue holds can be outstanding, so no
  // more can be abandoned and still complete.
  abandoned_.assign(std::max<size_t>(lim.max_send_wr, 1), 0);
}

void Endpoint::abandon(uint64_t wr_id) {
  for (size_t i = 0; i < parked_.size(); ++i) {
    if (parked_[i].op != Opcode::kRecv && parked_[i].wr_id == wr_id) {
      parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  if (abandoned_[abandoned_next_] == 0) ++abandoned_live_;  // else the oldest is forgotten
  abandoned_[abandoned_next_] = wr_id;
  abandoned_next_ = (abandoned_next_ + 1) % abandoned_.size();
}

bool Endpoint::take_abandoned(const Completion& c) {
  // The common case, nothing abandoned, costs one compare per completion.
  if (abandoned_live_ == 0 || c.op == Opcode::kRecv || c.wr_id == 0) return false;
  for (uint64_t& id : abandoned_) {
    if (id == c.wr_id) {
      id = 0;
      --abandoned_live_;
      return true;
    }
  }
  return false;
}

bool Endpoint::park(const Completion& c) {
  if (parked_.size() == parked_.capacity()) return false;  // cannot happen within limits
  parked_.push_back(c);
  return true;
}

template <typename Match>
StatusOr<Completion> Endpoint::await_matching(Match match, Nanos timeout, const char* what) {
  for (size_t i = 0; i < parked_.size(); ++i) {
    if (match(parked_[i])) {
      Completion c = parked_[i];
      parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
      return c;
    }
  }
  const Nanos deadline = env_.clock->now() + timeout;
  while (true) {
    const Nanos left = deadline - env_.clock->now();
    if (left <= 0) {
      return timeout_error(std::string("no completion for ") + what + " on node " +
                           std::to_string(node_id()) + " within " +
                           std::to_string(timeout / kMillisecond) + " ms");
    }
    const size_t n = env_.transport->wait(scratch_, left);
    std::optional<Completion> found;
    for (size_t i = 0; i < n; ++i) {
      if (!found && match(scratch_[i])) {
        found = scratch_[i];
      } else if (take_abandoned(scratch_[i])) {
        continue;  // its waiter gave up
      } else if (!park(scratch_[i])) {
        return internal_error("endpoint completion buffer overflow on node " +
                              std::to_string(node_id()));
      }
    }
    if (found) return *found;
  }
}

StatusOr<Completion> Endpoint::await(uint64_t wr_id) {
  auto c = await_matching([wr_id](const Completion& c) { return c.op != Opcode::kRecv && c.wr_id == wr_id; },
                          timeout_, "a work request");
  if (!c.is_ok() && c.status().code() == StatusCode::kTimeout) abandon(wr_id);
  return c;
}

StatusOr<Completion> Endpoint::await_recv() { return await_recv_for(timeout_); }

StatusOr<Completion> Endpoint::await_recv_for(Nanos timeout) {
  return await_matching([](const Completion& c) { return c.op == Opcode::kRecv; }, timeout,
                        "a receive");
}

Status Endpoint::execute(std::span<const WorkRequest> batch) {
  LOCUS_RETURN_IF_ERROR(env_.transport->post(batch));
  Status first_error;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto c = await(batch[i].wr_id);
    if (!c.is_ok()) {
      // Nobody waits for the rest of the batch either.
      for (size_t j = i + 1; j < batch.size(); ++j) abandon(batch[j].wr_id);
      return c.status();
    }
    if (!c->ok() && first_error.is_ok()) first_error = completion_error(*c);
  }
  return first_error;
}

}  // namespace locus
