// Membership's listener registry and the checks shared by implementations;
// see membership.h.
#include "core/membership/membership.h"

#include <algorithm>

namespace locus::membership {

int Membership::add_listener(Listener listener) {
  std::lock_guard lock(listeners_mu_);
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void Membership::remove_listener(int id) {
  {
    std::lock_guard lock(listeners_mu_);
    std::erase_if(listeners_, [id](const auto& l) { return l.first == id; });
  }
  // Waits out a notify() calling it now, so the caller may free what the
  // listener uses once this returns.
  std::lock_guard calling(calls_mu_);
}

void Membership::notify(const Change& change) {
  std::lock_guard calling(calls_mu_);
  std::vector<std::pair<int, Listener>> copy;
  {
    std::lock_guard lock(listeners_mu_);
    copy = listeners_;
  }
  // Outside listeners_mu_: a listener may call back into this object.
  for (const auto& [id, listener] : copy) listener(change);
}

Status check_key(const std::string& key) {
  const bool ok_chars = std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
  if (key.empty() || key.size() > 200 || !ok_chars || key == "." || key == "..") {
    return invalid_argument("'" + key +
                            "': a membership key or member name is 1-200 of letters, digits, '.', '-', "
                            "'_' (and not '.' or '..')");
  }
  return Status();
}

Status check_member(const Member& member) {
  LOCUS_RETURN_IF_ERROR(check_key(member.name));
  if (member.address.empty()) return invalid_argument("member " + member.name + ": empty address");
  return Status();
}

}  // namespace locus::membership
