// StaticMembership: see static_membership.h.
#include "core/membership/static_membership.h"

#include <algorithm>
#include <memory>
#include <set>

namespace locus::membership {

StatusOr<std::unique_ptr<StaticMembership>> StaticMembership::create(std::vector<Member> members) {
  std::set<std::string> names;
  for (const Member& m : members) {
    LOCUS_RETURN_IF_ERROR(check_member(m));
    if (!names.insert(m.name).second) return invalid_argument("member " + m.name + " is listed twice");
  }
  std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.name < b.name; });
  return std::unique_ptr<StaticMembership>(new StaticMembership(std::move(members)));
}

Status StaticMembership::register_member(const Member& member) {
  LOCUS_RETURN_IF_ERROR(check_member(member));
  for (const Member& m : members_) {
    if (m.name != member.name) continue;
    if (m.address == member.address) return Status();
    return invalid_argument("member " + member.name + " is listed at " + m.address + ", not " + member.address);
  }
  return invalid_argument("member " + member.name +
                          " is not in the cluster file (a static cluster's members are "
                          "fixed: list it there, or use ZooKeeper)");
}

StatusOr<std::vector<Member>> StaticMembership::members() { return members_; }

StatusOr<Versioned> StaticMembership::get(const std::string& key) {
  LOCUS_RETURN_IF_ERROR(check_key(key));
  std::lock_guard lock(mu_);
  auto it = values_.find(key);
  return it == values_.end() ? Versioned{} : it->second;
}

StatusOr<int64_t> StaticMembership::compare_and_set(const std::string& key, const std::string& value,
                                                    int64_t expected_version) {
  LOCUS_RETURN_IF_ERROR(check_key(key));
  int64_t written = 0;
  {
    std::lock_guard lock(mu_);
    Versioned& stored = values_[key];
    if (stored.version != expected_version) {
      return aborted_error(key + ": stale version " + std::to_string(expected_version) +
                           " (stored: " + std::to_string(stored.version) + ")");
    }
    stored.value = value;
    written = ++stored.version;
  }
  notify({Change::Kind::kValue, key});
  return written;
}

Status StaticMembership::watch(const std::string& key) { return check_key(key); }

}  // namespace locus::membership
