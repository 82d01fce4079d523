// PerServer<T>: a selector's state for each server it has talked to, found
// by NodeId in constant time. Servers are few and seen early, so growing
// here is set-up, not the steady state. A reference from get() is valid
// until the next server is first seen.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/transport/types.h"

namespace locus::selector {

template <typename T>
class PerServer {
 public:
  // The state of `server`; constructed from `args` the first time.
  template <typename... Args>
  T& get(NodeId server, Args&&... args) {
    if (server >= index_of_.size()) index_of_.resize(static_cast<size_t>(server) + 1, -1);
    if (index_of_[server] < 0) {
      index_of_[server] = static_cast<int32_t>(states_.size());
      states_.emplace_back(std::forward<Args>(args)...);
    }
    return states_[static_cast<size_t>(index_of_[server])];
  }
  // The state of `server`, or none if it was never seen.
  const T* find(NodeId server) const {
    if (server >= index_of_.size() || index_of_[server] < 0) return nullptr;
    return &states_[static_cast<size_t>(index_of_[server])];
  }

 private:
  std::vector<T> states_;
  std::vector<int32_t> index_of_;  // NodeId -> index into states_, -1 if unseen
};

}  // namespace locus::selector
